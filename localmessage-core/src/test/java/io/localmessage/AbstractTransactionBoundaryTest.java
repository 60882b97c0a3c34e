package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.localmessage.inbox.Inbox;
import io.localmessage.testing.DatabaseTest;
import io.localmessage.testing.Sql;
import io.localmessage.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The transactions the library opens around the caller's work ({@code LocalMessages.inTransaction},
 * {@code Inbox.applyOnceInTransaction}; the HTTP endpoint's in its own module) end in exactly one
 * way: committed after the work succeeded and the database can still commit it, rolled back on
 * anything else. What the library reports is what the database did: never "done" for a commit the
 * database turned into a rollback (PostgreSQL after a caught error, InnoDB after a caught
 * deadlock), never a half-done effect committed by restoring autocommit after an {@link Error}.
 */
public abstract class AbstractTransactionBoundaryTest extends DatabaseTest {
  private LocalMessages lm;
  private Inbox inbox;

  /** One connection: what a failed transaction leaves on it is what the next caller gets. */
  @Override
  protected int poolSize() {
    return 2;
  }

  @BeforeEach
  void engineAndTables() {
    lm = fx.build(fx.builder());
    inbox = Inbox.create(ds, fx.table + "_inbox", null);
    Sql.update(ds, "DROP TABLE IF EXISTS booking");
    Sql.update(ds, "CREATE TABLE booking (id VARCHAR(64) PRIMARY KEY, amount INT)");
  }

