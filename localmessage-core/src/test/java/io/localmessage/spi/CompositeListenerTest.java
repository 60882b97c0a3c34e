package io.localmessage.spi;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.spi.EngineListener.Result;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link EngineListener#composite}: every event reaches every listener, in order. */
class CompositeListenerTest {
  private static final class Recorder implements EngineListener {
    final String name;
    final List<String> seen;

    Recorder(String name, List<String> seen) {
      this.name = name;
      this.seen = seen;
    }

    private void add(String event) {
      seen.add(name + " " + event);
    }

    @Override
    public void saved(String bizType, boolean duplicate) {
      add("saved " + bizType + " " + duplicate);
    }

    @Override
    public void saveFailed(String bizType, Throwable error) {
      add("saveFailed " + bizType + " " + error.getMessage());
    }

    @Override
    public void claimed(String bizType, int claimed, int leaseReclaims, Duration queryTime) {
      add("claimed " + bizType + " " + claimed + " " + leaseReclaims + " " + queryTime);
    }

    @Override
    public void delivered(
        String bizType, Result result, int attempt, Duration handlerTime, Duration sinceCreated) {
      add(
          "delivered "
              + bizType
              + " "
              + result
              + " "
              + attempt
              + " "
              + handlerTime
              + " "
              + sinceCreated);
    }

    @Override
    public void casConflicts(String bizType, int count) {
      add("cas " + bizType + " " + count);
    }

    @Override
    public void expiredLastAttempt(int count) {
      add("expired " + count);
    }

    @Override
    public void leaseRenewed(String bizType, int count) {
      add("renewed " + bizType + " " + count);
    }

    @Override
    public void fenced(String bizType, int count) {
      add("fenced " + bizType + " " + count);
    }

    @Override
    public void writeBackDropped(String bizType, int count) {
      add("dropped " + bizType + " " + count);
    }

    @Override
    public void wakeUpSent(int requests) {
      add("wakeUp " + requests);
    }
  }

  @Test
  void everyEventGoesToEveryListenerInOrder() {
    List<String> seen = new ArrayList<>();
    EngineListener both =
        EngineListener.composite(
            List.of(new Recorder("a", seen), EngineListener.NONE, new Recorder("b", seen)));
    both.saved("t", true);
    both.saveFailed("t", new IllegalStateException("boom"));
    both.claimed("t", 3, 1, Duration.ofMillis(2));
    both.delivered("t", Result.RETRY, 2, Duration.ofMillis(5), Duration.ofSeconds(1));
    both.casConflicts("t", 4);
    both.expiredLastAttempt(5);
    both.leaseRenewed("t", 6);
    both.fenced("t", 7);
    both.writeBackDropped("t", 8);
    both.wakeUpSent(9);
    List<String> expected = new ArrayList<>();
    for (String event :
        List.of(
            "saved t true",
            "saveFailed t boom",
            "claimed t 3 1 PT0.002S",
            "delivered t RETRY 2 PT0.005S PT1S",
            "cas t 4",
            "expired 5",
            "renewed t 6",
            "fenced t 7",
            "dropped t 8",
            "wakeUp 9")) {
      expected.add("a " + event);
      expected.add("b " + event);
    }
    assertThat(seen).containsExactlyElementsOf(expected);
  }

  @Test
  void noListenerOrOneIsNotWrapped() {
    Recorder one = new Recorder("one", new ArrayList<>());
    assertThat(EngineListener.composite(List.of())).isSameAs(EngineListener.NONE);
    assertThat(EngineListener.composite(List.of(EngineListener.NONE)))
        .isSameAs(EngineListener.NONE);
    assertThat(EngineListener.composite(List.of(EngineListener.NONE, one))).isSameAs(one);
  }
}
