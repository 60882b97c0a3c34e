package io.localmessage.cli;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * An unpooled {@link DataSource} over {@link DriverManager}: one new connection per call, for one
 * command of the command line.
 */
final class DriverDataSource implements DataSource {
  private final String url;
  private final String user;
  private final String password;

  /** {@code password} null means empty. */
  DriverDataSource(String url, String user, String password) {
    this.url = java.util.Objects.requireNonNull(url, "url");
    this.user = user;
    this.password = password == null ? "" : password;
  }

  @Override
  public Connection getConnection() throws SQLException {
    return DriverManager.getConnection(url, user, password);
  }

  @Override
  public Connection getConnection(String username, String pass) throws SQLException {
    return DriverManager.getConnection(url, username, pass);
  }

  @Override
  public PrintWriter getLogWriter() {
    return null;
  }

  @Override
  public void setLogWriter(PrintWriter out) {}

  @Override
  public void setLoginTimeout(int seconds) {}

  @Override
  public int getLoginTimeout() {
    return 0;
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    throw new SQLFeatureNotSupportedException();
  }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    throw new SQLException("not a wrapper");
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) {
    return false;
  }
}
