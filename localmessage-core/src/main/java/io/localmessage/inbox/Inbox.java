package io.localmessage.inbox;

import io.localmessage.LocalMessagesBuilder;
import io.localmessage.StoreException;
import io.localmessage.Texts;
import io.localmessage.TransactionRequiredException;
import io.localmessage.internal.store.Retention;
import io.localmessage.internal.store.Transactions;
import io.localmessage.spi.Dialect;
import io.localmessage.spi.Dialects;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * Consumer-side deduplication: a row {@code (consumer, message_id)} written in the same transaction
 * as the consumer's effect. If the transaction commits, the message counts as applied and every
 * later delivery of it is skipped; if it rolls back, neither the effect nor the row exists and the
 * next delivery applies it. This is what turns at-least-once delivery into exactly-once effect.
 *
 * <p>The dedup window is the inbox row's lifetime: rows older than the retention given to {@link
 * #purge(Duration)} are deleted, after which a very late duplicate would be applied again.
 */
public final class Inbox {
  /** The longest consumer name, in characters. */
  public static final int MAX_CONSUMER_LENGTH = 64;

  /** The longest message id, in characters. */
  public static final int MAX_MESSAGE_ID_LENGTH = 255;

  private final DataSource dataSource;
  private final Dialect dialect;
  private final String table;

  private Inbox(DataSource dataSource, Dialect dialect, String table) {
    this.dataSource = dataSource;
    this.dialect = dialect;
    this.table = table;
  }

  /** An inbox on the default table, dialect detected from the data source. */
  public static Inbox create(DataSource dataSource) {
    return create(dataSource, LocalMessagesBuilder.DEFAULT_INBOX_TABLE, null);
  }

  /** An inbox on {@code table}; {@code dialect} null means detect. */
  public static Inbox create(DataSource dataSource, String table, Dialect dialect) {
    Objects.requireNonNull(dataSource, "dataSource");
    LocalMessagesBuilder.checkTableName("inboxTable", table);
    return new Inbox(dataSource, dialect != null ? dialect : Dialects.detect(dataSource), table);
  }

  /** The dialect this inbox writes its rows with. */
  public Dialect dialect() {
    return dialect;
  }

  /** The work to apply once. */
  @FunctionalInterface
  public interface Work {
    /** Applies the effect through {@code connection}, in the inbox row's transaction. */
    void apply(Connection connection) throws Exception;
  }

  /**
   * Records {@code messageId} for {@code consumer} in the caller's transaction. Returns true when
   * it is new (apply the effect now, in the same transaction), false for a duplicate (skip it; the
   * transaction stays usable).
   */
  public boolean tryRecord(Connection connection, String consumer, String messageId) {
    Objects.requireNonNull(connection, "connection");
    check("consumer", consumer, MAX_CONSUMER_LENGTH);
    check("messageId", messageId, MAX_MESSAGE_ID_LENGTH);
    try {
      if (connection.getAutoCommit()) {
        throw new TransactionRequiredException(
            "the inbox row must be written in the same"
                + " transaction as the effect; this connection is in autocommit mode. Nothing was"
                + " written.");
      }
      return dialect.insertInboxIfAbsent(connection, table, consumer, messageId);
    } catch (SQLException e) {
      throw new StoreException(
          "recording inbox row '" + consumer + "' / '" + messageId + "' failed: " + e.getMessage(),
          e);
    }
  }

  /**
   * Runs {@code work} in the caller's transaction only if {@code messageId} is new for {@code
   * consumer}. Returns true when it ran, false for a duplicate.
   */
  public boolean applyOnce(Connection connection, String consumer, String messageId, Work work)
      throws Exception {
    if (!tryRecord(connection, consumer, messageId)) {
      return false;
    }
    work.apply(connection);
    return true;
  }

  /**
   * Opens a transaction on the inbox's data source, applies {@code work} once and commits. Returns
   * true when it ran, false for a duplicate. The transaction ends in exactly one way: committed
   * after the work returned, rolled back when it threw anything (errors included, which pass
   * through unchanged; checked exceptions come wrapped in {@code LocalMessageException}). Work that
   * caught an SQL error after which the database will not commit (any error on PostgreSQL, a
   * deadlock everywhere) gets {@link io.localmessage.TransactionAbortedException}, never true: run
   * a statement whose error is expected under a savepoint.
   */
  public boolean applyOnceInTransaction(String consumer, String messageId, Work work) {
    return Transactions.run(
        dataSource, dialect, "inbox work", c -> applyOnce(c, consumer, messageId, work));
  }

  /** Deletes rows older than {@code olderThan} in batches of 1,000: the end of their window. */
  public int purge(Duration olderThan) {
    Objects.requireNonNull(olderThan, "olderThan");
    return Retention.purgeInbox(dataSource, dialect, table, olderThan, 1000);
  }

  private static void check(String field, String value, int max) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(field + " must not be null or blank");
    }
    if (value.length() > max) {
      throw new IllegalArgumentException(
          field + " is " + value.length() + " characters, longer than the limit " + max);
    }
    String why = Texts.unstorable(value);
    if (why != null) {
      throw new IllegalArgumentException(field + " " + why);
    }
  }
}
