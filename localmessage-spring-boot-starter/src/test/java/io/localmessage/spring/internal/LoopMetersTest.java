package io.localmessage.spring.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.LocalMessages;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.ref.WeakReference;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

class LoopMetersTest {

  /**
   * Micrometer holds a gauge's state object weakly unless told otherwise: a binder nobody else
   * keeps (an application that calls {@code new LoopMeters(lm).bindTo(registry)}, as Boot's binders
   * are often used) must not turn its gauges into NaN at the next garbage collection.
   */
  @Test
  void gaugesKeepReadingAfterTheBinderItselfIsCollected() {
    JdbcDataSource ds = new JdbcDataSource();
    ds.setURL("jdbc:h2:mem:loopmeters;DB_CLOSE_DELAY=-1");
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (LocalMessages lm = engine(ds)) {
      WeakReference<LoopMeters> binder = bindAndForget(lm, registry);
      byte[][] pressure = new byte[64][];
      for (int i = 0; i < 20 && binder.get() != null; i++) {
        pressure[i % 64] = new byte[1 << 20];
        System.gc();
      }
      assertThat(registry.get("localmessage.loop.stuck").tag("loop", "poller").gauge().value())
          .as("stuck gauge of a healthy, not started engine")
          .isEqualTo(0.0);
    }
  }

  private static WeakReference<LoopMeters> bindAndForget(
      LocalMessages lm, SimpleMeterRegistry registry) {
    LoopMeters meters = new LoopMeters(lm);
    meters.bindTo(registry);
    return new WeakReference<>(meters);
  }

  private static LocalMessages engine(DataSource ds) {
    return LocalMessages.builder(ds).autoCreateSchema(true).build();
  }
}
