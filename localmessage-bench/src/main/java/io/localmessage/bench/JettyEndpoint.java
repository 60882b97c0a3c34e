package io.localmessage.bench;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The io endpoint on Jetty 12 core (no servlets), inside the endpoint process only: a non-blocking
 * handler reads the request body asynchronously, counts the request and schedules the answer; a
 * timer thread writes the empty {@code 200} when it is due. No thread waits for a request.
 */
final class JettyEndpoint {
  /** Jetty's pool: the acceptor, the selectors and whatever runs handlers and writes. */
  static final int MAX_THREADS = 16;

  static final int SELECTORS = 2;

  private JettyEndpoint() {}

  /** Starts the server on 127.0.0.1 and an ephemeral port; returns it started. */
  static Server start(
      long latencyMs,
      ScheduledExecutorService timer,
      LongAdder requests,
      LongAdder failed,
      Supplier<String> stats)
      throws Exception {
    QueuedThreadPool pool = new QueuedThreadPool(MAX_THREADS, 4);
    pool.setName("io-endpoint-jetty");
    pool.setDaemon(true);
    Server server = new Server(pool);
    ServerConnector connector =
        new ServerConnector(server, 1, SELECTORS, new HttpConnectionFactory());
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    connector.setAcceptQueueSize(IoEndpoint.ACCEPT_BACKLOG);
    connector.setIdleTimeout(120_000);
    server.addConnector(connector);
    server.setHandler(
        new Handler.Abstract.NonBlocking() {
          @Override
          public boolean handle(Request request, Response response, Callback callback) {
            String path = Request.getPathInContext(request);
            if (path.equals("/stats")) {
              response.setStatus(200);
              response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain");
              response.write(
                  true, ByteBuffer.wrap(stats.get().getBytes(StandardCharsets.US_ASCII)), callback);
              return true;
            }
            Content.Source.consumeAll(
                request,
                Callback.from(
                    () -> {
                      requests.increment();
                      timer.schedule(
                          () -> answer(response, callback, failed),
                          latencyMs,
                          TimeUnit.MILLISECONDS);
                    },
                    x -> {
                      failed.increment();
                      callback.failed(x);
                    }));
            return true;
          }
        });
    server.start();
    return server;
  }

  static int port(Server server) {
    return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
  }

  private static void answer(Response response, Callback callback, LongAdder failed) {
    response.setStatus(200);
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, 0L);
    response.write(
        true,
        null,
        Callback.from(
            callback::succeeded,
            x -> {
              failed.increment();
              callback.failed(x);
            }));
  }
}
