package io.localmessage.demo;

import com.sun.net.httpserver.HttpServer;
import com.zaxxer.hikari.HikariDataSource;
import io.localmessage.Backoff;
import io.localmessage.HandlerConfig;
import io.localmessage.LocalMessages;
import io.localmessage.Message;
import io.localmessage.NewMessage;
import io.localmessage.PermanentFailure;
import io.localmessage.http.IdempotentEndpoint;
import io.localmessage.http.IdempotentReceiver;
import io.localmessage.inbox.Inbox;
import io.localmessage.kafka.KafkaRelay;
import io.localmessage.spi.TracePropagation;
import io.localmessage.test.Crash;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import tools.jackson.databind.JsonNode;

/**
 * The deposit service. A deposit and its {@code payment.initiate} message are saved in one
 * transaction. The payment handler calls the channel with the channel order id as idempotency key;
 * after an unknown outcome it queries first and pays again only when the channel has never heard of
 * the order. A payment confirmed by the channel moves the deposit to PAYMENT_SUCCEEDED and saves
 * the {@code deposit.paid} event in the same transaction; the relay publishes it to Kafka. The
 * ledger confirms over HTTP ({@code POST /ledger-applied}, applied once through the inbox) and the
 * deposit becomes LEDGER_APPLIED.
 */
final class DepositService implements AutoCloseable {
  static final String TABLE = "deposit_message";
  static final String PAYMENT = "payment.initiate";
  static final String PAID = "deposit.paid";
  static final String TOPIC = "deposit.paid";
  static final int PAYMENT_MAX_ATTEMPTS = 8;

  /** One worker replica: its own pool, engine and Kafka producer. */
  record Replica(String id, HikariDataSource pool, LocalMessages engine, KafkaRelay relay) {}

  private final Infra infra;
  private final DemoOptions options;
  private final String channelUrl;
  private final HttpClient http;
  private final HikariDataSource web;
  private final List<Replica> replicas = new CopyOnWriteArrayList<>();
  private final AtomicInteger replicaSeq = new AtomicInteger();
  private final AtomicInteger roundRobin = new AtomicInteger();
  private final TraceRecorder traces;
  private final TracePropagation tracing;
  private final HttpServer callbackServer;
  private final ExecutorService callbackExecutor;
  final AtomicInteger relayAcks = new AtomicInteger();
  final AtomicInteger injectedLostAcks = new AtomicInteger();

