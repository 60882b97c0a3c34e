package io.localmessage.testing;

import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;

/**
 * A suite that runs against one database per class (created and dropped around it, a subclass per
 * dialect) with a fresh ticket table and engine fixture per test.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class DatabaseTest {
  protected TestDatabase db;
  protected DataSource ds;
  protected EngineFixture fx;

  protected abstract TestDatabase createDatabase();

  /** Connections of the shared pool. */
  protected int poolSize() {
    return 16;
  }

  @BeforeAll
  void createDb() {
    db = createDatabase();
    ds = db.dataSource(poolSize());
  }

  @AfterAll
  void dropDb() {
    db.close();
  }

  @BeforeEach
  void newTable() {
    fx = new EngineFixture(ds);
  }

  @AfterEach
  void stopEngines() {
    fx.close();
  }
}
