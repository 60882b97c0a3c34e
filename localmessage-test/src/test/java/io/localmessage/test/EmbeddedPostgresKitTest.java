package io.localmessage.test;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.NewMessage;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class EmbeddedPostgresKitTest {
  @RegisterExtension static LocalMessagesExtension db = LocalMessagesExtension.embeddedPostgres();

  @Test
  void aMessageSavedOnTheEmbeddedServerIsDrained() throws Exception {
    LocalMessages lm = db.engine();
    AtomicInteger ran = new AtomicInteger();
    lm.register("t.a", m -> ran.incrementAndGet(), HandlerConfig.defaults());
    SavedMessages saved =
        SavedMessages.during(
            lm,
            db.dataSource(),
            db.table(),
            () -> lm.saveDetached(NewMessage.action("t.a", "k").payload("{}").build()));
    assertThat(saved.single("t.a").payloadBytes()).isEqualTo(2);
    assertThat(Drain.all(lm)).isEqualTo(1);
    assertThat(ran.get()).isEqualTo(1);
  }
}
