package io.localmessage.testing;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * A real database for one test class: its own PostgreSQL schema, MariaDB database or H2 in-memory
 * database with a unique name, dropped by {@link #close()}. Connection settings come from the
 * environment ({@code LM_PG_URL}, {@code LM_PG_USER}, {@code LM_MARIADB_URL}, {@code
 * LM_MARIADB_USER}, {@code LM_MARIADB_PASSWORD}) with the local defaults.
 */
public final class TestDatabase implements AutoCloseable {
  /** The databases the suites run on. */
  public enum Kind {
    POSTGRESQL,
    MARIADB,
    H2
  }

  private static final String PG_URL = env("LM_PG_URL", "jdbc:postgresql://127.0.0.1:5432/test");
  private static final String PG_USER = env("LM_PG_USER", "postgres");
  private static final String PG_PASSWORD = env("LM_PG_PASSWORD", "");
  private static final String MARIADB_URL = env("LM_MARIADB_URL", "jdbc:mariadb://127.0.0.1:3306/");
  private static final String MARIADB_USER = env("LM_MARIADB_USER", "root");
  private static final String MARIADB_PASSWORD = env("LM_MARIADB_PASSWORD", "");

  private final Kind kind;
  private final String name;
  private final String sessionTimeZone;
  private final java.util.List<HikariDataSource> pools = new java.util.ArrayList<>();

  private TestDatabase(Kind kind, String sessionTimeZone) {
    this.kind = kind;
    this.sessionTimeZone = sessionTimeZone;
    this.name = "lm_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    create();
  }

  /** A fresh database; sessions use the server's default time zone. */
  public static TestDatabase create(Kind kind) {
    return new TestDatabase(kind, null);
  }

  /**
   * A fresh database whose sessions use {@code zone} (e.g. {@code Asia/Kolkata}, {@code +05:30}).
   */
  public static TestDatabase create(Kind kind, String sessionTimeZone) {
    return new TestDatabase(kind, sessionTimeZone);
  }

  public Kind kind() {
    return kind;
  }

  public String name() {
    return name;
  }

  /**
   * Wraps every pool this kit hands out (default: none): how the SQL mutant run ({@code
   * localmessage-faults}' {@code SqlMutantsTest}) changes the statements the suites run.
   */
  public static volatile java.util.function.UnaryOperator<DataSource> poolWrapper =
      java.util.function.UnaryOperator.identity();

  /** A new pool of {@code size} connections; closed with this database. */
  public DataSource dataSource(int size) {
    return dataSource(size, sessionTimeZone);
  }

  /** A new pool whose sessions use {@code zone} (null: server default). */
  public synchronized DataSource dataSource(int size, String zone) {
    HikariConfig c = new HikariConfig();
    c.setJdbcUrl(jdbcUrl());
    c.setUsername(user());
    c.setPassword(password());
    c.setMaximumPoolSize(size);
    c.setMinimumIdle(0);
    c.setPoolName(name + "-" + pools.size());
    c.setConnectionTimeout(10_000);
    if (kind == Kind.POSTGRESQL) {
      // the pool's sessions carry its name: killSessions() ends them and no other build's
      c.addDataSourceProperty("ApplicationName", c.getPoolName());
    }
    if (zone != null) {
      c.setConnectionInitSql(
          switch (kind) {
            case POSTGRESQL -> "SET TIME ZONE '" + zone + "'";
            case MARIADB -> "SET time_zone = '" + zone + "'";
            case H2 -> "SET TIME ZONE '" + zone + "'";
          });
    }
    HikariDataSource ds = new HikariDataSource(c);
    pools.add(ds);
    return poolWrapper.apply(ds);
  }

  /** Active, idle and waiting counts of a pool made by {@link #dataSource(int)}. */
  public static String poolState(DataSource ds) {
    if (ds instanceof HikariDataSource h && h.getHikariPoolMXBean() != null) {
      var p = h.getHikariPoolMXBean();
      return "active="
          + p.getActiveConnections()
          + " idle="
          + p.getIdleConnections()
          + " waiting="
          + p.getThreadsAwaitingConnection();
    }
    return String.valueOf(ds);
  }

  /** Spring Boot {@code spring.datasource.*} properties pointing at this database. */
  public String[] springDataSourceProperties(int poolSize) {
    return new String[] {
      "spring.datasource.url=" + jdbcUrl(),
      "spring.datasource.username=" + user(),
      "spring.datasource.password=" + password(),
      "spring.datasource.hikari.maximum-pool-size=" + poolSize
    };
  }

  public String jdbcUrl() {
    return switch (kind) {
      case POSTGRESQL -> PG_URL + (PG_URL.contains("?") ? "&" : "?") + "currentSchema=" + name;
      case MARIADB -> MARIADB_URL + name;
      case H2 -> "jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000";
    };
  }

  public String user() {
    return switch (kind) {
      case POSTGRESQL -> PG_USER;
      case MARIADB -> MARIADB_USER;
      case H2 -> "sa";
    };
  }

  public String password() {
    return switch (kind) {
      case POSTGRESQL -> PG_PASSWORD;
      case MARIADB -> MARIADB_PASSWORD;
      case H2 -> "";
    };
  }

  private void create() {
    switch (kind) {
      case POSTGRESQL -> admin(PG_URL, PG_USER, PG_PASSWORD, "CREATE SCHEMA " + name);
      case MARIADB ->
          admin(
              MARIADB_URL,
              MARIADB_USER,
              MARIADB_PASSWORD,
              "CREATE DATABASE " + name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin");
      case H2 -> {}
    }
  }

  /**
   * Ends every session of this database's pools, as a failover or a cut network would: each pool
   * finds its connections broken at their next use. On PostgreSQL the sessions are found by the
   * pools' application name, on MariaDB by this database; a session of another test database
   * (another build running beside this one) is never touched. Returns how many sessions were ended.
   * Not on H2: its in-memory database closes with its aborted sessions, so there is no connection
   * failure to simulate without losing the data.
   */
  public int killSessions() {
    if (kind == Kind.H2) {
      throw new UnsupportedOperationException("no session of the in-memory H2 database to cut");
    }
    try (Connection c = DriverManager.getConnection(adminUrl(), user(), password());
        Statement st = c.createStatement()) {
      java.util.List<Long> ids = new java.util.ArrayList<>();
      String find =
          switch (kind) {
            case POSTGRESQL ->
                "SELECT pid FROM pg_stat_activity WHERE application_name LIKE '"
                    + name
                    + "-%' AND pid <> pg_backend_pid()";
            case MARIADB ->
                "SELECT id FROM information_schema.processlist WHERE db = '"
                    + name
                    + "' AND id <> CONNECTION_ID()";
            case H2 -> throw new IllegalStateException("H2");
          };
      try (java.sql.ResultSet rs = st.executeQuery(find)) {
        while (rs.next()) {
          ids.add(rs.getLong(1));
        }
      }
      int killed = 0;
      for (long id : ids) {
        String kill =
            switch (kind) {
              case POSTGRESQL -> "SELECT pg_terminate_backend(" + id + ")";
              case MARIADB -> "KILL " + id;
              case H2 -> throw new IllegalStateException("H2");
            };
        try {
          st.execute(kill);
          killed++;
        } catch (SQLException gone) {
          // the session ended on its own in the meantime
        }
      }
      return killed;
    } catch (SQLException e) {
      throw new IllegalStateException("ending the sessions of " + name + " failed", e);
    }
  }

  /**
   * One line per session of this database (PostgreSQL: of its pools) with its state and statement,
   * and the server's connection count: what a test that waited in vain for a lock wait prints.
   */
  public String sessionsReport() {
    String sql =
        switch (kind) {
          case POSTGRESQL ->
              "SELECT pid || ' ' || coalesce(state, '') || ' ' || coalesce(wait_event_type, '')"
                  + " || ' ' || coalesce(left(query, 200), '') FROM pg_stat_activity"
                  + " WHERE application_name LIKE '"
                  + name
                  + "-%' UNION ALL SELECT 'server sessions: ' || count(*) FROM pg_stat_activity";
          case MARIADB ->
              "SELECT CONCAT_WS(' ', p.ID, p.COMMAND, p.STATE, t.trx_state, LEFT(p.INFO, 200))"
                  + " FROM information_schema.PROCESSLIST p LEFT JOIN information_schema.INNODB_TRX t"
                  + " ON p.ID = t.trx_mysql_thread_id WHERE p.DB = '"
                  + name
                  + "' UNION ALL SELECT CONCAT('server sessions: ', COUNT(*))"
                  + " FROM information_schema.PROCESSLIST";
          case H2 ->
              "SELECT SESSION_ID || ' ' || SESSION_STATE || ' ' || COALESCE(EXECUTING_STATEMENT, '')"
                  + " FROM INFORMATION_SCHEMA.SESSIONS";
        };
    String url = kind == Kind.H2 ? jdbcUrl() : adminUrl();
    StringBuilder out = new StringBuilder();
    try (Connection c = DriverManager.getConnection(url, user(), password());
        Statement st = c.createStatement();
        java.sql.ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        out.append(rs.getString(1)).append('\n');
      }
      return out.toString();
    } catch (SQLException e) {
      return "reading the sessions of " + name + " failed: " + e;
    }
  }

  /**
   * Whether a session of this database waits for a lock another one holds (PostgreSQL: a session of
   * this database's pools; MariaDB: a transaction in this database; H2: a blocked session).
   */
  public boolean anySessionWaitsForLock() {
    String sql =
        switch (kind) {
          case POSTGRESQL ->
              "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                  + " AND application_name LIKE '"
                  + name
                  + "-%'";
          case MARIADB ->
              "SELECT COUNT(*) FROM information_schema.INNODB_TRX t"
                  + " JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id"
                  + " WHERE t.trx_state = 'LOCK WAIT' AND p.DB = '"
                  + name
                  + "'";
          case H2 ->
              "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE SESSION_STATE = 'BLOCKED'";
        };
    String url = kind == Kind.H2 ? jdbcUrl() : adminUrl();
    try (Connection c = DriverManager.getConnection(url, user(), password());
        Statement st = c.createStatement();
        java.sql.ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1) > 0;
    } catch (SQLException e) {
      throw new IllegalStateException("reading the lock waits of " + name + " failed", e);
    }
  }

  private String adminUrl() {
    return kind == Kind.POSTGRESQL ? PG_URL : MARIADB_URL;
  }

  @Override
  public synchronized void close() {
    pools.forEach(HikariDataSource::close);
    pools.clear();
    switch (kind) {
      case POSTGRESQL -> admin(PG_URL, PG_USER, PG_PASSWORD, "DROP SCHEMA " + name + " CASCADE");
      case MARIADB -> admin(MARIADB_URL, MARIADB_USER, MARIADB_PASSWORD, "DROP DATABASE " + name);
      case H2 -> admin(jdbcUrl(), "sa", "", "SHUTDOWN");
    }
  }

  private static void admin(String url, String user, String password, String sql) {
    try (Connection c = DriverManager.getConnection(url, user, password);
        Statement st = c.createStatement()) {
      st.execute(sql);
    } catch (SQLException e) {
      throw new IllegalStateException(sql + " failed on " + url + ": " + e.getMessage(), e);
    }
  }

  private static String env(String name, String fallback) {
    String v = System.getenv(name);
    return v == null || v.isBlank() ? fallback : v;
  }

  @Override
  public String toString() {
    return kind.name().toLowerCase(Locale.ROOT);
  }
}
