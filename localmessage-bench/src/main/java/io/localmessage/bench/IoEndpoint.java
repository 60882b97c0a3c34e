package io.localmessage.bench;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * The io workload's HTTP endpoint, in a JVM of its own started by the bench, so its threads, CPU
 * and heap are not counted against the bench process. It answers {@code POST /tickets} with {@code
 * 200} and an empty body {@code latency} ms after the request was read, without holding a thread
 * per request: the handler reads the body, counts the request and returns; a timer thread sends the
 * response when it is due (both servers let another thread complete an exchange). {@code GET
 * /stats} reports the requests served and the endpoint's own CPU, threads and file descriptors. It
 * exits when its standard input closes, so it never outlives the bench.
 *
 * <p>Two servers: Jetty 12 core ({@link JettyEndpoint}, the default: an acceptor, 2 selectors,
 * non-blocking handler) and the JDK's {@code com.sun.net.httpserver} (one dispatcher thread that
 * accepts one connection per select round and re-registers every connection after each exchange,
 * {@value #READERS} reader threads; every idle keep-alive connection kept, {@code
 * sun.net.httpserver.maxIdleConnections} being raised from its default of 200, and {@code
 * TCP_NODELAY}).
 */
public final class IoEndpoint {
  static final String PATH = "/tickets";

  /** The servers the endpoint can run on. */
  static final String JETTY = "jetty";

  static final String JDK = "jdk";

  /** Threads sending the answers when they are due (both servers). */
  static final int TIMERS = 2;

  /** The JDK server's threads that read requests and schedule their answers. */
  static final int READERS = 2;

  /** Connections the server queues before it accepts them (the kernel caps it at somaxconn). */
  static final int ACCEPT_BACKLOG = 16_384;

  private static IoEndpoint.Process shared;

  private IoEndpoint() {}

  /** Entry point of the endpoint process: {@code IoEndpoint <latency-ms> <jetty|jdk>}. */
  public static void main(String[] args) throws Exception {
    long latencyMs = Long.parseLong(args[0]);
    String kind = args.length > 1 ? args[1] : JETTY;
    ScheduledThreadPoolExecutor timer =
        new ScheduledThreadPoolExecutor(TIMERS, daemon("io-endpoint-timer"));
    LongAdder requests = new LongAdder();
    LongAdder failed = new LongAdder();
    Supplier<String> stats = () -> stats(kind, requests.sum(), failed.sum());
    int port;
    Runnable stop;
    if (kind.equals(JETTY)) {
      org.eclipse.jetty.server.Server server =
          JettyEndpoint.start(latencyMs, timer, requests, failed, stats);
      port = JettyEndpoint.port(server);
      stop =
          () -> {
            try {
              server.stop();
            } catch (Exception e) {
              // exiting anyway
            }
          };
    } else {
      HttpServer server = jdkServer(latencyMs, timer, requests, failed, stats);
      port = server.getAddress().getPort();
      stop = () -> server.stop(0);
    }
    System.out.println("port=" + port);
    System.out.flush();
    // the bench holds our standard input: when it closes (the bench ended or died), so do we
    while (System.in.read() >= 0) {
      // nothing is sent on it
    }
    stop.run();
    System.exit(0);
  }

