package io.localmessage.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real HTTP server on 127.0.0.1 and a random port: records every request on its root context and
 * answers through a replaceable responder; other contexts take any handler.
 */
final class LocalHttpServer implements AutoCloseable {
  /** A request as the server received it. */
  record Request(
      String method,
      String path,
      Map<String, List<String>> headers,
      byte[] body,
      InetSocketAddress remote) {
    String header(String name) {
      List<String> v = headers.get(name);
      return v == null || v.isEmpty() ? null : v.get(0);
    }

    String bodyText() {
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  /** Answers one recorded request. */
  @FunctionalInterface
  interface Responder {
    void respond(HttpExchange exchange, Request request) throws Exception;
  }

  private static final AtomicInteger SERVERS = new AtomicInteger();

  private final HttpServer server;
  private final ExecutorService executor;
  private final List<Request> requests = new ArrayList<>();
  private volatile Responder responder = (ex, r) -> respond(ex, 200, "");

  private LocalHttpServer(int threads) throws IOException {
    int id = SERVERS.incrementAndGet();
    AtomicInteger n = new AtomicInteger();
    executor =
        Executors.newFixedThreadPool(
            threads, r -> new Thread(r, "test-http-" + id + "-" + n.incrementAndGet()));
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 256);
    server.setExecutor(executor);
    server.createContext("/", this::record);
    server.start();
  }

  static LocalHttpServer start(int threads) {
    try {
      return new LocalHttpServer(threads);
    } catch (IOException e) {
      throw new IllegalStateException("cannot start the test HTTP server", e);
    }
  }

  void context(String path, HttpHandler handler) {
    server.createContext(path, handler);
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path);
  }

  void respondWith(Responder r) {
    this.responder = r;
  }

  List<Request> requests() {
    synchronized (requests) {
      return List.copyOf(requests);
    }
  }

  void clear() {
    synchronized (requests) {
      requests.clear();
    }
    responder = (ex, r) -> respond(ex, 200, "");
  }

  private void record(HttpExchange ex) throws IOException {
    try {
      Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
      ex.getRequestHeaders().forEach((k, v) -> headers.put(k, List.copyOf(v)));
      Request r =
          new Request(
              ex.getRequestMethod(),
              ex.getRequestURI().getPath(),
              headers,
              ex.getRequestBody().readAllBytes(),
              ex.getRemoteAddress());
      synchronized (requests) {
        requests.add(r);
      }
      responder.respond(ex, r);
    } catch (Exception e) {
      respond(ex, 599, "test responder failed: " + e);
    } finally {
      ex.close();
    }
  }

  /** Answers {@code status} with {@code body} and header name/value pairs. */
  static void respond(HttpExchange ex, int status, String body, String... headers)
      throws IOException {
    for (int i = 0; i < headers.length; i += 2) {
      ex.getResponseHeaders().add(headers[i], headers[i + 1]);
    }
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    if (status == 204 || status == 304 || bytes.length == 0) {
      ex.sendResponseHeaders(status, -1);
      return;
    }
    ex.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
    try {
      if (!executor.awaitTermination(5, TimeUnit.SECONDS)) {
        throw new IllegalStateException("test HTTP server threads did not stop within 5 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
