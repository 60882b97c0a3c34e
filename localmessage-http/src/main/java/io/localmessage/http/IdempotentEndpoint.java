package io.localmessage.http;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import io.localmessage.PermanentFailure;
import io.localmessage.Printable;
import io.localmessage.http.internal.GroupCommit;
import io.localmessage.internal.store.Transactions;
import io.localmessage.spi.TracePropagation;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ready {@code com.sun.net.httpserver} handler that receives {@link HttpDelivery} requests: opens
 * a transaction, applies the work once per {@code Idempotency-Key} through {@link
 * IdempotentReceiver}, commits and answers.
 *
 * <table>
 *   <caption>Answers</caption>
 *   <tr><td>200 {@code {"result":"applied"}}</td><td>the work ran and committed</td></tr>
 *   <tr><td>200 {@code {"result":"duplicate"}}</td><td>the key was applied before; nothing ran</td></tr>
 *   <tr><td>400</td><td>missing, blank or too long {@code Idempotency-Key}, or one holding a
 *   control character (U+0000 included); nothing is written</td></tr>
 *   <tr><td>405</td><td>not POST or PUT</td></tr>
 *   <tr><td>413</td><td>body larger than the limit</td></tr>
 *   <tr><td>422</td><td>the work threw {@link PermanentFailure}: rolled back, the sender gives up</td></tr>
 *   <tr><td>500</td><td>anything else: rolled back, the sender retries</td></tr>
 * </table>
 *
 * <pre>{@code
 * server.createContext("/points", IdempotentEndpoint.create(dataSource,
 *     IdempotentReceiver.create(dataSource), "points", (conn, body, headers) -> award(conn, body)));
 * }</pre>
 *
 * <p>By default every request is one transaction. {@link #withGroupCommit(int, int)} lets requests
 * that arrive together share one: see there.
 */
public final class IdempotentEndpoint implements HttpHandler {
  private static final Logger log = LoggerFactory.getLogger(IdempotentEndpoint.class);

  public static final int DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

  /** The span of one received request, from its arrival to its answer. */
  public static final String SERVER_SPAN = "localmessage.http.receive";

  /** The effect of one request, applied through the open transaction's connection. */
  @FunctionalInterface
  public interface Work {
    /**
     * Applies the request. Throw {@link PermanentFailure} to reject it for good (422); anything
     * else rolls back and answers 500, so the sender tries again.
     */
    void apply(Connection connection, byte[] body, Headers requestHeaders) throws Exception;
  }

  /** The longest a request waits for the transaction it shares with others. */
  static final long GROUP_WAIT_MILLIS = 30_000;

  private final DataSource dataSource;
  private final IdempotentReceiver receiver;
  private final String consumer;
  private final Work work;
  private final int maxBodyBytes;
  private final GroupCommit group;
  private final TracePropagation tracing;

  private IdempotentEndpoint(
      DataSource dataSource,
      IdempotentReceiver receiver,
      String consumer,
      Work work,
      int maxBodyBytes,
      int maxRequests,
      int maxGroups,
      TracePropagation tracing) {
    this.dataSource = dataSource;
    this.receiver = receiver;
    this.consumer = consumer;
    this.work = work;
    this.maxBodyBytes = maxBodyBytes;
    this.group = maxRequests > 1 ? new GroupCommit(maxRequests, maxGroups, this::applyGroup) : null;
    this.tracing = tracing;
  }

  /** An endpoint applying {@code work} once per key for {@code consumer}. */
  public static IdempotentEndpoint create(
      DataSource dataSource, IdempotentReceiver receiver, String consumer, Work work) {
    Objects.requireNonNull(consumer, "consumer");
    if (consumer.isBlank()) {
      throw new IllegalArgumentException("consumer must not be blank");
    }
    return new IdempotentEndpoint(
        Objects.requireNonNull(dataSource, "dataSource"),
        Objects.requireNonNull(receiver, "receiver"),
        consumer,
        Objects.requireNonNull(work, "work"),
        DEFAULT_MAX_BODY_BYTES,
        1,
        1,
        TracePropagation.NONE);
  }

  /** The same endpoint with another body limit: 1 byte to 64 MiB. */
  public IdempotentEndpoint withMaxBodyBytes(int max) {
    if (max < 1 || max > 64 * 1024 * 1024) {
      throw new IllegalArgumentException("maxBodyBytes must be between 1 and 67108864, was " + max);
    }
    return new IdempotentEndpoint(
        dataSource,
        receiver,
        consumer,
        work,
        max,
        group == null ? 1 : group.maxRequests(),
        group == null ? 1 : group.maxGroups(),
        tracing);
  }

  /**
   * The same endpoint with group commit: requests that arrive while {@code maxGroups} (1 to 64)
   * transactions of this endpoint are already running share the next one, up to {@code maxRequests}
   * (2 to 1,000) per transaction. A request that finds fewer transactions running starts one at
   * once, taking along the requests that wait: at low load every request is a transaction of its
   * own, as without group commit; under load the transactions grow instead of the queue, and one
   * commit (one log flush) serves many requests. Each request runs under a savepoint of its own
   * ({@link IdempotentReceiver#receiveAll}): one whose work throws is rolled back alone and
   * answered 422 or 500 as usual; the others are answered 200 once their shared commit is done. If
   * that commit fails, every request of the group answers 500 and nothing of it is applied (the
   * senders retry; a commit whose answer was lost shows as duplicates then). Give the data source
   * {@code maxGroups} connections.
   */
  public IdempotentEndpoint withGroupCommit(int maxRequests, int maxGroups) {
    if (maxRequests < 2 || maxRequests > 1000) {
      throw new IllegalArgumentException(
          "maxRequests must be between 2 and 1000, was " + maxRequests);
    }
    if (maxGroups < 1 || maxGroups > 64) {
      throw new IllegalArgumentException("maxGroups must be between 1 and 64, was " + maxGroups);
    }
    return new IdempotentEndpoint(
        dataSource, receiver, consumer, work, maxBodyBytes, maxRequests, maxGroups, tracing);
  }

  /**
   * The same endpoint continuing the sender's trace: each POST or PUT is a {@value #SERVER_SPAN}
   * span (kind server), a child of the context in its {@code traceparent} header (the {@link
   * HttpDelivery}'s request span when the sender traces), current while the work runs, so what the
   * work does joins the sender's trace. Tags {@code consumer}; outcome the answer's status ({@code
   * 200} for applied and duplicate alike, with {@code result}).
   */
  public IdempotentEndpoint withTracing(TracePropagation tracing) {
    Objects.requireNonNull(tracing, "tracing");
    return new IdempotentEndpoint(
        dataSource,
        receiver,
        consumer,
        work,
        maxBodyBytes,
        group == null ? 1 : group.maxRequests(),
        group == null ? 1 : group.maxGroups(),
        TracePropagation.failSafe(tracing));
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    try {
      String method = exchange.getRequestMethod();
      if (!"POST".equals(method) && !"PUT".equals(method)) {
        exchange.getResponseHeaders().set("Allow", "POST, PUT");
        answer(exchange, 405, error("method " + method + " not allowed"));
        return;
      }
      String key = exchange.getRequestHeaders().getFirst(IdempotentReceiver.HEADER);
      try {
        IdempotentReceiver.checkKey(key);
      } catch (InvalidIdempotencyKeyException e) {
        answer(exchange, 400, error(e.getMessage()));
        return;
      }
      byte[] body = readBody(exchange.getRequestBody());
      if (body == null) {
        answer(exchange, 413, error("body larger than " + maxBodyBytes + " bytes"));
        return;
      }
      TracePropagation.Span span = received(exchange.getRequestHeaders(), key);
      String outcome = "500";
      try {
        outcome = apply(exchange, key, body, span);
      } finally {
        span.end(outcome, Character.isDigit(outcome.charAt(0)) ? "HTTP " + outcome : null);
      }
    } finally {
      exchange.close();
    }
  }

  private TracePropagation.Span received(Headers headers, String key) {
    if (tracing == TracePropagation.NONE) {
      return TracePropagation.Span.NOOP;
    }
    Map<String, String> carrier = new HashMap<>();
    headers.forEach(
        (name, values) -> {
          if (!values.isEmpty()) {
            carrier.put(name.toLowerCase(Locale.ROOT), values.get(0));
          }
        });
    return tracing.restore(
        new TracePropagation.Hop(
            SERVER_SPAN,
            TracePropagation.Hop.Kind.REQUEST,
            "receive " + consumer,
            Map.of("consumer", consumer),
            Map.of("idem_key", key)),
        carrier);
  }

  /** Applies the request and answers it: {@code applied}, {@code duplicate} or the error status. */
  private String apply(HttpExchange exchange, String key, byte[] body, TracePropagation.Span span)
      throws IOException {
    Work traced =
        span == TracePropagation.Span.NOOP
            ? work
            : (conn, b, h) -> {
              // on whichever thread applies it: a group commit's leader applies its group's
              try (TracePropagation.Scope in = span.makeCurrent()) {
                work.apply(conn, b, h);
              }
            };
    IdempotentReceiver.Result result;
    try {
      result = applyInTransaction(traced, key, body, exchange.getRequestHeaders());
    } catch (PermanentFailure e) {
      log.info(
          "event=receive_rejected consumer={} idem_key={} error={}",
          consumer,
          Printable.escape(key),
          Printable.escape(e.getMessage()));
      answer(exchange, 422, error(e.getMessage()));
      return "422";
    } catch (Exception e) {
      log.warn(
          "event=receive_failed consumer={} idem_key={} error={}",
          consumer,
          Printable.escape(key),
          Printable.escape(e.toString()));
      answer(exchange, 500, error("internal error"));
      return "500";
    }
    log.debug(
        "event=received consumer={} idem_key={} result={}",
        consumer,
        Printable.escape(key),
        result);
    answer(
        exchange,
        200,
        result == IdempotentReceiver.Result.APPLIED
            ? "{\"result\":\"applied\"}"
            : "{\"result\":\"duplicate\"}");
    return result == IdempotentReceiver.Result.APPLIED ? "applied" : "duplicate";
  }

  private IdempotentReceiver.Result applyInTransaction(
      Work work, String key, byte[] body, Headers headers) throws Exception {
    if (group != null) {
      IdempotentReceiver.Outcome o =
          group.apply(
              new IdempotentReceiver.Request(key, conn -> work.apply(conn, body, headers)),
              GROUP_WAIT_MILLIS);
      if (o.failed()) {
        throw o.failure();
      }
      return o.result();
    }
    try (Connection c = dataSource.getConnection()) {
      return Transactions.run(
          c,
          receiver.dialect(),
          "request work",
          conn -> receiver.receive(conn, key, consumer, w -> work.apply(w, body, headers)));
    }
  }

  /** One group's transaction: every request under its own savepoint, one commit. */
  private List<IdempotentReceiver.Outcome> applyGroup(List<IdempotentReceiver.Request> requests)
      throws Exception {
    try (Connection c = dataSource.getConnection()) {
      return Transactions.run(
          c,
          receiver.dialect(),
          "group work",
          conn -> receiver.receiveAll(conn, consumer, requests));
    }
  }

  /** The body, or null when it is longer than the limit. */
  private byte[] readBody(InputStream in) throws IOException {
    byte[] body = in.readNBytes(maxBodyBytes + 1);
    return body.length > maxBodyBytes ? null : body;
  }

  private static void answer(HttpExchange exchange, int status, String json) throws IOException {
    byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  private static String error(String message) {
    StringBuilder b = new StringBuilder("{\"error\":\"");
    for (char ch : message.toCharArray()) {
      switch (ch) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        default -> {
          if (ch < 0x20) {
            b.append(String.format("\\u%04x", (int) ch));
          } else {
            b.append(ch);
          }
        }
      }
    }
    return b.append("\"}").toString();
  }
}
