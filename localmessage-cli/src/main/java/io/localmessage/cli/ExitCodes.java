package io.localmessage.cli;

/** Exit codes scripts can rely on. */
public final class ExitCodes {
  /** Done. */
  public static final int OK = 0;

  /**
   * Nothing matched: unknown id, no dead letter of that type, a message not in a state to act on.
   */
  public static final int NOTHING_MATCHED = 1;

  /** Bad arguments (picocli's own usage errors use the same code). */
  public static final int USAGE = 2;

  /** The database could not be reached or a statement failed. */
  public static final int DATABASE = 3;

  /**
   * Refused because a message is being delivered right now (a replica holds its lease): pause the
   * type or wait for the outcome, then run the command again.
   */
  public static final int IN_FLIGHT = 4;

  private ExitCodes() {}
}
