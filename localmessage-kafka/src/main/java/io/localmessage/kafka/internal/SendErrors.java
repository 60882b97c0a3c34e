package io.localmessage.kafka.internal;

import io.localmessage.Outcome;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.errors.UnsupportedVersionException;

/**
 * Classifies a failed send into the message's outcome. Permanent: what no retry can fix for this
 * record (too large, cannot be serialized, not authorized, invalid topic name, rejected by the
 * broker as invalid). Everything else, including errors this class does not know, is retried with
 * the type's backoff, bounded by its attempts and max age. Not API.
 */
public final class SendErrors {
  private SendErrors() {}

  public static Outcome classify(Throwable error, String topic) {
    Throwable e = unwrap(error);
    String where = "topic '" + topic + "': ";
    if (e instanceof RecordTooLargeException || e instanceof RecordBatchTooLargeException) {
      return Outcome.permanent(
          "record too large for "
              + where
              + Outcome.describe(e)
              + " (raise the producer's max.request.size and the topic's max.message.bytes, or"
              + " publish a smaller event)");
    }
    if (e instanceof SerializationException) {
      return Outcome.permanent("cannot serialize the record for " + where + Outcome.describe(e));
    }
    if (e instanceof AuthorizationException) {
      return Outcome.permanent(
          "not authorized to write to "
              + where
              + Outcome.describe(e)
              + " (grant the ACL, then requeue the dead tickets)");
    }
    if (e instanceof InvalidTopicException) {
      return Outcome.permanent("invalid " + where + Outcome.describe(e));
    }
    if (e instanceof InvalidRecordException) {
      return Outcome.permanent("the broker rejected the record for " + where + Outcome.describe(e));
    }
    if (e instanceof UnknownTopicOrPartitionException || isMissingFromMetadata(e)) {
      return Outcome.retry(
          where
              + "the topic does not exist (or the broker is unreachable) and was not created:"
              + " create it, or enable auto.create.topics.enable on the broker; retrying ("
              + Outcome.describe(e)
              + ")");
    }
    if (e instanceof TimeoutException) {
      return Outcome.retry(
          "no acknowledgement from the broker for "
              + where
              + Outcome.describe(e)
              + " (broker down, unreachable or too slow; the record may still have arrived and is"
              + " sent again: consumers dedupe by lm-event-id)");
    }
    return Outcome.retry("send failed for " + where + Outcome.describe(e));
  }

  /**
   * Errors after which the producer can no longer be used (or, for an out-of-order sequence, only
   * at the risk of reordering): the client's fatal errors of an idempotent producer, and a send on
   * a producer that was closed. Looked for along the causes, since a producer in a fatal state
   * answers later sends with a {@code KafkaException} caused by the first error.
   */
  public static boolean isProducerFatal(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof OutOfOrderSequenceException
          || t instanceof ProducerFencedException
          || t instanceof InvalidProducerEpochException
          || t instanceof ClusterAuthorizationException
          || t instanceof UnsupportedVersionException
          || (t instanceof IllegalStateException
              && t.getMessage() != null
              && t.getMessage().contains("producer has been closed"))) {
        return true;
      }
    }
    return false;
  }

  /** Errors that fail every record of the topic alike, so its other records are not even sent. */
  public static boolean isTopicWide(Throwable error) {
    Throwable e = unwrap(error);
    return e instanceof UnknownTopicOrPartitionException
        || e instanceof InvalidTopicException
        || e instanceof TopicAuthorizationException
        || isMissingFromMetadata(e);
  }

  private static boolean isMissingFromMetadata(Throwable e) {
    // the producer's metadata wait: "Topic x not present in metadata after n ms."
    return e instanceof TimeoutException
        && e.getMessage() != null
        && e.getMessage().contains("not present in metadata");
  }

  private static Throwable unwrap(Throwable e) {
    Throwable t = e;
    while ((t instanceof java.util.concurrent.ExecutionException
            || t instanceof java.util.concurrent.CompletionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
