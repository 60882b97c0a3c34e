package io.localmessage;

import static io.localmessage.NewMessage.action;
import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.spi.Dialects;
import io.localmessage.testing.DatabaseTest;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.TestDatabase;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Builder settings as a user writes them: chained, and the defaults the engine then runs with. */
class H2BuilderTest extends DatabaseTest {

  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.H2);
  }

  @Test
  void theWriteBatchSizeVirtualThreadsAndDialectSettingsChainIntoAWorkingEngine() {
    LocalMessages lm =
        fx.build(
            fx.builder()
                .writeBatchSize(1)
                .virtualThreads(false)
                .dialect(Dialects.named("h2"))
                .concurrency(2));
    List<String> handled = new CopyOnWriteArrayList<>();
    lm.register("t.a", m -> handled.add(m.idemKey()), EngineFixture.config().build());
    fx.save(lm, action("t.a", "k-1").payload("p").build());
    fx.save(lm, action("t.a", "k-2").payload("p").build());
    assertThat(lm.runOnce()).isEqualTo(2);
    assertThat(handled).containsExactlyInAnyOrder("k-1", "k-2");
    // one outcome per write-back statement, each written
    assertThat(fx.countAll()).isZero();
  }

  @Test
  void withoutAReplicaIdTheEngineNamesItselfAfterItsHostAndProcessAndLeasesUnderThatName() {
    LocalMessages lm = fx.build(fx.builder());
    String id = lm.replicaId();
    assertThat(id)
        .endsWith("-" + ProcessHandle.current().pid())
        .hasSizeLessThanOrEqualTo(64)
        .hasSizeGreaterThan(("-" + ProcessHandle.current().pid()).length());
    AtomicReference<String> leaseOwner = new AtomicReference<>();
    lm.register(
        "t.a",
        m -> leaseOwner.set(lm.admin().get(m.id()).orElseThrow().leaseOwner()),
        EngineFixture.config().build());
    fx.save(lm, action("t.a", "k").payload("p").build());
    assertThat(lm.runOnce()).isEqualTo(1);
    assertThat(leaseOwner.get()).as("the lease owner of the claimed message").isEqualTo(id);
    assertThat(lm.health().replicaId()).isEqualTo(id);
  }
}
