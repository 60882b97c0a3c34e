package io.localmessage.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Where the JDK client completes an asynchronous send. On Java 17 with 2 CPUs or fewer it is a new
 * thread per response (the JVM's CompletableFuture default executor), which cost two thirds of the
 * throughput in the benchmark; {@code HttpDelivery} detects that JVM to warn with the fix. Checked
 * against what the client really does on the JVM running the test: the Java 17 pass of the test
 * command sees one case on a 2-CPU machine, the Java 25 pass the other.
 */
class AsyncCompletionThreadsTest {

  @Test
  void theDetectionOfAThreadPerResponseMatchesWhereResponsesComplete() throws Exception {
    List<Thread> completedOn = new ArrayList<>();
    try (LocalHttpServer server = LocalHttpServer.start(2);
        HttpDelivery http =
            HttpDelivery.builder()
                .requestTimeout(Duration.ofSeconds(5))
                .classifier(
                    (m, r) -> {
                      synchronized (completedOn) {
                        completedOn.add(Thread.currentThread());
                      }
                    })
                .build()) {
      // the answer comes after 20 ms, so no send is complete before its stage is returned
      server.respondWith(
          (ex, r) -> {
            Thread.sleep(20);
            LocalHttpServer.respond(ex, 200, "");
          });
      for (int i = 0; i < 12; i++) {
        http.handleAsync(TestMessage.to(server.uri("/x").toString()))
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
      }
    }
    assertThat(completedOn).hasSize(12).doesNotContain(Thread.currentThread());
    Set<Thread> distinct = new HashSet<>(completedOn);
    boolean onPoolWorkers = completedOn.stream().allMatch(t -> t instanceof ForkJoinWorkerThread);
    if (HttpDelivery.asyncCompletionsStartThreads()) {
      assertThat(distinct).as("a new thread for every response").hasSize(12);
      assertThat(onPoolWorkers).isFalse();
    } else {
      assertThat(onPoolWorkers).as("responses complete on the common pool's workers").isTrue();
      assertThat(distinct.size()).isLessThan(12);
    }
  }
}
