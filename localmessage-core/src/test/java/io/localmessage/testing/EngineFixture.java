package io.localmessage.testing;

import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.LocalMessagesBuilder;
import io.localmessage.NewMessage;
import io.localmessage.SaveResult;
import io.localmessage.spi.EngineListener;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/** Builds engines on one test table and saves tickets; closes every engine it built. */
public final class EngineFixture implements AutoCloseable {
  private static final AtomicInteger TABLES = new AtomicInteger();

  public final DataSource dataSource;
  public final String table;
  private final List<LocalMessages> engines = new ArrayList<>();

  public EngineFixture(DataSource dataSource) {
    this.dataSource = dataSource;
    this.table = "lm" + TABLES.incrementAndGet();
  }

  /** Test defaults: fast polling, 5 s lease, small margin. */
  public LocalMessagesBuilder builder() {
    return builder(dataSource);
  }

  public LocalMessagesBuilder builder(DataSource ds) {
    return io.localmessage.TestSeams.tickerFromProperty(LocalMessages.builder(ds))
        .table(table)
        .inboxTable(table + "_inbox")
        .autoCreateSchema(true)
        .pollInterval(Duration.ofMillis(20))
        .lease(Duration.ofSeconds(5))
        .writeBackMargin(Duration.ofMillis(500))
        .maintenanceInterval(Duration.ofMillis(50))
        .shutdownTimeout(Duration.ofSeconds(2));
  }

  public LocalMessages track(LocalMessages lm) {
    engines.add(lm);
    return lm;
  }

  public LocalMessages build(LocalMessagesBuilder b) {
    return track(b.build());
  }

  /**
   * Runs {@code lm.runOnce()} until it starts nothing, at most 100 times: a drain that never ends
   * (an engine that claims the same messages again and again) fails instead of spinning.
   */
  public static void drain(LocalMessages lm) {
    for (int round = 0; round < 100; round++) {
      if (lm.runOnce() == 0) {
        return;
      }
    }
    throw new AssertionError("runOnce still started messages after 100 rounds");
  }

  /** Handler settings that fit the 5 s test lease: 2 s timeout, 10 ms fixed backoff. */
  public static HandlerConfig.Builder config() {
    return HandlerConfig.builder()
        .handlerTimeout(Duration.ofSeconds(2))
        .backoff(io.localmessage.Backoff.fixed(Duration.ofMillis(10)));
  }

  /** The SQL expression of the database clock of {@code ds}'s dialect. */
  public static String nowSql(DataSource ds) {
    try (Connection c = ds.getConnection()) {
      return io.localmessage.spi.Dialects.detect(c).now();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Saves in one committed transaction. */
  public SaveResult save(LocalMessages lm, NewMessage m) {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      SaveResult r = lm.save(c, m);
      c.commit();
      return r;
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Saves {@code n} actions of {@code bizType} in transactions of 500. */
  public void saveMany(LocalMessages lm, String bizType, int n, String aggregatePrefix) {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      for (int i = 0; i < n; i++) {
        NewMessage.Builder b = NewMessage.action(bizType, "k-" + i).payload("p" + i);
        if (aggregatePrefix != null) {
          b.aggregateId(aggregatePrefix);
        }
        lm.save(c, b.build());
        if (i % 500 == 499) {
          c.commit();
        }
      }
      c.commit();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  public long count(String where, Object... args) {
    return Sql.count(dataSource, "SELECT COUNT(*) FROM " + table + " WHERE " + where, args);
  }

  public long countAll() {
    return Sql.count(dataSource, "SELECT COUNT(*) FROM " + table);
  }

  /**
   * Makes every PENDING ticket due now, as if its lease had run out (moves time, not the DB clock).
   */
  public int expireLeases() {
    return Sql.update(
        dataSource, "UPDATE " + table + " SET next_retry_at = created_at WHERE status = 0");
  }

  @Override
  public void close() {
    for (LocalMessages lm : engines) {
      try {
        io.localmessage.internal.engine.Engines.halt(lm);
      } catch (RuntimeException ignored) {
        // already stopped
      }
    }
    engines.clear();
  }

  /** Counts listener events for assertions. */
  public static final class Counting implements EngineListener {
    public final AtomicInteger casConflicts = new AtomicInteger();
    public final AtomicInteger leaseReclaims = new AtomicInteger();
    public final AtomicInteger duplicates = new AtomicInteger();
    public final AtomicInteger expired = new AtomicInteger();
    public final AtomicInteger renewed = new AtomicInteger();
    public final AtomicInteger fenced = new AtomicInteger();
    public final AtomicInteger writeBackDropped = new AtomicInteger();
    public final AtomicInteger renewalFailures = new AtomicInteger();

    @Override
    public void leaseRenewalFailed(String bizType, int count) {
      renewalFailures.addAndGet(count);
    }

    @Override
    public void leaseRenewed(String bizType, int count) {
      renewed.addAndGet(count);
    }

    @Override
    public void fenced(String bizType, int count) {
      fenced.addAndGet(count);
    }

    @Override
    public void writeBackDropped(String bizType, int count) {
      writeBackDropped.addAndGet(count);
    }

    public final java.util.Map<Result, AtomicInteger> results =
        new java.util.concurrent.ConcurrentHashMap<>();

    @Override
    public void saved(String bizType, boolean duplicate) {
      if (duplicate) {
        duplicates.incrementAndGet();
      }
    }

    @Override
    public void claimed(String bizType, int claimed, int reclaims, Duration queryTime) {
      leaseReclaims.addAndGet(reclaims);
    }

    @Override
    public void delivered(
        String bizType, Result result, int attempt, Duration handlerTime, Duration sinceCreated) {
      results.computeIfAbsent(result, r -> new AtomicInteger()).incrementAndGet();
    }

    @Override
    public void casConflicts(String bizType, int count) {
      casConflicts.addAndGet(count);
    }

    @Override
    public void expiredLastAttempt(int count) {
      expired.addAndGet(count);
    }

    public int count(Result r) {
      AtomicInteger n = results.get(r);
      return n == null ? 0 : n.get();
    }
  }
}
