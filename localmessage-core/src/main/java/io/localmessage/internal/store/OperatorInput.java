package io.localmessage.internal.store;

import io.localmessage.NewMessage;
import io.localmessage.Printable;
import io.localmessage.Texts;

/**
 * The checks of what an operator types: every operator action goes through them before any SQL,
 * whichever door it came through (admin API, console, actuator, command line).
 */
final class OperatorInput {
  static final int MAX_REASON = 512;
  static final int MAX_OPERATOR = 128;

  private OperatorInput() {}

  /** The biz type, checked as a save checks it. */
  static String bizType(String bizType) {
    return NewMessage.checkBizType(bizType);
  }

  /** Checked, then sanitized: the name goes into the audit table as it is returned here. */
  static String operator(String operator) {
    String clean = Texts.sanitize(operator, MAX_OPERATOR);
    if (clean == null || clean.isBlank() || operator.length() > MAX_OPERATOR) {
      throw new IllegalArgumentException(
          "operator must be a non-blank name of at most "
              + MAX_OPERATOR
              + " characters, was '"
              + Printable.escape(operator)
              + "'");
    }
    String bad = Printable.unprintable(operator);
    if (bad != null) {
      throw new IllegalArgumentException(
          "operator '" + Printable.escape(operator) + "' " + bad + ": names are printed in audits");
    }
    return clean;
  }

  /** Checked, then sanitized, like {@link #operator}. */
  static String reason(String reason) {
    String clean = Texts.sanitize(reason, MAX_REASON);
    if (clean == null || clean.isBlank()) {
      throw new IllegalArgumentException("a reason is required for operator actions");
    }
    if (reason.length() > MAX_REASON) {
      throw new IllegalArgumentException(
          "reason is " + reason.length() + " characters, longer than the limit " + MAX_REASON);
    }
    String bad = Printable.unprintable(reason);
    if (bad != null) {
      throw new IllegalArgumentException(
          "reason "
              + bad
              + ": line breaks, control and bidirectional characters are not allowed in audits");
    }
    return clean;
  }
}
