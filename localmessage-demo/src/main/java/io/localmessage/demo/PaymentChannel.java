package io.localmessage.demo;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The third-party payment channel: a separate little HTTP server, idempotent by channel order id,
 * with a query endpoint, that misbehaves on purpose. {@code POST /pay} may answer 503 before
 * charging, or charge and then answer too late (the caller times out: outcome unknown), or reject
 * the payment. {@code GET /payments/<id>} tells what happened.
 */
final class PaymentChannel implements AutoCloseable {
  static final JsonMapper JSON = JsonMapper.builder().build();

  /** One channel order: charged once, whatever the number of requests. */
  record Charge(String orderId, long amount, String status, AtomicInteger requests) {}

  final Map<String, Charge> charges = new ConcurrentHashMap<>();
  final AtomicLong requests = new AtomicLong();
  final AtomicLong unavailable = new AtomicLong();
  final AtomicLong lateAnswers = new AtomicLong();
  final AtomicLong duplicatePayRequests = new AtomicLong();
  final AtomicLong queries = new AtomicLong();

  private final double timeoutRate;
  private final double unavailableRate;
  private final double rejectRate;
  private final long lateMillis;
  private final HttpServer server;
  private final ExecutorService executor;

  PaymentChannel(double timeoutRate, double unavailableRate, double rejectRate, long lateMillis)
      throws IOException {
    this.timeoutRate = timeoutRate;
    this.unavailableRate = unavailableRate;
    this.rejectRate = rejectRate;
    this.lateMillis = lateMillis;
    AtomicInteger n = new AtomicInteger();
    // a late answer holds its thread for lateMillis: the channel must not be the bottleneck of the
    // flow by its thread count (its faults are the rates above, not a saturated pool)
    this.executor =
        Executors.newFixedThreadPool(
            128,
            r -> {
              Thread t = new Thread(r, "payment-channel-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 256);
    server.setExecutor(executor);
    server.createContext("/pay", this::pay);
    server.createContext("/payments/", this::query);
    server.start();
  }

  String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  private void pay(HttpExchange ex) throws IOException {
    try (ex) {
      requests.incrementAndGet();
      JsonNode body = JSON.readTree(ex.getRequestBody().readAllBytes());
      String orderId = body.get("orderId").asString();
      String key = ex.getRequestHeaders().getFirst("Idempotency-Key");
      if (key == null || !key.equals(orderId)) {
        respond(ex, 400, "{\"error\":\"Idempotency-Key must be the channel order id\"}");
        return;
      }
      ThreadLocalRandom r = ThreadLocalRandom.current();
      if (r.nextDouble() < unavailableRate) {
        unavailable.incrementAndGet();
        respond(ex, 503, "{\"error\":\"try later\"}");
        return;
      }
      Charge charge =
          charges.computeIfAbsent(
              orderId,
              id ->
                  new Charge(
                      id,
                      body.get("amount").asLong(),
                      r.nextDouble() < rejectRate ? "REJECTED" : "SUCCEEDED",
                      new AtomicInteger()));
      if (charge.requests().incrementAndGet() > 1) {
        duplicatePayRequests
            .incrementAndGet(); // the channel's idempotency prevents a double charge
      }
      if (r.nextDouble() < timeoutRate) {
        lateAnswers.incrementAndGet();
        try {
          TimeUnit.MILLISECONDS.sleep(lateMillis); // charged, but the answer comes too late
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      respond(ex, 200, "{\"status\":\"" + charge.status() + "\"}");
    }
  }

  private void query(HttpExchange ex) throws IOException {
    try (ex) {
      queries.incrementAndGet();
      String id = ex.getRequestURI().getPath().substring("/payments/".length());
      Charge c = charges.get(id);
      if (c == null) {
        respond(ex, 404, "{\"status\":\"NOT_FOUND\"}");
      } else {
        respond(ex, 200, "{\"status\":\"" + c.status() + "\"}");
      }
    }
  }

  private static void respond(HttpExchange ex, int status, String body) throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", "application/json");
    try {
      ex.sendResponseHeaders(status, b.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(b);
      }
    } catch (IOException e) {
      // the caller gave up (timeout): that is the point of a late answer
    }
  }

  long succeededCharges() {
    return charges.values().stream().filter(c -> c.status().equals("SUCCEEDED")).count();
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
