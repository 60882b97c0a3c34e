package io.localmessage.internal.engine;

import io.localmessage.HandlerConfig;
import io.localmessage.MessageStatus;
import io.localmessage.Outcome;
import io.localmessage.Texts;
import io.localmessage.spi.ClaimedRow;
import io.localmessage.spi.EngineListener.Result;
import io.localmessage.spi.ErrorRedactor;
import io.localmessage.spi.Transition;
import java.time.Duration;

/** Turns a handler outcome into the version-checked write-back of the message's state machine. */
final class OutcomePolicy {
  static final int MAX_ERROR_LENGTH = 1024;

  private final ErrorRedactor redactor;

  OutcomePolicy(ErrorRedactor redactor) {
    this.redactor = redactor;
  }

  /**
   * The decision for one message: what to write, how to count it ({@code null}: not a delivery
   * result) and the error recorded.
   */
  record Decision(WriteBack writeBack, Result result, String error) {}

  Decision decide(
      HandlerConfig config,
      ClaimedRow row,
      Outcome outcome,
      boolean timedOut,
      Duration handlerTime) {
    if (timedOut) {
      return retry(
          config,
          row,
          "handler timed out after " + config.handlerTimeout(),
          Result.TIMEOUT,
          handlerTime);
    }
    switch (outcome.type()) {
      case SUCCESS:
        if (config.retainSucceeded().isZero()) {
          return new Decision(new WriteBack.Delete(row.id(), row.version()), Result.SUCCESS, null);
        }
        return new Decision(
            transition(row, MessageStatus.SUCCEEDED, 0, null, 0), Result.SUCCESS, null);
      case PERMANENT:
        String permanent = clean(outcome.error());
        return new Decision(
            transition(row, MessageStatus.DEAD, 0, permanent, 0), Result.PERMANENT, permanent);
      case RETRY_AFTER:
        return retryAfter(config, row, outcome, handlerTime);
      case RETRY:
      default:
        return retry(config, row, outcome.error(), Result.RETRY, handlerTime);
    }
  }

  private Decision retry(
      HandlerConfig config, ClaimedRow row, String error, Result result, Duration handlerTime) {
    String cleaned = clean(error);
    if (row.attempts() >= row.maxAttempts()) {
      String dead =
          clean(
              "attempts exhausted (" + row.attempts() + "/" + row.maxAttempts() + "): " + cleaned);
      return new Decision(transition(row, MessageStatus.DEAD, 0, dead, 0), Result.EXHAUSTED, dead);
    }
    Duration delay = config.backoff().delayAfter(row.attempts());
    if (pastMaxAge(config, row, handlerTime, delay)) {
      String dead = clean("max age " + config.maxAge() + " passed: " + cleaned);
      return new Decision(transition(row, MessageStatus.DEAD, 0, dead, 0), Result.EXHAUSTED, dead);
    }
    return new Decision(
        transition(row, MessageStatus.PENDING, delay.toMillis(), cleaned, 0), result, cleaned);
  }

  private Decision retryAfter(
      HandlerConfig config, ClaimedRow row, Outcome outcome, Duration handlerTime) {
    String cleaned = clean(outcome.error());
    boolean counts = config.retryAfterCountsAttempt();
    if (counts && row.attempts() >= row.maxAttempts()) {
      String dead =
          clean(
              "attempts exhausted (" + row.attempts() + "/" + row.maxAttempts() + "): " + cleaned);
      return new Decision(transition(row, MessageStatus.DEAD, 0, dead, 0), Result.EXHAUSTED, dead);
    }
    if (pastMaxAge(config, row, handlerTime, outcome.delay())) {
      String dead = clean("max age " + config.maxAge() + " passed: " + cleaned);
      return new Decision(transition(row, MessageStatus.DEAD, 0, dead, 0), Result.EXHAUSTED, dead);
    }
    // a "not yet" that does not count gives the attempt counted at claim back
    return new Decision(
        transition(
            row, MessageStatus.PENDING, outcome.delay().toMillis(), cleaned, counts ? 0 : -1),
        Result.RETRY_AFTER,
        cleaned);
  }

  /**
   * The delivery did not count: due again at once with its attempt given back (an execution that a
   * shutdown interrupted). Not a delivery result, so {@link Decision#result()} is null.
   */
  Decision givenBack(ClaimedRow row, String why) {
    String cleaned = clean(why);
    return new Decision(transition(row, MessageStatus.PENDING, 0, cleaned, -1), null, cleaned);
  }

  private static boolean pastMaxAge(
      HandlerConfig config, ClaimedRow row, Duration handlerTime, Duration delay) {
    if (config.maxAge() == null) {
      return false;
    }
    Duration ageAtNextTry =
        Duration.between(row.ageFrom(), row.dbNow()).plus(handlerTime).plus(delay);
    return ageAtNextTry.compareTo(config.maxAge()) > 0;
  }

  private static WriteBack transition(
      ClaimedRow row, MessageStatus status, long delayMillis, String error, int attemptsDelta) {
    return new WriteBack.Update(
        new Transition(row.id(), row.version(), status, delayMillis, error, attemptsDelta));
  }

  /** Redacts, then makes it storable: no U+0000, no lone surrogates, at most the column size. */
  String clean(String error) {
    String e = error == null ? "unknown error" : error;
    String redacted;
    try {
      redacted = redactor.redact(e);
    } catch (RuntimeException ex) {
      redacted = "(error redactor failed: " + ex.getClass().getName() + ")";
    }
    if (redacted == null) {
      redacted = "";
    }
    return Texts.sanitize(redacted, MAX_ERROR_LENGTH);
  }
}