  DepositService(Infra infra, DemoOptions options, String channelUrl, TraceRecorder traces)
      throws Exception {
    this.infra = infra;
    this.traces = traces;
    this.tracing = traces.service("deposit-service");
    this.options = options;
    this.channelUrl = channelUrl;
    this.http =
        HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(2))
            .version(HttpClient.Version.HTTP_1_1)
            .build();
    this.web = infra.pool(infra.depositUrl, "deposit-web", 8);
    createSchema();
    // a request waiting for its group commit holds its thread: enough for the ledger's slots
    this.callbackExecutor = Executors.newFixedThreadPool(32, named("deposit-callback"));
    this.callbackServer = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 128);
    callbackServer.setExecutor(callbackExecutor);
    IdempotentReceiver receiver =
        IdempotentReceiver.create(Inbox.create(web, "deposit_inbox", null));
    callbackServer.createContext(
        "/ledger-applied",
        IdempotentEndpoint.create(
                web,
                receiver,
                "ledger-callback",
                (c, body, headers) -> {
                  String depositId = PaymentChannel.JSON.readTree(body).get("depositId").asString();
                  try (PreparedStatement ps =
                      c.prepareStatement(
                          "UPDATE deposit SET status = 'LEDGER_APPLIED', updated_at ="
                              + " CURRENT_TIMESTAMP(3), confirmed_ms = ? WHERE id = ? AND status ="
                              + " 'PAYMENT_SUCCEEDED'")) {
                    ps.setLong(1, System.currentTimeMillis());
                    ps.setString(2, depositId);
                    ps.executeUpdate();
                  }
                })
            // confirmations arrive many at a time: one commit for all that wait together
            .withGroupCommit(64, 4)
            .withTracing(tracing));
    callbackServer.start();
    for (int i = 0; i < options.replicas; i++) {
      startReplica();
    }
  }

  String callbackUrl() {
    return "http://127.0.0.1:" + callbackServer.getAddress().getPort() + "/ledger-applied";
  }

  DataSource dataSource() {
    return web;
  }

  private void createSchema() throws SQLException {
    LocalMessages.builder(web)
        .table(TABLE)
        .inboxTable("deposit_inbox")
        .autoCreateSchema(true)
        .build()
        .close();
    try (Connection c = web.getConnection();
        Statement st = c.createStatement()) {
      // created_ms, paid_ms, confirmed_ms: this JVM's clock at each step, so the legs of the
      // latency add up whatever the databases' clocks say
      st.execute(
          "CREATE TABLE IF NOT EXISTS deposit (id VARCHAR(64) PRIMARY KEY,"
              + " amount BIGINT NOT NULL, status VARCHAR(32) NOT NULL,"
              + " created_at TIMESTAMP(3) NOT NULL, updated_at TIMESTAMP(3) NOT NULL,"
              + " created_ms BIGINT NOT NULL, paid_ms BIGINT, confirmed_ms BIGINT)");
    }
  }

  /** Starts one more worker replica. */
  Replica startReplica() {
    String id = "deposit-" + replicaSeq.incrementAndGet();
    HikariDataSource pool = infra.pool(infra.depositUrl, id, 20);
    LocalMessages engine =
        LocalMessages.builder(pool)
            .table(TABLE)
            .inboxTable("deposit_inbox")
            .replicaId(id)
            .concurrency(64) // payments wait up to 800 ms on a late channel: slots for the bursts
            .lease(Duration.ofSeconds(20))
            .pollInterval(Duration.ofMillis(200))
            .tracing(tracing)
            .build();
    engine.register(
        PAYMENT,
        m -> pay(engine, pool, m),
        HandlerConfig.builder()
            .maxAttempts(PAYMENT_MAX_ATTEMPTS)
            .handlerTimeout(Duration.ofSeconds(5))
            .backoff(Backoff.exponential(Duration.ofMillis(100), Duration.ofSeconds(2)).jitter(0.5))
            .build());
    KafkaRelay relay =
        KafkaRelay.builder()
            .producerProperties(
                Map.of(
                    "bootstrap.servers",
                    infra.bootstrap,
                    "client.id",
                    id + "-relay",
                    "linger.ms",
                    5))
            .deliveryTimeout(Duration.ofSeconds(5))
            .maxBlock(Duration.ofSeconds(2))
            .tracing(tracing)
            .build();
    engine.registerBatch(
        PAID,
        new LossyAcks(relay, options.duplicatePublishRate, relayAcks, injectedLostAcks),
        HandlerConfig.builder()
            .maxAttempts(50)
            .handlerTimeout(relay.requiredHandlerTimeout())
            .batchSize(100)
            .backoff(Backoff.exponential(Duration.ofMillis(100), Duration.ofSeconds(2)))
            .build());
    engine.start();
    Replica r = new Replica(id, pool, engine, relay);
    replicas.add(r);
    return r;
  }

  /** The chaos move: a replica stops abruptly (no write-back, no lease release). */
  Replica crashOneReplica() {
    Replica victim = replicas.get(0);
    replicas.remove(victim);
    Crash.halt(victim.engine());
    victim.relay().close();
    victim.pool().close();
    return victim;
  }

  /** Creates a deposit and its payment ticket in one transaction. */
  void createDeposit(String depositId, long amount) {
    Replica r = replicas.get(Math.floorMod(roundRobin.getAndIncrement(), replicas.size()));
    TracePropagation.Span request =
        traces.on() ? traces.request(depositId) : TracePropagation.Span.NOOP;
    try (TracePropagation.Scope in = request.makeCurrent()) {
      insertDeposit(r, depositId, amount);
    } finally {
      request.end("created", null);
    }
  }

  private void insertDeposit(Replica r, String depositId, long amount) {
    r.engine()
        .inTransaction(
            c -> {
              try (PreparedStatement ps =
                  c.prepareStatement(
                      "INSERT INTO deposit (id, amount, status, created_at, updated_at,"
                          + " created_ms) VALUES (?, ?, 'PAYMENT_PENDING', CURRENT_TIMESTAMP(3),"
                          + " CURRENT_TIMESTAMP(3), ?)")) {
                ps.setString(1, depositId);
                ps.setLong(2, amount);
                ps.setLong(3, System.currentTimeMillis());
                ps.executeUpdate();
              }
              return r.engine()
                  .save(
                      c,
                      NewMessage.action(PAYMENT, "ch-" + depositId)
                          .aggregateId(depositId)
                          .payload(
                              "{\"depositId\":\"" + depositId + "\",\"amount\":" + amount + "}")
                          .header("content-type", "application/json")
                          .build());
            });
  }

  // ------------------------------------------------------------------ the payment handler

  private void pay(LocalMessages engine, DataSource ds, Message m) throws Exception {
    JsonNode p = PaymentChannel.JSON.readTree(m.payload());
    String depositId = p.get("depositId").asString();
    long amount = p.get("amount").asLong();
    String orderId = m.idemKey();
    if (!"PAYMENT_PENDING".equals(status(ds, depositId))) {
      return; // an earlier delivery already settled it; its write-back was lost
    }
    String outcome = null;
    if (m.attempt() > 1) {
      outcome = query(orderId); // the last outcome was unknown: ask before paying again
    }
    if (m.attempt() == 1 || "NOT_FOUND".equals(outcome)) {
      outcome = requestPayment(orderId, amount);
    }
    if ("SUCCEEDED".equals(outcome)) {
      engine.inTransaction(
          c -> {
            if (transition(c, depositId, "PAYMENT_SUCCEEDED") == 1) {
              engine.save(
                  c,
                  NewMessage.event(PAID, "paid-" + depositId)
                      .aggregateId(depositId)
                      .destination(TOPIC)
                      .payload("{\"depositId\":\"" + depositId + "\",\"amount\":" + amount + "}")
                      .header("content-type", "application/json")
                      .build());
            }
            return null;
          });
      return;
    }
    if ("REJECTED".equals(outcome)) {
      // a definite business answer: the deposit failed, the ticket's work is done
      engine.inTransaction(c -> transition(c, depositId, "PAYMENT_FAILED"));
      return;
    }
    if (m.attempt() >= m.maxAttempts()) {
      engine.inTransaction(c -> transition(c, depositId, "PAYMENT_MANUAL_REVIEW"));
      throw new PermanentFailure(
          "payment outcome still unknown after "
              + m.attempt()
              + " attempts ("
              + outcome
              + "): deposit sent to manual review");
    }
    throw new IOException(
        "payment outcome unknown ("
            + (outcome == null ? "timeout" : outcome)
            + "); the next attempt queries the channel first");
  }

  /** SUCCEEDED, REJECTED, UNAVAILABLE (503: not charged) or null (unknown). */
  private String requestPayment(String orderId, long amount) {
    HttpRequest req =
        HttpRequest.newBuilder(URI.create(channelUrl + "/pay"))
            .timeout(Duration.ofMillis(800))
            .header("Idempotency-Key", orderId)
            .header("Content-Type", "application/json")
            .POST(
                HttpRequest.BodyPublishers.ofString(
                    "{\"orderId\":\"" + orderId + "\",\"amount\":" + amount + "}"))
            .build();
    try {
      HttpResponse<String> r = send(req, "POST /pay");
      if (r.statusCode() == 200) {
        return PaymentChannel.JSON.readTree(r.body()).get("status").asString();
      }
      return r.statusCode() == 503 ? "UNAVAILABLE" : null;
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  /** A call to the channel, in a client span of the handler's trace when tracing. */
  private HttpResponse<String> send(HttpRequest req, String what)
      throws IOException, InterruptedException {
    if (tracing == TracePropagation.NONE) {
      return http.send(req, HttpResponse.BodyHandlers.ofString());
    }
    Map<String, String> carrier = new java.util.LinkedHashMap<>();
    TracePropagation.Span span =
        tracing.inject(
            new TracePropagation.Hop(
                "demo.channel", TracePropagation.Hop.Kind.REQUEST, what, Map.of(), Map.of()),
            carrier);
    HttpRequest.Builder b = HttpRequest.newBuilder(req, (name, value) -> true);
    carrier.forEach(b::setHeader);
    try {
      HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
      span.end(
          Integer.toString(r.statusCode()), r.statusCode() < 400 ? null : "HTTP " + r.statusCode());
      return r;
    } catch (IOException | InterruptedException | RuntimeException e) {
      span.end("timeout", e.toString());
      throw e;
    }
  }

  /** SUCCEEDED, REJECTED, NOT_FOUND or null (the channel could not be asked). */
  private String query(String orderId) {
    HttpRequest req =
        HttpRequest.newBuilder(URI.create(channelUrl + "/payments/" + orderId))
            .timeout(Duration.ofMillis(800))
            .GET()
            .build();
    try {
      HttpResponse<String> r = send(req, "GET /payments/{id}");
      if (r.statusCode() == 200 || r.statusCode() == 404) {
        return PaymentChannel.JSON.readTree(r.body()).get("status").asString();
      }
      return null;
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  private static String status(DataSource ds, String depositId) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT status FROM deposit WHERE id = ?")) {
      ps.setString(1, depositId);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  private static int transition(Connection c, String depositId, String to) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE deposit SET status = ?, updated_at = CURRENT_TIMESTAMP(3), paid_ms = ? WHERE"
                + " id = ? AND status = 'PAYMENT_PENDING'")) {
      ps.setString(1, to);
      ps.setLong(2, System.currentTimeMillis());
      ps.setString(3, depositId);
      return ps.executeUpdate();
    }
  }

  static java.util.concurrent.ThreadFactory named(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  @Override
  public void close() {
    for (Replica r : replicas) {
      r.engine().close();
      r.relay().close();
    }
    callbackServer.stop(0);
    callbackExecutor.shutdownNow();
  }
}
