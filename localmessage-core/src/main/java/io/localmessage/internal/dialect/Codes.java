package io.localmessage.internal.dialect;

import io.localmessage.MessageKind;
import io.localmessage.MessageStatus;

/**
 * The values stored in the {@code status} and {@code kind} columns. The only place that maps them
 * to the enums; SQL text written by the dialects and stores uses the same numbers.
 */
public final class Codes {
  /** {@code status} of a PENDING message. */
  public static final int PENDING = 0;

  /** {@code status} of a SUCCEEDED message. */
  public static final int SUCCEEDED = 1;

  /** {@code status} of a DEAD message. */
  public static final int DEAD = 2;

  /** {@code status} of a CANCELED message. */
  public static final int CANCELED = 3;

  private Codes() {}

  /** The stored value of {@code status}. */
  public static int of(MessageStatus status) {
    return switch (status) {
      case PENDING -> PENDING;
      case SUCCEEDED -> SUCCEEDED;
      case DEAD -> DEAD;
      case CANCELED -> CANCELED;
    };
  }

  /** The status stored as {@code code}; throws for an unknown value. */
  public static MessageStatus status(int code) {
    return switch (code) {
      case PENDING -> MessageStatus.PENDING;
      case SUCCEEDED -> MessageStatus.SUCCEEDED;
      case DEAD -> MessageStatus.DEAD;
      case CANCELED -> MessageStatus.CANCELED;
      default -> throw new IllegalArgumentException("unknown message status code " + code);
    };
  }

  /** The stored value of {@code kind}. */
  public static int of(MessageKind kind) {
    return kind == MessageKind.ACTION ? 1 : 2;
  }

  /** The kind stored as {@code code}, or {@code null} for a value this version does not know. */
  public static MessageKind kindOrNull(int code) {
    return switch (code) {
      case 1 -> MessageKind.ACTION;
      case 2 -> MessageKind.EVENT;
      default -> null;
    };
  }

  /** The kind stored as {@code code}; throws for an unknown value. */
  public static MessageKind kind(int code) {
    MessageKind k = kindOrNull(code);
    if (k == null) {
      throw new IllegalArgumentException("unknown message kind code " + code);
    }
    return k;
  }
}
