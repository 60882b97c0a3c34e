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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The transactions the library opens around the caller's work ({@code Inbox.applyOnceInTransaction}
 * here; the HTTP endpoint's in its own module) end in exactly one way: committed after the work
 * succeeded and the database can still commit it, rolled back on anything else. What the library
 * reports is what the database did: never "done" for a commit the database turned into a rollback
 * (PostgreSQL after a caught error, InnoDB after a caught deadlock), never a half-done effect
 * committed by restoring autocommit after an {@link Error}.
 */
public abstract class AbstractTransactionBoundaryTest extends DatabaseTest {
  private Inbox inbox;

  /** One connection: what a failed transaction leaves on it is what the next caller gets. */
  @Override
  protected int poolSize() {
    return 2;
  }

  @BeforeEach
  void engineAndTables() {
    fx.build(fx.builder()); // creates the tables, the inbox's included
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
}
