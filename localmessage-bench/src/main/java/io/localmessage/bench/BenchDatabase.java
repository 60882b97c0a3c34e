package io.localmessage.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One database server for the length of a run. PostgreSQL: a database of its own ({@code
 * lmbench_<random>}), created at open and dropped at close, with a fresh schema per measurement.
 * MariaDB: a fresh database per measurement. Connection settings come from the same environment
 * variables as the core's test support ({@code LM_PG_URL}, {@code LM_PG_USER}, {@code
 * LM_PG_PASSWORD}, {@code LM_MARIADB_URL}, {@code LM_MARIADB_USER}, {@code LM_MARIADB_PASSWORD}).
 */
final class BenchDatabase implements AutoCloseable {
  /** The servers the harness runs on. */
  enum Kind {
    POSTGRESQL("pg"),
    MARIADB("mariadb");

    final String label;

    Kind(String label) {
      this.label = label;
    }

    static Kind parse(String s) {
      return switch (s.trim().toLowerCase(Locale.ROOT)) {
        case "pg", "postgres", "postgresql" -> POSTGRESQL;
        case "mariadb", "mysql" -> MARIADB;
        default -> throw new IllegalArgumentException("unknown database '" + s + "': pg, mariadb");
      };
    }
  }

  private static final String PG_URL = env("LM_PG_URL", "jdbc:postgresql://127.0.0.1:5432/test");
  private static final String PG_USER = env("LM_PG_USER", "postgres");
  private static final String PG_PASSWORD = env("LM_PG_PASSWORD", "");
  private static final String MARIADB_URL = env("LM_MARIADB_URL", "jdbc:mariadb://127.0.0.1:3306/");
  private static final String MARIADB_USER = env("LM_MARIADB_USER", "root");
  private static final String MARIADB_PASSWORD = env("LM_MARIADB_PASSWORD", "");

  final Kind kind;
  private final String name;
  private final String version;
  private final AtomicInteger scopes = new AtomicInteger();

  private BenchDatabase(Kind kind) {
    this.kind = kind;
    this.name = "lmbench_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    if (kind == Kind.POSTGRESQL) {
      admin(PG_URL, "CREATE DATABASE " + name);
    }
    this.version = queryVersion();
  }

  static BenchDatabase open(Kind kind) {
    return new BenchDatabase(kind);
  }

  String version() {
    return version;
  }

  /** A fresh, empty schema (PostgreSQL) or database (MariaDB), dropped by its close. */
  Scope newScope() {
    String scopeName = name + "_" + scopes.incrementAndGet();
    return switch (kind) {
      case POSTGRESQL -> {
        String url = pgDatabaseUrl();
        admin(url, "CREATE SCHEMA " + scopeName);
        yield new Scope(this, scopeName, withParam(url, "currentSchema=" + scopeName));
      }
      case MARIADB -> {
        admin(
            MARIADB_URL,
            "CREATE DATABASE " + scopeName + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin");
        yield new Scope(this, scopeName, MARIADB_URL + scopeName);
      }
    };
  }

  void dropScope(String scopeName) {
    switch (kind) {
      case POSTGRESQL -> admin(pgDatabaseUrl(), "DROP SCHEMA " + scopeName + " CASCADE");
      case MARIADB -> admin(MARIADB_URL, "DROP DATABASE " + scopeName);
    }
  }

  String user() {
    return kind == Kind.POSTGRESQL ? PG_USER : MARIADB_USER;
  }

  String password() {
    return kind == Kind.POSTGRESQL ? PG_PASSWORD : MARIADB_PASSWORD;
  }

  /** Transactions committed in the bench database so far (PostgreSQL only, else -1). */
  long xactCommits() {
    if (kind != Kind.POSTGRESQL) {
      return -1;
    }
    try (Connection c = DriverManager.getConnection(PG_URL, PG_USER, PG_PASSWORD);
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT xact_commit FROM pg_stat_database WHERE datname = '" + name + "'")) {
      return rs.next() ? rs.getLong(1) : -1;
    } catch (SQLException e) {
      return -1;
    }
  }

  @Override
  public void close() {
    if (kind == Kind.POSTGRESQL) {
      admin(PG_URL, "DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    }
  }

  HikariDataSource pool(String url, String poolName, int size) {
    HikariConfig c = new HikariConfig();
    c.setJdbcUrl(url);
    c.setUsername(user());
    c.setPassword(password());
    c.setMaximumPoolSize(size);
    c.setMinimumIdle(size);
    c.setPoolName(poolName);
    c.setConnectionTimeout(30_000);
    HikariDataSource ds = new HikariDataSource(c);
    // open every connection now, so no measurement pays for a connect
    List<Connection> held = new ArrayList<>();
    try {
      for (int i = 0; i < size; i++) {
        held.add(ds.getConnection());
      }
    } catch (SQLException e) {
      ds.close();
      throw new IllegalStateException("cannot fill pool " + poolName + ": " + e.getMessage(), e);
    } finally {
      for (Connection h : held) {
        try {
          h.close();
        } catch (SQLException ignored) {
          // returning to the pool
        }
      }
    }
    return ds;
  }

  private String queryVersion() {
    String url = kind == Kind.POSTGRESQL ? PG_URL : MARIADB_URL;
    try (Connection c = DriverManager.getConnection(url, user(), password());
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(kind == Kind.POSTGRESQL ? "SHOW server_version" : "SELECT VERSION()")) {
      rs.next();
      String v = rs.getString(1);
      return (kind == Kind.POSTGRESQL ? "PostgreSQL " : "MariaDB ") + v.split("[ -]")[0];
    } catch (SQLException e) {
      throw new IllegalStateException("cannot reach " + kind + " at " + url + ": " + e, e);
    }
  }

  private String pgDatabaseUrl() {
    int q = PG_URL.indexOf('?');
    String base = q < 0 ? PG_URL : PG_URL.substring(0, q);
    String query = q < 0 ? "" : PG_URL.substring(q);
    return base.substring(0, base.lastIndexOf('/') + 1) + name + query;
  }

  private static String withParam(String url, String param) {
    return url + (url.contains("?") ? "&" : "?") + param;
  }

  private void admin(String url, String sql) {
    try (Connection c = DriverManager.getConnection(url, user(), password());
        Statement st = c.createStatement()) {
      st.execute(sql);
    } catch (SQLException e) {
      throw new IllegalStateException(sql + " failed: " + e.getMessage(), e);
    }
  }

  private static String env(String name, String fallback) {
    String v = System.getenv(name);
    return v == null || v.isBlank() ? fallback : v;
  }
}