  private static void book(Connection c, String id, int amount) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO booking VALUES (?, ?)")) {
      ps.setString(1, id);
      ps.setInt(2, amount);
      ps.executeUpdate();
    }
  }

  /** The "a duplicate key means already booked" idiom, without a savepoint. */
  private static void bookIgnoringDuplicates(Connection c, String id, int amount) {
    try {
      book(c, id, amount);
    } catch (SQLException alreadyBooked) {
      // the idiom under test: the error is caught and the work goes on
    }
  }

  private long bookings() {
    return Sql.count(ds, "SELECT COUNT(*) FROM booking");
  }

  private long messages() {
    return Sql.count(ds, "SELECT COUNT(*) FROM " + fx.table);
  }

  private long inboxRows() {
    return Sql.count(ds, "SELECT COUNT(*) FROM " + fx.table + "_inbox");
  }

  private boolean abortsOnAnyError() {
    return db.kind() == TestDatabase.Kind.POSTGRESQL;
  }

  @Test
  void inboxWorkThatCatchesAnErrorIsNotReportedAppliedWhenNothingCommitted() {
    Sql.update(ds, "INSERT INTO booking VALUES ('b-1', 10)");
    Boolean applied = null;
    Throwable thrown = null;
    try {
      applied =
          inbox.applyOnceInTransaction(
              "ledger",
              "evt-1",
              c -> {
                book(c, "b-2", 20);
                bookIgnoringDuplicates(c, "b-1", 10);
              });
    } catch (LocalMessageException e) {
      thrown = e;
    }
    if (abortsOnAnyError()) {
      assertThat(thrown).isInstanceOf(TransactionAbortedException.class);
      assertThat(applied).isNull();
      assertThat(bookings()).isEqualTo(1);
      assertThat(inboxRows()).isZero();
      // the redelivery applies it
      assertThat(inbox.applyOnceInTransaction("ledger", "evt-1", c -> book(c, "b-2", 20))).isTrue();
    } else {
      assertThat(applied).isTrue();
      assertThat(inboxRows()).isEqualTo(1);
    }
    assertThat(Sql.count(ds, "SELECT COUNT(*) FROM booking WHERE id = 'b-2'")).isEqualTo(1);
  }

  @Test
  void anErrorInInboxWorkRollsTheHalfDoneEffectBack() {
    OutOfMemoryError oom = new OutOfMemoryError("a decoder trusted a corrupt length");
    assertThatThrownBy(
            () ->
                inbox.applyOnceInTransaction(
                    "ledger",
                    "evt-2",
                    c -> {
                      book(c, "debit", -10);
                      throw oom;
                    }))
        .isSameAs(oom);
    assertThat(bookings()).isZero();
    assertThat(inboxRows()).isZero();
    // the retry applies it whole, not "duplicate"
    assertThat(
            inbox.applyOnceInTransaction(
                "ledger",
                "evt-2",
                c -> {
                  book(c, "debit", -10);
                  book(c, "credit", 10);
                }))
        .isTrue();
    assertThat(bookings()).isEqualTo(2);
  }

  @Test
  void inboxWorkThatRollsBackToASavepointAfterAnExpectedErrorCommitsOnEveryDatabase() {
    Sql.update(ds, "INSERT INTO booking VALUES ('b-1', 10)");
    assertThat(
            inbox.applyOnceInTransaction(
                "ledger",
                "evt-3",
                c -> {
                  book(c, "b-2", 20);
                  Savepoint sp = c.setSavepoint();
                  try {
                    book(c, "b-1", 10);
                  } catch (SQLException alreadyBooked) {
                    c.rollback(sp);
                  }
                }))
        .isTrue();
    assertThat(bookings()).isEqualTo(2);
    assertThat(inboxRows()).isEqualTo(1);
  }

  @Test
  void aCaughtStatementErrorIsNeverReportedAsACommitThatDidNotHappen() {
    Sql.update(ds, "INSERT INTO booking VALUES ('b-1', 10)");
    AtomicReference<Object> returned = new AtomicReference<>();
    Throwable thrown = null;
    try {
      returned.set(
          lm.inTransaction(
              c -> {
                book(c, "b-2", 20);
                SaveResult saved = lm.save(c, NewMessage.action("points.add", "o-1").build());
                // the last statement of the work: nothing after it tells the work it failed
                bookIgnoringDuplicates(c, "b-1", 10);
                return saved;
              }));
    } catch (LocalMessageException e) {
      thrown = e;
    }
    if (abortsOnAnyError()) {
      // PostgreSQL aborted the transaction at the caught error: its COMMIT is a ROLLBACK
      assertThat(thrown)
          .isInstanceOf(TransactionAbortedException.class)
          .hasMessageContaining("rolled back")
          .hasMessageContaining("savepoint");
      assertThat(returned.get()).isNull();
      assertThat(bookings()).isEqualTo(1);
      assertThat(messages()).isZero();
    } else {
      // MariaDB and H2 undo only the failed statement: the rest commits, as reported
      assertThat(thrown).isNull();
      assertThat(bookings()).isEqualTo(2);
      assertThat(messages()).isEqualTo(1);
    }
    // the connection is usable by the next caller
    lm.inTransaction(
        c -> {
          book(c, "b-3", 30);
          return null;
        });
    assertThat(Sql.count(ds, "SELECT COUNT(*) FROM booking WHERE id = 'b-3'")).isEqualTo(1);
  }

  @Test
  void theSavepointIdiomCommitsOnEveryDatabase() {
    Sql.update(ds, "INSERT INTO booking VALUES ('b-1', 10)");
    lm.inTransaction(
        c -> {
          book(c, "b-2", 20);
          Savepoint sp = c.setSavepoint();
          try {
            book(c, "b-1", 10);
          } catch (SQLException alreadyBooked) {
            c.rollback(sp);
          }
          return lm.save(c, NewMessage.action("points.add", "o-2").build());
        });
    assertThat(bookings()).isEqualTo(2);
    assertThat(messages()).isEqualTo(1);
  }

  @Test
  void anErrorInTransactionWorkRollsBackAndHandsTheConnectionBackClean() {
    StackOverflowError error = new StackOverflowError("deep");
    assertThatThrownBy(
            () ->
                lm.inTransaction(
                    c -> {
                      book(c, "b-1", 10);
                      lm.save(c, NewMessage.action("points.add", "o-3").build());
                      throw error;
                    }))
        .isSameAs(error);
    assertThat(bookings()).isZero();
    assertThat(messages()).isZero();
  }

  @Test
  void workMayNotEndTheLibrarysTransaction() {
    for (String how : new String[] {"commit", "rollback", "autocommit", "close"}) {
      Sql.update(ds, "DELETE FROM booking");
      assertThatThrownBy(
              () ->
                  lm.inTransaction(
                      c -> {
                        book(c, "b-" + how, 10);
                        try {
                          switch (how) {
                            case "commit" -> c.commit();
                            case "rollback" -> c.rollback();
                            case "autocommit" -> c.setAutoCommit(true);
                            default -> c.close();
                          }
                        } catch (SQLException refused) {
                          // swallowed: the library still must not commit half of the work
                        }
                        book(c, "c-" + how, 10);
                        return null;
                      }))
          .as(how)
          .isInstanceOf(TransactionAbortedException.class)
          .hasMessageContaining(how.equals("autocommit") ? "setAutoCommit" : how);
      assertThat(bookings()).as(how).isZero();
    }
  }

  @Test
  void aDeadlockTheWorkCaughtIsNeverCommittedAsIfTheWholeWorkRan() throws Exception {
    Sql.update(ds, "INSERT INTO booking VALUES ('x', 0)");
    Sql.update(ds, "INSERT INTO booking VALUES ('y', 0)");
    DataSource other = db.dataSource(1);
    CountDownLatch otherHoldsY = new CountDownLatch(1);
    CountDownLatch workHoldsX = new CountDownLatch(1);
    CompletableFuture<Void> rival =
        CompletableFuture.runAsync(
            () -> {
              try (Connection c = other.getConnection()) {
                c.setAutoCommit(false);
                // a heavier transaction: the database picks the work as the deadlock victim
                for (int i = 0; i < 50; i++) {
                  book(c, "heavy-" + i, i);
                }
                Sql.updateOn(c, "UPDATE booking SET amount = 2 WHERE id = 'y'");
                otherHoldsY.countDown();
                assertThat(workHoldsX.await(20, TimeUnit.SECONDS)).isTrue();
                try {
                  Sql.updateOn(c, "UPDATE booking SET amount = 2 WHERE id = 'x'");
                  c.commit();
                } catch (SQLException victim) {
                  c.rollback();
                }
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    Throwable thrown = null;
    try {
      lm.inTransaction(
          c -> {
            book(c, "first-half", 1);
            Sql.updateOn(c, "UPDATE booking SET amount = 1 WHERE id = 'x'");
            assertThat(otherHoldsY.await(20, TimeUnit.SECONDS)).isTrue();
            workHoldsX.countDown();
            try {
              Sql.updateOn(c, "UPDATE booking SET amount = 1 WHERE id = 'y'");
            } catch (SQLException deadlockOrTimeout) {
              // caught and ignored: the database may have rolled the whole transaction back
            }
            book(c, "second-half", 1);
            return null;
          });
    } catch (LocalMessageException e) {
      thrown = e;
    }
    rival.get(30, TimeUnit.SECONDS);
    long first = Sql.count(ds, "SELECT COUNT(*) FROM booking WHERE id = 'first-half'");
    long second = Sql.count(ds, "SELECT COUNT(*) FROM booking WHERE id = 'second-half'");
    // all or nothing, and reported as what happened
    assertThat(first).isEqualTo(second);
    assertThat(thrown == null).isEqualTo(first == 1);
  }

  @Test
  void anErrorCaughtOnTheUnwrappedConnectionIsStillSeenOnPostgres() {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        abortsOnAnyError(), "only PostgreSQL aborts a transaction at a caught error");
    Throwable thrown = null;
    try {
      lm.inTransaction(
          c -> {
            book(c, "b-raw", 10);
            // the watched view does not see this statement: the driver's own state must tell
            Connection raw = c.unwrap(Connection.class);
            try (PreparedStatement ps =
                raw.prepareStatement("INSERT INTO no_such_table VALUES (1)")) {
              ps.executeUpdate();
            } catch (SQLException swallowed) {
              // the idiom under test
            }
            return null;
          });
    } catch (LocalMessageException e) {
      thrown = e;
    }
    assertThat(thrown).isInstanceOf(TransactionAbortedException.class);
    assertThat(bookings()).isZero();
  }
}
