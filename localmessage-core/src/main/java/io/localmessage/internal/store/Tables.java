package io.localmessage.internal.store;

/**
 * The names of one engine's tables: the message table, its control and audit tables (its name plus
 * {@code _control} and {@code _audit}) and the inbox.
 */
public record Tables(String message, String control, String audit, String inbox) {

  /** The tables of message table {@code message} and inbox {@code inbox}. */
  public static Tables of(String message, String inbox) {
    return new Tables(message, message + "_control", message + "_audit", inbox);
  }
}