  private static HttpServer jdkServer(
      long latencyMs,
      ScheduledThreadPoolExecutor timer,
      LongAdder requests,
      LongAdder failed,
      Supplier<String> stats)
      throws IOException {
    HttpServer server =
        HttpServer.create(
            new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), ACCEPT_BACKLOG);
    ExecutorService readers = Executors.newFixedThreadPool(READERS, daemon("io-endpoint-reader"));
    server.createContext(
        PATH,
        ex -> {
          try (InputStream in = ex.getRequestBody()) {
            in.readAllBytes();
          }
          requests.increment();
          timer.schedule(() -> answer(ex, failed), latencyMs, TimeUnit.MILLISECONDS);
        });
    server.createContext(
        "/stats",
        ex -> {
          byte[] body = stats.get().getBytes(StandardCharsets.US_ASCII);
          ex.getResponseHeaders().set("Content-Type", "text/plain");
          ex.sendResponseHeaders(200, body.length);
          try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
          }
        });
    server.setExecutor(readers);
    server.start();
    return server;
  }

  private static void answer(HttpExchange ex, LongAdder failed) {
    try {
      ex.sendResponseHeaders(200, -1);
    } catch (IOException e) {
      failed.increment();
    } finally {
      ex.close();
    }
  }

  private static String stats(String kind, long requests, long failed) {
    com.sun.management.UnixOperatingSystemMXBean os =
        (com.sun.management.UnixOperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    return "server="
        + kind
        + "\nrequests="
        + requests
        + "\nfailed="
        + failed
        + "\ncpu_ns="
        + os.getProcessCpuTime()
        + "\nthreads="
        + ManagementFactory.getThreadMXBean().getThreadCount()
        + "\nfds="
        + os.getOpenFileDescriptorCount()
        + "\nheap_used="
        + ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed()
        + "\nmax_fds="
        + os.getMaxFileDescriptorCount()
        + "\njava="
        + System.getProperty("java.version")
        + "\n";
  }

  private static ThreadFactory daemon(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  /**
   * The run's endpoint, started at first use with {@code latencyMs} on {@code server} ({@link
   * #JETTY} or {@link #JDK}); stopped by {@link #stop}.
   */
  static synchronized Process shared(long latencyMs, String server) throws IOException {
    if (shared != null && (shared.latencyMs != latencyMs || !shared.server.equals(server))) {
      stop();
    }
    if (shared == null) {
      shared = Process.start(latencyMs, server);
    }
    return shared;
  }

  /** Stops the endpoint process if one was started. */
  static synchronized void stop() {
    if (shared != null) {
      shared.close();
      shared = null;
    }
  }

  /** The endpoint process as the bench sees it. */
  static final class Process implements AutoCloseable {
    final long latencyMs;
    final String server;
    final int port;
    private final java.lang.Process process;

    private Process(long latencyMs, String server, int port, java.lang.Process process) {
      this.latencyMs = latencyMs;
      this.server = server;
      this.port = port;
      this.process = process;
    }

    /**
     * Starts {@code java -cp <the bench classes, Jetty, slf4j> IoEndpoint} on the bench's own JVM.
     * The class path is built from where those classes were loaded from, so it works under {@code
     * exec:java} (whose {@code java.class.path} is Maven's) as well as from a plain class path.
     */
    static Process start(long latencyMs, String server) throws IOException {
      Path java = Path.of(System.getProperty("java.home"), "bin", "java");
      List<String> entries = new ArrayList<>();
      for (Class<?> c :
          new Class<?>[] {
            IoEndpoint.class,
            org.eclipse.jetty.server.Server.class,
            org.eclipse.jetty.http.HttpField.class,
            org.eclipse.jetty.io.Content.class,
            org.eclipse.jetty.util.Callback.class,
            org.slf4j.LoggerFactory.class,
            org.slf4j.simple.SimpleLogger.class
          }) {
        String entry = location(c);
        if (!entries.contains(entry)) {
          entries.add(entry);
        }
      }
      String classpath = String.join(File.pathSeparator, entries);
      List<String> cmd = new ArrayList<>();
      cmd.add(java.toString());
      cmd.add("-Xmx1g");
      cmd.add("-XX:+UseSerialGC");
      cmd.add("-Dsun.net.httpserver.maxIdleConnections=100000");
      cmd.add("-Dsun.net.httpserver.nodelay=true");
      cmd.add("-cp");
      cmd.add(classpath);
      cmd.add(IoEndpoint.class.getName());
      cmd.add(Long.toString(latencyMs));
      cmd.add(server);
      java.lang.Process p =
          new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      BufferedReader out =
          new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII));
      String line = out.readLine();
      if (line == null || !line.startsWith("port=")) {
        p.destroy();
        throw new IOException("the HTTP endpoint did not start: " + line);
      }
      Process proc = new Process(latencyMs, server, Integer.parseInt(line.substring(5).trim()), p);
      Bench.progress(
          "  io endpoint: %s server, pid %d, port %d, answers after %d ms",
          server, p.pid(), proc.port, latencyMs);
      return proc;
    }

    private static String location(Class<?> c) throws IOException {
      try {
        return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
      } catch (URISyntaxException | RuntimeException e) {
        throw new IOException("cannot locate " + c.getName() + ": " + e, e);
      }
    }

    URI uri() {
      return URI.create("http://127.0.0.1:" + port + PATH);
    }

    long pid() {
      return process.pid();
    }

    /**
     * The endpoint's counters: requests, failed, cpu_ns, threads, fds, max_fds. Read over a plain
     * socket, so asking starts no thread in the bench process (an HTTP client would).
     */
    Map<String, String> stats() throws IOException {
      try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
        s.setSoTimeout(10_000);
        s.getOutputStream()
            .write(
                "GET /stats HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
        String response = new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        int body = response.indexOf("\r\n\r\n");
        if (!response.startsWith("HTTP/1.1 200") || body < 0) {
          throw new IOException("endpoint stats failed: " + response);
        }
        Map<String, String> m = new LinkedHashMap<>();
        for (String l : response.substring(body + 4).split("\n")) {
          int eq = l.indexOf('=');
          if (eq > 0) {
            m.put(l.substring(0, eq).trim().toLowerCase(Locale.ROOT), l.substring(eq + 1).trim());
          }
        }
        return m;
      }
    }

    long requests() throws IOException {
      return Long.parseLong(stats().get("requests"));
    }

    @Override
    public void close() {
      try {
        process.getOutputStream().close();
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
          process.destroy();
          process.waitFor(5, TimeUnit.SECONDS);
        }
      } catch (IOException e) {
        process.destroy();
      } catch (InterruptedException e) {
        process.destroy();
        Thread.currentThread().interrupt();
      }
    }
  }
}
