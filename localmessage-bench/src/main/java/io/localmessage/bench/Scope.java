package io.localmessage.bench;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * A fresh schema (PostgreSQL) or database (MariaDB) for one measurement, with the pools opened on
 * it; close drops it.
 */
final class Scope implements AutoCloseable {
  final BenchDatabase db;
  final String name;
  final String url;
  private final List<HikariDataSource> pools = new ArrayList<>();
  private HikariDataSource setup;

  Scope(BenchDatabase db, String name, String url) {
    this.db = db;
    this.name = name;
    this.url = url;
  }

  boolean isPostgres() {
    return db.kind == BenchDatabase.Kind.POSTGRESQL;
  }

  /** A pool of {@code size} connections, all opened before it is returned. */
  synchronized HikariDataSource pool(String poolName, int size) {
    HikariDataSource ds = db.pool(url, name + "-" + poolName, size);
    pools.add(ds);
    return ds;
  }

  /** A plain connection outside any pool (seeding, monitoring); autocommit on. */
  Connection connect() throws SQLException {
    return DriverManager.getConnection(url, db.user(), db.password());
  }

  /** A small pool on this scope, for setup work; the same one every time. */
  synchronized DataSource setupDataSource() {
    if (setup == null) {
      setup = pool("setup", 4);
    }
    return setup;
  }

  void exec(String... statements) {
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      for (String sql : statements) {
        st.execute(sql);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("statement failed in " + name + ": " + e.getMessage(), e);
    }
  }

  long count(String table) {
    try (Connection c = connect()) {
      return count(c, table);
    } catch (SQLException e) {
      throw new IllegalStateException("count failed: " + e.getMessage(), e);
    }
  }

  static long count(Connection c, String table) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + table)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** Refreshes statistics and the visibility map after a bulk load, the same for every system. */
  void analyze(String table) {
    if (isPostgres()) {
      exec("VACUUM ANALYZE " + table);
    } else {
      exec("ANALYZE TABLE " + table);
    }
  }

  synchronized void closePools() {
    pools.forEach(HikariDataSource::close);
    pools.clear();
    setup = null; // a later setupDataSource() opens a new one
  }

  @Override
  public void close() {
    closePools();
    db.dropScope(name);
  }
}
