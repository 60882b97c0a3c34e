package io.localmessage.test;

import io.localmessage.LocalMessages;
import io.localmessage.LocalMessagesBuilder;
import io.localmessage.admin.MessageView;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * The messages a piece of work saved, for assertions: {@code SavedMessages.during(lm, ds, () ->
 * orders.place(order)).single("points.add")}. It reads the message table before and after the work,
 * so it sees what any code saved in between (through {@code save}, a Spring {@code
 * TransactionalMessages}, or your own SQL), committed; run one test at a time on the table. The
 * assertion methods throw {@link AssertionError} with the messages found.
 */
public final class SavedMessages {
  private final List<MessageView> messages;

  private SavedMessages(List<MessageView> messages) {
    this.messages = List.copyOf(messages);
  }

  /** The work whose saves are looked at. */
  @FunctionalInterface
  public interface Work {
    /** Does the work; anything it throws is rethrown by {@link SavedMessages#during}. */
    void run() throws Exception;
  }

  /** What {@code work} saved in {@code engine}'s default table ({@code local_message}). */
  public static SavedMessages during(LocalMessages engine, DataSource dataSource, Work work)
      throws Exception {
    return during(engine, dataSource, LocalMessagesBuilder.DEFAULT_TABLE, work);
  }

  /**
   * What {@code work} saved in the message table {@code table} of {@code engine}, read through
   * {@code dataSource}: every message with an id above the largest one before the work.
   */
  public static SavedMessages during(
      LocalMessages engine, DataSource dataSource, String table, Work work) throws Exception {
    Objects.requireNonNull(engine, "engine");
    Objects.requireNonNull(dataSource, "dataSource");
    Objects.requireNonNull(work, "work");
    LocalMessagesBuilder.checkTableName("table", table);
    long before = maxId(dataSource, table);
    work.run();
    List<MessageView> saved = new ArrayList<>();
    for (long id : idsAbove(dataSource, table, before)) {
      engine.admin().get(id).ifPresent(saved::add);
    }
    return new SavedMessages(saved);
  }

  /** Every message saved, in id order. */
  public List<MessageView> all() {
    return messages;
  }

  /** The messages of {@code bizType}, in id order. */
  public List<MessageView> ofType(String bizType) {
    return messages.stream().filter(m -> m.bizType().equals(bizType)).toList();
  }

  /** How many messages were saved. */
  public int size() {
    return messages.size();
  }

  /**
   * The one message of {@code bizType} that was saved.
   *
   * @throws AssertionError when none or more than one was
   */
  public MessageView single(String bizType) {
    List<MessageView> found = ofType(bizType);
    if (found.size() != 1) {
      throw new AssertionError(
          "expected one message of '"
              + bizType
              + "' to be saved, found "
              + found.size()
              + "; saved: "
              + describe());
    }
    return found.get(0);
  }

  /**
   * Asserts that nothing was saved.
   *
   * @throws AssertionError naming what was saved
   */
  public void assertNone() {
    if (!messages.isEmpty()) {
      throw new AssertionError("expected no message to be saved; saved: " + describe());
    }
  }

  private String describe() {
    if (messages.isEmpty()) {
      return "none";
    }
    return messages.stream()
        .map(m -> m.bizType() + "/" + m.idemKey() + " (id " + m.id() + ")")
        .collect(Collectors.joining(", "));
  }

  @Override
  public String toString() {
    return "SavedMessages[" + describe() + "]";
  }

  private static long maxId(DataSource ds, String table) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT MAX(id) FROM " + table);
        ResultSet rs = ps.executeQuery()) {
      return rs.next() ? rs.getLong(1) : 0;
    }
  }

  private static List<Long> idsAbove(DataSource ds, String table, long id) throws SQLException {
    List<Long> ids = new ArrayList<>();
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT id FROM " + table + " WHERE id > ? ORDER BY id")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ids.add(rs.getLong(1));
        }
      }
    }
    return ids;
  }
}
