package io.localmessage.spring.internal;

/**
 * The starter refused to start the application: a {@code localmessage.*} setting is wrong or the
 * database is not ready for the engine. Carries what is wrong and what to do, for Boot's
 * "APPLICATION FAILED TO START" banner. Not API.
 */
public final class StartupCheckException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  private final String action;

  public StartupCheckException(String description, String action) {
    this(description, action, null);
  }

  public StartupCheckException(String description, String action, Throwable cause) {
    super(description, cause);
    this.action = action;
  }

  /** What the user can do about it. */
  public String action() {
    return action;
  }
}
