package io.localmessage.http;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpPrincipal;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Wraps an endpoint with the faults of the order -> points run: a share of requests is refused with
 * 503 before anything is applied, and a share is applied and committed but its answer is lost —
 * either the connection is closed without a response or a 503 replaces the 200.
 */
final class FaultyEndpoint implements HttpHandler {
  private final HttpHandler endpoint;
  private final Random random;
  private final int refusePercent;
  private final int losePercent;

  final AtomicInteger requests = new AtomicInteger();
  final AtomicInteger refusedBefore = new AtomicInteger();
  final AtomicInteger closedAfter = new AtomicInteger();
  final AtomicInteger failedAfter = new AtomicInteger();

  /** What the endpoint answered (whether or not the answer reached the sender). */
  final AtomicInteger applied = new AtomicInteger();

  final AtomicInteger duplicates = new AtomicInteger();
  final AtomicInteger errors = new AtomicInteger();

  FaultyEndpoint(HttpHandler endpoint, long seed, int refusePercent, int losePercent) {
    this.endpoint = endpoint;
    this.random = new Random(seed);
    this.refusePercent = refusePercent;
    this.losePercent = losePercent;
  }

  /** Requests that reached the real endpoint. */
  int reachedEndpoint() {
    return requests.get() - refusedBefore.get();
  }

  @Override
  public void handle(HttpExchange ex) throws IOException {
    requests.incrementAndGet();
    int roll = random.nextInt(100);
    if (roll < refusePercent) {
      refusedBefore.incrementAndGet();
      ex.getRequestBody().readAllBytes();
      LocalHttpServer.respond(ex, 503, "{\"error\":\"overloaded\"}");
      ex.close();
      return;
    }
    boolean lose = roll < refusePercent + losePercent;
    boolean close = lose && roll % 2 == 0;
    if (lose) {
      (close ? closedAfter : failedAfter).incrementAndGet();
    }
    // the endpoint applies and commits; when lost, what it answers never reaches the sender
    Observed observed = new Observed(ex, lose, close);
    endpoint.handle(observed);
    String answer = observed.body.toString(java.nio.charset.StandardCharsets.UTF_8);
    if (answer.contains("applied")) {
      applied.incrementAndGet();
    } else if (answer.contains("duplicate")) {
      duplicates.incrementAndGet();
    } else {
      errors.incrementAndGet();
    }
  }

  /**
   * Passes the request through and keeps a copy of the answer. A lost answer never reaches the
   * sender: the connection is closed without a status line, or a 503 replaces it.
   */
  private static final class Observed extends HttpExchange {
    private final HttpExchange real;
    private final boolean lose;
    private final boolean close;
    final java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();

    Observed(HttpExchange real, boolean lose, boolean close) {
      this.real = real;
      this.lose = lose;
      this.close = close;
    }

    @Override
    public void sendResponseHeaders(int code, long length) throws IOException {
      if (!lose) {
        real.sendResponseHeaders(code, length);
      } else if (!close) {
        real.sendResponseHeaders(503, -1);
      }
      // close: no status line at all; closing the exchange then drops the connection
    }

    @Override
    public OutputStream getResponseBody() {
      OutputStream out = lose ? OutputStream.nullOutputStream() : real.getResponseBody();
      return new java.io.FilterOutputStream(out) {
        @Override
        public void write(int b) throws IOException {
          body.write(b);
          out.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
          body.write(b, off, len);
          out.write(b, off, len);
        }
      };
    }

    @Override
    public void close() {
      real.close();
    }

    @Override
    public Headers getRequestHeaders() {
      return real.getRequestHeaders();
    }

    @Override
    public Headers getResponseHeaders() {
      return real.getResponseHeaders();
    }

    @Override
    public URI getRequestURI() {
      return real.getRequestURI();
    }

    @Override
    public String getRequestMethod() {
      return real.getRequestMethod();
    }

    @Override
    public HttpContext getHttpContext() {
      return real.getHttpContext();
    }

    @Override
    public InputStream getRequestBody() {
      return real.getRequestBody();
    }

    @Override
    public InetSocketAddress getRemoteAddress() {
      return real.getRemoteAddress();
    }

    @Override
    public int getResponseCode() {
      return real.getResponseCode();
    }

    @Override
    public InetSocketAddress getLocalAddress() {
      return real.getLocalAddress();
    }

    @Override
    public String getProtocol() {
      return real.getProtocol();
    }

    @Override
    public Object getAttribute(String name) {
      return real.getAttribute(name);
    }

    @Override
    public void setAttribute(String name, Object value) {
      real.setAttribute(name, value);
    }

    @Override
    public void setStreams(InputStream i, OutputStream o) {
      real.setStreams(i, o);
    }

    @Override
    public HttpPrincipal getPrincipal() {
      return real.getPrincipal();
    }
  }
}
