package io.localmessage.demo;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.localmessage.test.kafka.TestBroker;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * Where the demo's services live: two databases (the deposit service's and the ledger service's)
 * and a Kafka broker. By default a real PostgreSQL and a real broker started in this process;
 * external ones when URLs are given.
 */
final class Infra implements AutoCloseable {
  final String depositUrl;
  final String ledgerUrl;
  final String user;
  final String password;
  final String bootstrap;
  private final EmbeddedPostgres pg;
  private final TestBroker kafka;
  private final List<HikariDataSource> pools = new ArrayList<>();

  private Infra(
      String depositUrl,
      String ledgerUrl,
      String user,
      String password,
      String bootstrap,
      EmbeddedPostgres pg,
      TestBroker kafka) {
    this.depositUrl = depositUrl;
    this.ledgerUrl = ledgerUrl;
    this.user = user;
    this.password = password;
    this.bootstrap = bootstrap;
    this.pg = pg;
    this.kafka = kafka;
  }

  static Infra start(DemoOptions o) throws IOException, SQLException {
    EmbeddedPostgres pg = null;
    String depositUrl = o.depositJdbcUrl;
    String ledgerUrl = o.ledgerJdbcUrl;
    String user = o.dbUser;
    String password = System.getenv().getOrDefault("DEMO_DB_PASSWORD", "");
    if (depositUrl == null) {
      pg = EmbeddedPostgres.builder().start();
      try (Connection c = pg.getPostgresDatabase().getConnection();
          Statement st = c.createStatement()) {
        st.execute("CREATE DATABASE deposit");
        st.execute("CREATE DATABASE ledger");
      }
      depositUrl = "jdbc:postgresql://127.0.0.1:" + pg.getPort() + "/deposit";
      ledgerUrl = "jdbc:postgresql://127.0.0.1:" + pg.getPort() + "/ledger";
      user = "postgres";
    } else if (ledgerUrl == null) {
      throw new IllegalArgumentException(
          "--ledger-jdbc-url is required with --deposit-jdbc-url: the ledger has its own database");
    }
    TestBroker kafka = null;
    String bootstrap = o.bootstrapServers;
    if (bootstrap == null) {
      kafka = TestBroker.start(1);
      bootstrap = kafka.bootstrapServers();
    }
    return new Infra(depositUrl, ledgerUrl, user, password, bootstrap, pg, kafka);
  }

  String describe() {
    return "deposit db "
        + depositUrl
        + (pg != null ? " (embedded PostgreSQL)" : "")
        + ", ledger db "
        + ledgerUrl
        + ", Kafka "
        + bootstrap
        + (kafka != null ? " (embedded broker)" : "");
  }

  HikariDataSource pool(String url, String name, int size) {
    HikariConfig c = new HikariConfig();
    c.setJdbcUrl(url);
    c.setUsername(user);
    c.setPassword(password);
    c.setMaximumPoolSize(size);
    c.setPoolName(name);
    c.setConnectionTimeout(10_000);
    HikariDataSource ds = new HikariDataSource(c);
    synchronized (pools) {
      pools.add(ds);
    }
    return ds;
  }

  @Override
  public void close() {
    synchronized (pools) {
      pools.forEach(HikariDataSource::close);
    }
    if (kafka != null) {
      try {
        kafka.close();
      } catch (RuntimeException e) {
        System.err.println("closing the embedded broker: " + e);
      }
    }
    if (pg != null) {
      try {
        pg.close();
      } catch (IOException e) {
        System.err.println("stopping the embedded PostgreSQL: " + e);
      }
    }
  }
}
