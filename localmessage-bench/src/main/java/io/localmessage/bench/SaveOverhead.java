package io.localmessage.bench;

import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.MessageKind;
import io.localmessage.NewMessage;
import io.localmessage.spi.Dialect;
import io.localmessage.spi.Dialects;
import io.localmessage.spi.MessageRow;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * Business transactions per second, each inserting one order row, with or without saving a message
 * in the same transaction; {@code clients} threads, each with its own pooled connection, for a
 * fixed time. The engine is built but not started: this measures the save, not the drain.
 */
final class SaveOverhead {
  static final String TYPE = "bench.order.created";
  static final String ORDERED_TYPE = "bench.order.created.ordered";

  private SaveOverhead() {}

  /** What each business transaction does besides its order row. */
  enum Mode {
    /** Nothing: the order row alone. */
    WITHOUT,
    /** {@code lm.save} of one message of an unordered type (registered so: it locks nothing). */
    SAVE,
    /**
     * {@code lm.save} of one message of an ordered type: the save first locks its aggregate (one of
     * 1,000 customers), so that the aggregate's messages run in the order their saves committed.
     */
    SAVE_ORDERED,
    /**
     * The dialect's insert-if-absent of the same message row on plain JDBC, without the engine: the
     * floor of a save.
     */
    RAW_INSERT,
    /**
     * One empty statement ({@code SELECT 1}) instead of the message: what the third round trip of
     * the transaction costs by itself, whatever it carries.
     */
    ROUND_TRIP,
    /** A second order row instead of the message: what any second insert costs. */
    SECOND_ROW
  }

  static double run(Scope scope, Mode mode, int clients, Duration duration) throws Exception {
    Tickets.createSchema(scope);
    Business.createSchema(scope);
    DataSource pool = scope.pool("save", clients);
    LocalMessages lm = LocalMessages.builder(pool).table(Tickets.TABLE).build();
    // never started: the registrations only tell the save which types are ordered (a type this
    // replica does not know is locked as if it were)
    lm.register(TYPE, m -> {}, HandlerConfig.defaults());
    lm.register(ORDERED_TYPE, m -> {}, HandlerConfig.builder().ordered(true).build());
    byte[] payload = new byte[Tickets.PAYLOAD_BYTES];
    java.util.Arrays.fill(payload, (byte) 'x');
    AtomicLong seq = new AtomicLong();
    AtomicInteger names = new AtomicInteger();
    ExecutorService exec =
        Executors.newFixedThreadPool(
            clients, r -> new Thread(r, "bench-save-" + names.incrementAndGet()));
    try {
      List<Future<Long>> futures = new ArrayList<>();
      long t0 = System.nanoTime();
      long end = t0 + duration.toNanos();
      for (int i = 0; i < clients; i++) {
        futures.add(
            exec.submit(
                () -> {
                  long done = 0;
                  try (Connection c = pool.getConnection()) {
                    Dialect dialect = Dialects.detect(c);
                    c.setAutoCommit(false);
                    while (System.nanoTime() - end < 0) {
                      long k = seq.incrementAndGet();
                      String customer = "c-" + (k % 1000);
                      Business.insertOrder(c, customer, k);
                      if (mode == Mode.SAVE || mode == Mode.SAVE_ORDERED) {
                        lm.save(
                            c,
                            NewMessage.action(mode == Mode.SAVE ? TYPE : ORDERED_TYPE, "order-" + k)
                                .aggregateId(customer)
                                .payload(payload)
                                .build());
                      } else if (mode == Mode.ROUND_TRIP) {
                        try (PreparedStatement ps = c.prepareStatement("SELECT 1");
                            ResultSet rs = ps.executeQuery()) {
                          rs.next();
                        }
                      } else if (mode == Mode.SECOND_ROW) {
                        Business.insertOrder(c, customer, -k);
                      } else if (mode == Mode.RAW_INSERT) {
                        dialect.insertIfAbsent(
                            c,
                            Tickets.TABLE,
                            new MessageRow(
                                MessageKind.ACTION,
                                TYPE,
                                "order-" + k,
                                customer,
                                null,
                                payload,
                                null,
                                10,
                                0));
                      }
                      c.commit();
                      done++;
                    }
                    c.setAutoCommit(true);
                  }
                  return done;
                }));
      }
      long total = 0;
      for (Future<Long> f : futures) {
        total += f.get(duration.toMillis() + 60_000, TimeUnit.MILLISECONDS);
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      long expected =
          switch (mode) {
            case WITHOUT, ROUND_TRIP -> scope.count(Business.TABLE);
            case SECOND_ROW -> scope.count(Business.TABLE) / 2;
            case SAVE, SAVE_ORDERED, RAW_INSERT -> scope.count(Tickets.TABLE);
          };
      if (expected != total) {
        throw new IllegalStateException(
            "save overhead: counted " + total + " transactions but found " + expected + " rows");
      }
      return total / seconds;
    } finally {
      exec.shutdownNow();
      exec.awaitTermination(10, TimeUnit.SECONDS);
      lm.close();
      scope.closePools();
    }
  }
}
