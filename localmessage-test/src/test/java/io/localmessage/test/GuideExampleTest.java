package io.localmessage.test;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The example of the integration guide's testing section, as it is shown there. */
class GuideExampleTest {
  // tag::example[]
  @RegisterExtension static LocalMessagesExtension db = LocalMessagesExtension.h2();

  @Test
  void anOrderAwardsPointsOnce() throws Exception {
    LocalMessages lm = db.engine(); // a fresh table per test, closed after it
    List<String> awarded = Collections.synchronizedList(new ArrayList<>());
    lm.register("points.add", m -> awarded.add(m.aggregateId()), HandlerConfig.defaults());

    SavedMessages saved =
        SavedMessages.during(lm, db.dataSource(), db.table(), () -> placeOrder(lm, "order-1"));
    assertThat(saved.single("points.add").aggregateId()).isEqualTo("order-1");

    assertThat(Drain.all(lm)).isEqualTo(1); // runs the due messages now, synchronously
    assertThat(awarded).containsExactly("order-1");
  }

  // end::example[]

  /** The business code under test: the order and its message in one transaction. */
  private static void placeOrder(LocalMessages lm, String orderId) {
    lm.inTransaction(
        c -> lm.save(c, NewMessage.action("points.add", orderId).aggregateId(orderId).build()));
  }
}
