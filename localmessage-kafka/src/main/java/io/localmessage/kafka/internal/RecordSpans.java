package io.localmessage.kafka.internal;

import io.localmessage.kafka.KafkaInboxConsumer;
import io.localmessage.spi.TracePropagation;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * The {@code localmessage.inbox} spans of one transaction's records: each a child of the context in
 * its record's headers, current while its handler runs, ended once the transaction's fate is known.
 * Without tracing, every call does nothing. Not API.
 */
final class RecordSpans {
  private static final RecordSpans NONE = new RecordSpans(null, null, 0);

  private final TracePropagation tracing;
  private final String consumer;
  private final TracePropagation.Span[] spans;

  private RecordSpans(TracePropagation tracing, String consumer, int n) {
    this.tracing = tracing;
    this.consumer = consumer;
    this.spans = new TracePropagation.Span[n];
  }

  static RecordSpans of(TracePropagation tracing, String consumer, int records) {
    return tracing == TracePropagation.NONE ? NONE : new RecordSpans(tracing, consumer, records);
  }

  /** Starts record {@code k}'s span and makes it current until the scope is closed. */
  TracePropagation.Scope applying(int k, ConsumerRecord<byte[], byte[]> r, String id) {
    if (tracing == null) {
      return TracePropagation.Scope.NOOP;
    }
    spans[k] = tracing.restore(hop(r, id), carrier(r));
    return spans[k].makeCurrent();
  }

  /** Record {@code k} was a duplicate: its handler did not run. */
  void duplicate(int k, ConsumerRecord<byte[], byte[]> r, String id) {
    if (tracing != null) {
      tracing.restore(hop(r, id), carrier(r)).end("duplicate", null);
    }
  }

  /** Record {@code k}'s handler threw: the transaction is rolled back. */
  void failed(int k, String error) {
    if (tracing != null && spans[k] != null) {
      spans[k].end("failed", error);
      spans[k] = null;
    }
  }

  /** The transaction committed: every record whose handler ran is applied. */
  void committed() {
    endAll("applied");
  }

  /** The transaction was rolled back (or its commit's result is unknown). */
  void rolledBack() {
    endAll("rolled_back");
  }

  private void endAll(String outcome) {
    if (tracing == null) {
      return;
    }
    for (int k = 0; k < spans.length; k++) {
      if (spans[k] != null) {
        spans[k].end(outcome, null);
        spans[k] = null;
      }
    }
  }

  private TracePropagation.Hop hop(ConsumerRecord<byte[], byte[]> r, String id) {
    return new TracePropagation.Hop(
        KafkaInboxConsumer.INBOX_SPAN,
        TracePropagation.Hop.Kind.MESSAGE,
        "inbox " + consumer,
        Map.of("consumer", consumer, "topic", r.topic()),
        Map.of(
            "message_id",
            id,
            "partition",
            Integer.toString(r.partition()),
            "offset",
            Long.toString(r.offset())));
  }

  /** The record's headers as text, the last value of a name winning. */
  private static Map<String, String> carrier(ConsumerRecord<byte[], byte[]> r) {
    Map<String, String> m = new HashMap<>();
    for (Header h : r.headers()) {
      if (h.value() != null) {
        m.put(h.key(), new String(h.value(), StandardCharsets.UTF_8));
      }
    }
    return m;
  }
}
