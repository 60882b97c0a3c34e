package io.localmessage.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.localmessage.HandlerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Builder validation: every refusal says what was wrong. No network, no database. */
class HttpDeliveryBuilderTest {

  @Test
  void requestTimeoutMustBeShorterThanTheHandlerTimeoutNamingBoth() {
    try (HttpDelivery d = HttpDelivery.builder().requestTimeout(Duration.ofSeconds(10)).build()) {
      HandlerConfig tooShort =
          HandlerConfig.builder().handlerTimeout(Duration.ofSeconds(5)).build();
      assertThatThrownBy(() -> d.checkFits(tooShort))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith(
              "requestTimeout PT10S must be shorter than the handler timeout PT5S");
      HandlerConfig equal = HandlerConfig.builder().handlerTimeout(Duration.ofSeconds(10)).build();
      assertThatThrownBy(() -> d.checkFits(equal)).isInstanceOf(IllegalArgumentException.class);

      HandlerConfig fitted = d.handlerConfig().maxAttempts(3).build();
      assertThat(fitted.handlerTimeout()).isEqualTo(Duration.ofSeconds(12));
      assertThat(d.checkFits(fitted)).isSameAs(fitted);
    }
  }

  @Test
  void defaultsAreTheDocumentedOnes() {
    try (HttpDelivery d = HttpDelivery.builder().build()) {
      assertThat(d.requestTimeout()).isEqualTo(HttpDelivery.DEFAULT_REQUEST_TIMEOUT);
      assertThat(d.handlerConfig().build().handlerTimeout()).isEqualTo(Duration.ofSeconds(12));
      assertThat(d.checkFits(HandlerConfig.defaults())).isNotNull();
    }
  }

  @Test
  void onlyPostAndPut() {
    assertThatThrownBy(() -> HttpDelivery.builder().method("GET"))
        .hasMessage("method must be POST or PUT, was 'GET'");
    HttpDelivery.builder().method("post").method("PUT");
  }

  @Test
  void headersTheDeliverySetsItselfAreRefused() {
    assertThatThrownBy(() -> HttpDelivery.builder().header("Idempotency-Key", "x"))
        .hasMessage("header 'Idempotency-Key' is set per request");
    assertThatThrownBy(() -> HttpDelivery.builder().header("content-type", "text/plain"))
        .hasMessageContaining("use defaultContentType(...)");
    assertThatThrownBy(() -> HttpDelivery.builder().header("Host", "evil"))
        .hasMessage("header 'Host' is set per request");
    assertThatThrownBy(() -> HttpDelivery.builder().header("Bad Name", "x"))
        .hasMessage("'Bad Name' is not a valid HTTP header name");
  }

  @Test
  void aBadHeaderValueIsRefusedWithoutRepeatingIt() {
    assertThatThrownBy(
            () -> HttpDelivery.builder().header("Authorization", "Bearer abc\r\nX-Evil: 1"))
        .hasMessage(
            "value of header 'Authorization' contains a line break or another control character")
        .hasMessageNotContaining("abc");
  }

