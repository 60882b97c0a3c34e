package io.localmessage.http;

import io.localmessage.Texts;
import io.localmessage.TransactionAbortedException;
import io.localmessage.inbox.Inbox;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * The receiving side of {@link HttpDelivery}, for any web framework: applies the effect of a
 * request once per {@code (consumer, Idempotency-Key)}. The key is recorded in the inbox through
 * the caller's connection, in the caller's transaction, together with the effect: if the
 * transaction commits, every later delivery of that key is a {@link Result#DUPLICATE}; if it rolls
 * back, neither the effect nor the record exists and the next delivery applies it.
 *
 * <pre>{@code
 * // inside the endpoint's transaction
 * Result r = receiver.receive(conn, request.header("Idempotency-Key"), "points", c -> award(c, body));
 * return 200; // APPLIED or DUPLICATE: the sender may stop either way
 * }</pre>
 *
 * <p>Answer 200 for both results: a duplicate means the effect is already there. Use one consumer
 * name per endpoint (and per sender, if several services send keys that could collide). The dedup
 * window is the inbox row's lifetime (see {@link Inbox#purge}).
 *
 * <p><b>Tracing.</b> A traced {@link HttpDelivery} sends {@code traceparent} (its request span, a
 * child of the message's execution). A Spring MVC endpoint continues it with nothing from this
 * library: with micrometer-tracing and a bridge, Spring Boot's server observation reads {@code
 * traceparent} and makes the request's span current, so {@code receive} and the work inside it
 * (their SQL, their own saves) join the sender's trace. On the JDK's server, {@link
 * IdempotentEndpoint#withTracing} does the same. In a {@code @Transactional} {@code @PostMapping}
 * method:
 *
 * <pre>{@code
 * Connection conn = DataSourceUtils.getConnection(dataSource); // the transaction's connection
 * Result r = receiver.receive(conn, key, "points", c -> points.award(c, award)); // in the trace
 * }</pre>
 */
public final class IdempotentReceiver {
  /** The request header that carries the key (IETF httpapi draft name). */
  public static final String HEADER = HttpDelivery.IDEMPOTENCY_KEY_HEADER;

  /** What {@link #receive} did. */
  public enum Result {
    /** The key was new: the work ran in the caller's transaction. */
    APPLIED,
    /** The key was seen before: the work did not run. */
    DUPLICATE
  }

  /** One request of a batch: its key and its work. */
  public record Request(String idempotencyKey, Inbox.Work work) {
    public Request {
      Objects.requireNonNull(work, "work");
    }
  }

  /**
   * What {@link #receiveAll} did with one request: {@code APPLIED} or {@code DUPLICATE}, or {@code
   * failure} (its work threw, or its key was unusable: an {@link InvalidIdempotencyKeyException});
   * a failed request left nothing behind.
   */
  public record Outcome(Result result, Exception failure) {
    public boolean failed() {
      return failure != null;
    }
  }

  private final Inbox inbox;

  private IdempotentReceiver(Inbox inbox) {
    this.inbox = inbox;
  }

  /** The dialect of the inbox: the transactions around its work are the library's. */
  io.localmessage.spi.Dialect dialect() {
    return inbox.dialect();
  }

  /** A receiver on {@code inbox} (its table and dialect). */
  public static IdempotentReceiver create(Inbox inbox) {
    return new IdempotentReceiver(Objects.requireNonNull(inbox, "inbox"));
  }

  /** A receiver on the default inbox table of {@code dataSource}. */
  public static IdempotentReceiver create(DataSource dataSource) {
    return create(Inbox.create(dataSource));
  }

  /**
   * Runs {@code work} through {@code connection} only if {@code idempotencyKey} is new for {@code
   * consumer}, recording it in the same transaction. Never commits or rolls back: the caller does,
   * and must roll back when this throws.
   *
   * @throws InvalidIdempotencyKeyException when the key is null, blank, longer than {@value
   *     Inbox#MAX_MESSAGE_ID_LENGTH} characters, or holds a control character (U+0000 included) or
   *     a lone surrogate (nothing is recorded, no SQL runs)
   * @throws io.localmessage.TransactionRequiredException when {@code connection} is in autocommit
   *     mode (nothing is recorded)
   * @throws Exception whatever {@code work} throws
   */
  public Result receive(
      Connection connection, String idempotencyKey, String consumer, Inbox.Work work)
      throws Exception {
    Objects.requireNonNull(connection, "connection");
    Objects.requireNonNull(work, "work");
    checkKey(idempotencyKey);
    return inbox.applyOnce(connection, consumer, idempotencyKey, work)
        ? Result.APPLIED
        : Result.DUPLICATE;
  }

  /**
   * Applies many requests in the caller's transaction, each once per {@code (consumer, key)}, each
   * on its own: every request's inbox row and work run under a savepoint of their own, so a request
   * whose work throws is rolled back alone (its outcome holds the exception) while the others stay.
   * A key seen twice in the list is applied once (the second is a {@code DUPLICATE}, unless the
   * first failed). Returns one outcome per request, in order. Never commits: the caller commits
   * once for all of them, which is what makes a batch cheaper than one transaction per request. If
   * the commit fails, none of them was applied; the senders retry and the inbox sorts them out.
   *
   * @throws io.localmessage.TransactionRequiredException when {@code connection} is in autocommit
   *     mode (nothing is recorded)
   * @throws SQLException when the database fails outside the works (a savepoint cannot be set or
   *     rolled back): roll the whole transaction back
   */
  public List<Outcome> receiveAll(Connection connection, String consumer, List<Request> requests)
      throws SQLException {
    Objects.requireNonNull(connection, "connection");
    Objects.requireNonNull(requests, "requests");
    if (connection.getAutoCommit()) {
      throw new io.localmessage.TransactionRequiredException(
          "the inbox rows must be written in the same transaction as the effects; this connection"
              + " is in autocommit mode. Nothing was written.");
    }
    List<Outcome> out = new ArrayList<>(requests.size());
    for (Request r : requests) {
      try {
        checkKey(r.idempotencyKey());
      } catch (InvalidIdempotencyKeyException e) {
        out.add(new Outcome(null, e));
        continue;
      }
      Savepoint sp = connection.setSavepoint();
      Result result;
      try {
        result =
            inbox.applyOnce(connection, consumer, r.idempotencyKey(), r.work())
                ? Result.APPLIED
                : Result.DUPLICATE;
      } catch (Exception e) {
        connection.rollback(sp);
        out.add(new Outcome(null, e));
        continue;
      }
      try {
        connection.releaseSavepoint(sp);
        out.add(new Outcome(result, null));
      } catch (SQLException aborted) {
        // the work caught an error after which the database will not commit (PostgreSQL): its
        // request is undone, the others go on
        connection.rollback(sp);
        out.add(
            new Outcome(
                null,
                new TransactionAbortedException(
                    "the work of "
                        + r.idempotencyKey()
                        + " caught an SQL error after which the database would not commit; its"
                        + " effect was rolled back. Run a statement whose error is expected under"
                        + " a savepoint",
                    aborted)));
      }
    }
    return out;
  }

  /**
   * Returns {@code key} when it is usable; otherwise throws {@link InvalidIdempotencyKeyException}.
   */
  public static String checkKey(String key) {
    if (key == null) {
      throw new InvalidIdempotencyKeyException("missing " + HEADER + " header");
    }
    if (key.isBlank()) {
      throw new InvalidIdempotencyKeyException(HEADER + " header is blank");
    }
    if (key.length() > Inbox.MAX_MESSAGE_ID_LENGTH) {
      throw new InvalidIdempotencyKeyException(
          HEADER
              + " is "
              + key.length()
              + " characters, longer than the limit "
              + Inbox.MAX_MESSAGE_ID_LENGTH);
    }
    // refused before any SQL: PostgreSQL would abort the caller's transaction on U+0000, and a
    // control character in a key only ever serves to forge log lines or terminal output
    String unstorable = Texts.unstorable(key);
    if (unstorable != null) {
      throw new InvalidIdempotencyKeyException(HEADER + " " + unstorable);
    }
    for (int i = 0; i < key.length(); i++) {
      if (Character.isISOControl(key.charAt(i))) {
        throw new InvalidIdempotencyKeyException(
            String.format(
                "%s contains the control character U+%04X at index %d",
                HEADER, (int) key.charAt(i), i));
      }
    }
    return key;
  }
}
