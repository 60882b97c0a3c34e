package io.localmessage.internal.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.SaveResult;
import io.localmessage.spi.Dialects;
import io.localmessage.testing.EngineFixture;
import io.localmessage.testing.TestDatabase;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The operator actions check the operator and the reason themselves, whoever calls them: a tool
 * that reaches the store without the admin API gets the same refusals, and nothing is written.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OperatorActionsChecksTest {
  private TestDatabase db;
  private DataSource ds;

  @BeforeAll
  void createDb() {
    db = TestDatabase.create(TestDatabase.Kind.H2);
    ds = db.dataSource(4);
  }

  @AfterAll
  void dropDb() {
    db.close();
  }

  @Test
  void cancelAndRequeueRefuseABlankOperatorOrAControlCharacterInTheReason() {
    try (EngineFixture fx = new EngineFixture(ds)) {
      LocalMessages lm = fx.build(fx.builder());
      SaveResult s = fx.save(lm, NewMessage.action("t.a", "k").build());
      OperatorActions actions =
          new OperatorActions(
              ds, Dialects.detect(ds), Tables.of(fx.table, fx.table + "_inbox"), 100);
      assertThatThrownBy(() -> actions.cancel(s.id(), " ", "why"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("operator");
      assertThatThrownBy(() -> actions.cancel(s.id(), "ops", "first line\nevent=forged"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("control character");
      assertThatThrownBy(() -> actions.requeueDead(List.of(s.id()), "ops", ""))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("reason is required");
      assertThatThrownBy(() -> actions.setPaused("t.a", true, "ops\u202e", "maintenance"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("bidirectional");
      assertThat(fx.count("status = 0")).as("nothing was cancelled").isEqualTo(1);
      assertThat(lm.admin().paused()).as("nothing was paused").isEmpty();
      assertThat(lm.admin().audit(s.id())).as("nothing was audited").isEmpty();
    }
  }
}