  @Test
  void credentialsAreNeverForwardedFromTickets() {
    assertThatThrownBy(() -> HttpDelivery.builder().forwardTicketHeaders("authorization"))
        .hasMessageStartingWith("header 'authorization' is never taken from a ticket");
    assertThatThrownBy(() -> HttpDelivery.builder().forwardTicketHeaders("Cookie"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> HttpDelivery.builder().forwardTicketHeaders("Idempotency-Key"))
        .hasMessageContaining("cannot be forwarded");
  }

  @Test
  void timeoutsAreBoundedAndConsistent() {
    assertThatThrownBy(() -> HttpDelivery.builder().requestTimeout(Duration.ofMillis(1)))
        .hasMessage("requestTimeout must be between PT0.01S and PT30M, was PT0.001S");
    assertThatThrownBy(
            () ->
                HttpDelivery.builder()
                    .requestTimeout(Duration.ofSeconds(1))
                    .connectTimeout(Duration.ofSeconds(2))
                    .build())
        .hasMessage("connectTimeout PT2S must not be longer than requestTimeout PT1S");
    // the default connect timeout (5 s) shrinks to a shorter request timeout
    HttpDelivery.builder().requestTimeout(Duration.ofSeconds(1)).build().close();
  }

  @Test
  void clientSettingsBelongToAGivenClient() {
    HttpClient own = HttpClient.newBuilder().build();
    assertThatThrownBy(() -> HttpDelivery.builder().httpClient(own).followRedirects(true).build())
        .hasMessageContaining("set them there");
    HttpDelivery.builder().httpClient(own).build().close();
  }

  @Test
  void clientsAreBoundedAndBelongToClientsTheDeliveryBuilds() {
    assertThatThrownBy(() -> HttpDelivery.builder().clients(0))
        .hasMessage("clients must be between 1 and 64, was 0");
    assertThatThrownBy(() -> HttpDelivery.builder().clients(65))
        .hasMessage("clients must be between 1 and 64, was 65");
    HttpClient own = HttpClient.newBuilder().build();
    assertThatThrownBy(() -> HttpDelivery.builder().httpClient(own).clients(2).build())
        .hasMessageContaining("with httpClient(...) it would have only the one given");
  }

  @Test
  void toStringShowsHeaderNamesNeverValues() {
    try (HttpDelivery d =
        HttpDelivery.builder().header("Authorization", "Bearer top-secret-value").build()) {
      assertThat(d.toString()).contains("Authorization").doesNotContain("top-secret-value");
    }
  }

  @Test
  void namedResolverMapsLogicalNamesAndNeverLeavesTheConfiguredHost() {
    UrlResolver r =
        UrlResolver.named(
            Map.of(
                "points", URI.create("http://points.internal:8080/api/points/"),
                "mail", URI.create("https://mail.internal")));
    assertThat(r.resolve(TestMessage.to("points")))
        .isEqualTo(URI.create("http://points.internal:8080/api/points/"));
    assertThat(r.resolve(TestMessage.to("points/orders/7")))
        .isEqualTo(URI.create("http://points.internal:8080/api/points/orders/7"));
    assertThat(r.resolve(TestMessage.to("mail/send")))
        .isEqualTo(URI.create("https://mail.internal/send"));
    assertThatThrownBy(() -> r.resolve(TestMessage.to("ledger")))
        .hasMessageStartingWith("unknown destination 'ledger'");
    assertThat(r.resolve(TestMessage.to("mail/@evil.example/x")).getHost())
        .isEqualTo("mail.internal");
    assertThatThrownBy(() -> UrlResolver.named(Map.of("x", URI.create("file:///etc/passwd"))))
        .hasMessageContaining("must be an absolute http or https URL");
  }

  @Test
  void destinationResolverWantsAnAbsoluteUrl() {
    assertThat(UrlResolver.destination().resolve(TestMessage.to("http://h:1/p")))
        .isEqualTo(URI.create("http://h:1/p"));
    assertThatThrownBy(() -> UrlResolver.destination().resolve(TestMessage.to("points")))
        .hasMessage("destination 'points' is not an absolute URL");
    assertThatThrownBy(() -> UrlResolver.destination().resolve(TestMessage.to(null)))
        .hasMessage("the ticket has no destination URL");
  }

  private static java.util.Set<Thread> clientThreads() {
    java.util.Set<Thread> t = new java.util.HashSet<>();
    for (Thread th : Thread.getAllStackTraces().keySet()) {
      if (th.isAlive() && th.getName().startsWith("HttpClient-")) {
        t.add(th);
      }
    }
    return t;
  }

  @Test
  void closeEndsTheClientsOwnThreadWhereTheJvmCanShutAClientDown() {
    assertCloseEndsTheSelectorThreads(HttpDelivery.builder(), 1);
  }

  @Test
  void closeEndsTheSelectorThreadOfEveryClientItBuilt() {
    assertCloseEndsTheSelectorThreads(HttpDelivery.builder().clients(3), 3);
  }

  private static void assertCloseEndsTheSelectorThreads(HttpDeliveryBuilder b, int clients) {
    java.util.Set<Thread> before = clientThreads();
    HttpDelivery d = b.build();
    java.util.Set<Thread> mine = clientThreads();
    mine.removeAll(before);
    assertThat(mine).as("one selector thread per client").hasSize(clients);
    d.close();
    if (Runtime.version().feature() >= 21) {
      org.awaitility.Awaitility.await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> mine.stream().noneMatch(Thread::isAlive));
    }
  }
}
