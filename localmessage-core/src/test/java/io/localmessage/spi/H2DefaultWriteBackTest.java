package io.localmessage.spi;

import static io.localmessage.NewMessage.action;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.localmessage.LocalMessages;
import io.localmessage.MessageStatus;
import io.localmessage.testing.DatabaseTest;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.h2.api.ErrorCode;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The write-backs every dialect inherits unless it overrides them (H2 does not): {@link
 * Dialect#updateIfCurrent} and {@link Dialect#renewLeases}. What a dialect author and the engine
 * rely on: each is one short transaction on a connection that arrives and leaves in autocommit
 * mode, all or nothing, rows taken in id order, with {@link Dialect#beginShortTransaction} called
 * first.
 */
class H2DefaultWriteBackTest extends DatabaseTest {
  /** Far from any other number bound by the statements, so a bound id is recognised as one. */
  private static final long FIRST_ID = 1_000_001;

  private final RecordingDialect dialect = new RecordingDialect();
  private long a;
  private long b;
  private long c;

  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.H2);
  }

  /** The H2 dialect with the defaults of {@link Dialect}; records each short transaction begun. */
  private static final class RecordingDialect extends Dialect {
    private final Dialect h2 = Dialects.named("h2");

    /** Per call of {@link #beginShortTransaction}: whether the connection was in autocommit. */
    final List<Boolean> begunInAutocommit = new CopyOnWriteArrayList<>();

    @Override
    protected void beginShortTransaction(Connection c) throws SQLException {
      begunInAutocommit.add(c.getAutoCommit());
    }

    @Override
    public String name() {
      return h2.name();
    }

    @Override
    public String now() {
      return h2.now();
    }

    @Override
    public String plusMillis(String base) {
      return h2.plusMillis(base);
    }

    @Override
    public Instant readInstant(ResultSet rs, int column) throws SQLException {
      return h2.readInstant(rs, column);
    }

    @Override
    public OptionalLong insertIfAbsent(Connection c, String table, MessageRow row)
        throws SQLException {
      return h2.insertIfAbsent(c, table, row);
    }

    @Override
    public boolean insertInboxIfAbsent(
        Connection c, String inboxTable, String consumer, String messageId) throws SQLException {
      return h2.insertInboxIfAbsent(c, inboxTable, consumer, messageId);
    }

    @Override
    public List<ClaimedRow> claim(Connection c, String table, ClaimRequest request)
        throws SQLException {
      return h2.claim(c, table, request);
    }

    @Override
    public int deleteIfCurrent(Connection c, String table, long[] ids, long[] versions)
        throws SQLException {
      return h2.deleteIfCurrent(c, table, ids, versions);
    }

    @Override
    public String deleteBatchSql(String table, String keyColumns, String condition) {
      return h2.deleteBatchSql(table, keyColumns, condition);
    }
  }

  /** Three PENDING messages at version 0, due now, with ids from {@link #FIRST_ID}. */
  @BeforeEach
  void threeMessages() {
    dialect.begunInAutocommit.clear(); // one instance per class: the suite is PER_CLASS
    LocalMessages lm = fx.build(fx.builder());
    Sql.update(ds, "ALTER TABLE " + fx.table + " ALTER COLUMN id RESTART WITH " + FIRST_ID);
    a = fx.save(lm, action("t.a", "a").payload("a").build()).id();
    b = fx.save(lm, action("t.a", "b").payload("b").build()).id();
    c = fx.save(lm, action("t.a", "c").payload("c").build()).id();
    assertThat(List.of(a, b, c)).containsExactly(FIRST_ID, FIRST_ID + 1, FIRST_ID + 2);
  }

  @Test
  void aWriteBackCommitsTheMatchingRowsInIdOrderAndHandsTheConnectionBackInAutocommit()
      throws SQLException {
    List<Long> boundIds = new CopyOnWriteArrayList<>();
    try (Connection real = ds.getConnection()) {
      Connection conn = watched(real, boundIds, null);
      int matched =
          dialect.updateIfCurrent(
              conn,
              fx.table,
              List.of(
                  new Transition(c, 0, MessageStatus.DEAD, 0, "gave up", 0),
                  new Transition(b, 7, MessageStatus.SUCCEEDED, 0, null, 0), // stale version
                  new Transition(a, 0, MessageStatus.PENDING, 60_000, "retry", 0)));
      assertThat(matched).isEqualTo(2);
      assertThat(conn.getAutoCommit()).isTrue();
    }
    // rows taken in id order whatever order the outcomes came in: two write-backs cannot deadlock
    assertThat(boundIds).containsExactly(a, b, c);
    assertThat(dialect.begunInAutocommit).containsExactly(true);
    // committed: another connection sees it
    assertThat(fx.count("id = ? AND status = 2 AND version = 1 AND last_error = 'gave up'", c))
        .isOne();
    assertThat(fx.count("id = ? AND status = 0 AND version = 0", b)).isOne();
    assertThat(fx.count("id = ? AND status = 0 AND version = 1 AND last_error = 'retry'", a))
        .isOne();
  }

  @Test
  void aWriteBackThatFailsOnOneRowChangesNoRowAndHandsTheConnectionBackInAutocommit()
      throws SQLException {
    try (Connection real = ds.getConnection()) {
      Connection conn = watched(real, new ArrayList<>(), null);
      assertThatThrownBy(
              () ->
                  dialect.updateIfCurrent(
                      conn,
                      fx.table,
                      List.of(
                          new Transition(a, 0, MessageStatus.SUCCEEDED, 0, null, 0),
                          // longer than last_error's 1,024 characters: the database refuses it
                          new Transition(b, 0, MessageStatus.DEAD, 0, "x".repeat(1025), 0),
                          new Transition(c, 0, MessageStatus.DEAD, 0, "gave up", 0))))
          .isInstanceOf(SQLException.class);
      assertThat(conn.getAutoCommit()).isTrue();
    }
    assertThat(dialect.begunInAutocommit).containsExactly(true);
    assertThat(fx.count("status = 0 AND version = 0")).as("not one row changed").isEqualTo(3);
  }

  @Test
  void aRenewalMovesTheLeasesOfTheMatchingRowsOnlyAndReturnsTheirIds() throws SQLException {
    Set<Long> renewed;
    try (Connection real = ds.getConnection()) {
      Connection conn = watched(real, new ArrayList<>(), null);
      renewed =
          dialect.renewLeases(conn, fx.table, new long[] {c, b, a}, new long[] {0, 7, 0}, 60_000);
      assertThat(conn.getAutoCommit()).isTrue();
    }
    assertThat(renewed).containsExactlyInAnyOrder(a, c);
    assertThat(dialect.begunInAutocommit).containsExactly(true);
    String movedOn = "next_retry_at > DATEADD('SECOND', 30, CURRENT_TIMESTAMP) AND version = 0";
    assertThat(fx.count("id IN (?, ?) AND " + movedOn, a, c)).as("committed").isEqualTo(2);
    assertThat(fx.count("id = ? AND next_retry_at <= CURRENT_TIMESTAMP", b))
        .as("a message taken over keeps the lease its new owner set")
        .isOne();
  }

  @Test
  void aRenewalHoldsItsRowsBetweenComparingVersionsAndMovingTheLeases() throws SQLException {
    // another replica's write-back of message a, tried while the renewal is about to move the lease
    // it has just found current: it must wait, or the renewal would report a as still owned
    List<Throwable> raced = new ArrayList<>();
    Runnable race =
        () -> {
          try (Connection other = ds.getConnection();
              Statement st = other.createStatement()) {
            st.execute("SET LOCK_TIMEOUT 200");
            st.executeUpdate(
                "UPDATE " + fx.table + " SET status = 1, version = version + 1 WHERE id = " + a);
            raced.add(null);
          } catch (SQLException e) {
            raced.add(e);
          }
        };
    Set<Long> renewed;
    try (Connection real = ds.getConnection()) {
      renewed =
          dialect.renewLeases(
              watched(real, new ArrayList<>(), race),
              fx.table,
              new long[] {a, c},
              new long[] {0, 0},
              60_000);
    }
    assertThat(raced).hasSize(1);
    assertThat(raced.get(0))
        .as("the write-back waited for the renewal's lock")
        .isInstanceOf(SQLException.class)
        .extracting(e -> ((SQLException) e).getErrorCode())
        .isEqualTo(ErrorCode.LOCK_TIMEOUT_1);
    assertThat(renewed).containsExactlyInAnyOrder(a, c);
    // once the renewal committed, the write-back goes through and wins by its version
    race.run();
    assertThat(raced.get(1)).isNull();
    assertThat(fx.count("id = ? AND status = 1 AND version = 1", a)).isOne();
  }

  /**
   * {@code c} recording the message ids bound to each batch entry of its statements into {@code
   * ids}, and running {@code beforeUpdate} when an UPDATE statement is prepared.
   */
  private static Connection watched(Connection c, List<Long> ids, Runnable beforeUpdate) {
    return proxy(
        Connection.class,
        (p, m, args) -> {
          Object result = invoke(m, c, args);
          if (m.getName().equals("prepareStatement")) {
            if (beforeUpdate != null && ((String) args[0]).startsWith("UPDATE")) {
              beforeUpdate.run();
            }
            return statement((PreparedStatement) result, ids);
          }
          return result;
        });
  }

  private static PreparedStatement statement(PreparedStatement ps, List<Long> ids) {
    List<Long> entry = new ArrayList<>();
    return proxy(
        PreparedStatement.class,
        (p, m, args) -> {
          if (m.getName().equals("setLong") && (Long) args[1] >= FIRST_ID) {
            entry.add((Long) args[1]);
          } else if (m.getName().equals("addBatch")) {
            ids.addAll(entry);
            entry.clear();
          }
          return invoke(m, ps, args);
        });
  }

  @SuppressWarnings("unchecked")
  private static <T> T proxy(Class<T> type, java.lang.reflect.InvocationHandler h) {
    return (T)
        Proxy.newProxyInstance(
            H2DefaultWriteBackTest.class.getClassLoader(), new Class<?>[] {type}, h);
  }

  private static Object invoke(Method m, Object target, Object[] args) throws Throwable {
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
