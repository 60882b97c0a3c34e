package io.localmessage.faults;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A TCP proxy in the test JVM between one worker and the ticket database. Cutting it makes the
 * database unreachable for that worker only (every open connection is reset, new ones are refused)
 * for as long as the suite wants, without touching the shared server. Holding makes the next
 * statement that carries a given text wait in the network (the worker has sent it; the server has
 * not seen it) until the suite releases it, and with it everything the worker sends after it, on
 * every connection: a partition that begins just after that statement left the worker.
 */
final class TcpProxy implements AutoCloseable {
  private final String upstreamHost;
  private final int upstreamPort;
  private final ServerSocket server;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final AtomicInteger cutConnections = new AtomicInteger();
  private final AtomicLong cutUntilNanos = new AtomicLong();
  private final Thread acceptor;
  private final AtomicReference<List<String>> holdMarkers = new AtomicReference<>();
  private final CountDownLatch holding = new CountDownLatch(1);
  private final CountDownLatch released = new CountDownLatch(1);
  private volatile boolean closed;

  TcpProxy(String upstreamHost, int upstreamPort) throws IOException {
    this.upstreamHost = upstreamHost;
    this.upstreamPort = upstreamPort;
    this.server = new ServerSocket();
    server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 256);
    this.acceptor = new Thread(this::acceptLoop, "fault-proxy-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  int port() {
    return server.getLocalPort();
  }

  /** Rewrites a JDBC URL of the upstream server to go through this proxy. */
  String rewrite(String jdbcUrl) {
    String from = "//" + upstreamHost + ":" + upstreamPort + "/";
    if (!jdbcUrl.contains(from)) {
      throw new IllegalArgumentException("JDBC URL does not name " + from + ": " + jdbcUrl);
    }
    return jdbcUrl.replace(from, "//127.0.0.1:" + port() + "/");
  }

  /** Resets every open connection and refuses new ones for {@code outage}; returns resets. */
  int cut(Duration outage) {
    cutUntilNanos.set(System.nanoTime() + outage.toNanos());
    int n = 0;
    for (Socket s : open) {
      closeQuietly(s);
      n++;
    }
    cutConnections.addAndGet(n);
    return n;
  }

  /**
   * Holds the first chunk a client sends that contains one of {@code markers} (ASCII statement
   * text) until {@link #release()}, and every chunk any client of this proxy sends after it: that
   * statement, and all the worker says after it, waits in the network. Before it, everything flows.
   * Once only.
   */
  void holdNext(List<String> markers) {
    if (!holdMarkers.compareAndSet(null, List.copyOf(markers))) {
      throw new IllegalStateException("this proxy already held a statement");
    }
  }

  /** Waits until a statement is held; returns whether one was within {@code timeout}. */
  boolean awaitHolding(Duration timeout) throws InterruptedException {
    return holding.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Lets the held statement (and any later one) go on to the server. */
  void release() {
    released.countDown();
  }

  int cutConnections() {
    return cutConnections.get();
  }

  private boolean isCut() {
    return System.nanoTime() < cutUntilNanos.get();
  }

  private void acceptLoop() {
    while (!closed) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return; // closed
      }
      if (isCut()) {
        closeQuietly(client); // the database is "away": the driver sees a reset
        continue;
      }
      try {
        Socket up = new Socket();
        up.connect(new InetSocketAddress(upstreamHost, upstreamPort), 5_000);
        client.setTcpNoDelay(true);
        up.setTcpNoDelay(true);
        open.add(client);
        open.add(up);
        pump(client, up, true);
        pump(up, client, false);
      } catch (IOException e) {
        closeQuietly(client);
      }
    }
  }

  private void pump(Socket from, Socket to, boolean fromClient) {
    Thread t =
        new Thread(
            () -> {
              byte[] buf = new byte[16 * 1024];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                  if (fromClient && (partitioned() || shouldHold(buf, n))) {
                    holding.countDown();
                    // bounded: a suite that never releases must not leave the worker hanging
                    released.await(2, TimeUnit.MINUTES);
                  }
                  out.write(buf, 0, n);
                  out.flush();
                }
              } catch (IOException e) {
                // one side went away (or the suite cut the link): close both
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } finally {
                open.remove(from);
                open.remove(to);
                closeQuietly(from);
                closeQuietly(to);
              }
            },
            "fault-proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  /** Whether a statement is held and not yet released: then everything else waits too. */
  private boolean partitioned() {
    return holding.getCount() == 0 && released.getCount() > 0;
  }

  private boolean shouldHold(byte[] buf, int n) {
    List<String> markers = holdMarkers.get();
    if (markers == null || markers.isEmpty()) {
      return false;
    }
    String text = new String(buf, 0, n, StandardCharsets.ISO_8859_1);
    for (String marker : markers) {
      if (text.contains(marker) && holdMarkers.compareAndSet(markers, List.of())) {
        return true;
      }
    }
    return false;
  }

  private static void closeQuietly(Socket s) {
    try {
      s.setSoLinger(true, 0); // a reset, as when a server dies
      s.close();
    } catch (IOException ignored) {
      // already closed
    }
  }

  @Override
  public void close() {
    closed = true;
    try {
      server.close();
    } catch (IOException ignored) {
      // already closed
    }
    for (Socket s : open) {
      closeQuietly(s);
    }
  }
}
