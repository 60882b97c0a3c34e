package io.localmessage.console.internal;

/** The console was enabled with nothing to protect it; the application must not start. */
public final class ConsoleNotProtectedException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  ConsoleNotProtectedException(String message) {
    super(message);
  }
}
