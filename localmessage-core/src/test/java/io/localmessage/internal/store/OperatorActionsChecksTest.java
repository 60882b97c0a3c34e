package io.localmessage.internal.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import io.localmessage.SaveResult;
import io.localmessage.spi.Dialects;
import io.localmessage.testing.DatabaseTest;
import io.localmessage.testing.TestDatabase;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The operator actions check the operator and the reason themselves, whoever calls them: a tool
 * that reaches the store without the admin API gets the same refusals, and nothing is written.
 */
class OperatorActionsChecksTest extends DatabaseTest {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.create(TestDatabase.Kind.H2);
  }

  @Override
  protected int poolSize() {
    return 4;
  }

  @Test
  void cancelAndRequeueRefuseABlankOperatorOrAControlCharacterInTheReason() {
    LocalMessages lm = fx.build(fx.builder());
    SaveResult s = fx.save(lm, NewMessage.action("t.a", "k").build());
    OperatorActions actions =
        new OperatorActions(ds, Dialects.detect(ds), Tables.of(fx.table, fx.table + "_inbox"), 100);
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

  @Test
  void anOperatorNameAndAReasonAreTakenUpToTheirLimitAndRefusedOneCharacterPastIt() {
    LocalMessages lm = fx.build(fx.builder());
    SaveResult a = fx.save(lm, NewMessage.action("t.a", "a").build());
    SaveResult b = fx.save(lm, NewMessage.action("t.a", "b").build());
    OperatorActions actions =
        new OperatorActions(ds, Dialects.detect(ds), Tables.of(fx.table, fx.table + "_inbox"), 100);
    String name = "o".repeat(OperatorInput.MAX_OPERATOR);
    String reason = "r".repeat(OperatorInput.MAX_REASON);
    assertThatThrownBy(() -> actions.cancel(a.id(), name + "o", "why"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("operator must be a non-blank name of at most 128 characters");
    assertThatThrownBy(() -> actions.cancel(a.id(), "ops", reason + "r"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("reason is 513 characters, longer than the limit 512");
    assertThatThrownBy(() -> actions.setPaused("t.a ", true, "ops", "why"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("bizType");
    assertThat(fx.count("status = 0")).as("nothing was cancelled").isEqualTo(2);

    actions.cancel(a.id(), name, reason);
    assertThat(lm.admin().audit(a.id()))
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.operator()).isEqualTo(name);
              assertThat(e.reason()).isEqualTo(reason);
            });
    actions.setPaused("t.a", true, "ops", "maintenance");
    assertThat(lm.admin().paused()).containsExactly("t.a");
    assertThat(fx.count("id = ? AND status = 0", b.id())).isEqualTo(1);
  }
}
