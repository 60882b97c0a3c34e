package io.localmessage.http;

import io.localmessage.AsyncHandler;
import io.localmessage.Handler;
import io.localmessage.HandlerConfig;
import io.localmessage.Message;
import io.localmessage.PermanentFailure;
import io.localmessage.http.internal.CappedBodySubscriber;
import io.localmessage.http.internal.CapturedBody;
import io.localmessage.http.internal.Redaction;
import io.localmessage.spi.TracePropagation;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link Handler} that delivers a message as one HTTP request: {@code POST} (or {@code PUT}) of
 * the payload to the URL of its destination, with {@code Idempotency-Key: <idem_key>} so the
 * receiver can apply it once (see {@link IdempotentReceiver}), {@code Content-Type} from the
 * message's {@code content-type} header (default {@value #DEFAULT_CONTENT_TYPE}) and the configured
 * static headers. The response is turned into the message's outcome by a {@link ResponseClassifier}
 * ({@link ResponseClassifier#standard()} by default).
 *
 * <p>Credentials belong in {@link HttpDeliveryBuilder#header(String, String)}, never in messages;
 * their values are never logged and are masked in body excerpts. Payloads are never logged. One
 * {@link HttpClient} (or a few, {@link HttpDeliveryBuilder#clients}) is shared by all deliveries,
 * so connections are reused; redirects are not followed unless enabled.
 *
 * <p>The request timeout must be shorter than the type's handler timeout, or the engine would cut
 * slow requests off before the client reports them: register with {@link #handlerConfig()} or check
 * your own config with {@link #checkFits(HandlerConfig)}.
 *
 * <pre>{@code
 * HttpDelivery points = HttpDelivery.builder()
 *     .urlResolver(UrlResolver.named(Map.of("points", URI.create("http://points:8080/api/points"))))
 *     .header("Authorization", "Bearer " + config.pointsToken())
 *     .build();
 * lm.register("points.award", points, points.handlerConfig().maxAttempts(12).build());
 * }</pre>
 */
public final class HttpDelivery implements Handler, AsyncHandler, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(HttpDelivery.class);
  // whether this JVM's CompletableFuture default executor starts a thread per task, see handleAsync
  private static final boolean THREAD_PER_ASYNC_COMPLETION =
      !(new CompletableFuture<Void>().defaultExecutor() instanceof ForkJoinPool);
  private static final AtomicBoolean WARNED_THREAD_PER_COMPLETION = new AtomicBoolean();

  public static final String IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
  public static final String DEFAULT_CONTENT_TYPE = "application/json";
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(10);
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(5);

  /** The longest request timeout accepted. */
  public static final Duration MAX_REQUEST_TIMEOUT = Duration.ofMinutes(30);

  /** What {@link #handlerConfig()} adds to the request timeout to get the handler timeout. */
  public static final Duration HANDLER_TIMEOUT_MARGIN = Duration.ofSeconds(2);

  /** The span of one delivery request, from the send to the response. */
  public static final String CLIENT_SPAN = "localmessage.http";

  /** Characters of the response body kept in {@code last_error}. */
  public static final int DEFAULT_EXCERPT_LENGTH = 256;

  /** Bodies are read (and dropped) up to this size so the connection can be reused. */
  static final long DISCARD_LIMIT = 1 << 20;

  private final String method;
  private final UrlResolver resolver;
  private final Map<String, String> staticHeaders;
  private final List<String> forwardedHeaders;
  private final String defaultContentType;
  private final Duration requestTimeout;
  private final ResponseClassifier classifier;
  private final int excerptLength;
  private final int captureBytes;
  private final List<String> secrets;
  private final List<HttpClient> clients;
  private final AtomicInteger nextClient = new AtomicInteger();
  private final ExecutorService ownedExecutor;
  private final TracePropagation tracing;

  HttpDelivery(HttpDeliveryBuilder b, List<HttpClient> clients, ExecutorService ownedExecutor) {
    this.method = b.method;
    this.resolver = b.resolver;
    this.staticHeaders = Collections.unmodifiableMap(new LinkedHashMap<>(b.headers));
    this.forwardedHeaders = List.copyOf(b.forwarded);
    this.defaultContentType = b.defaultContentType;
    this.requestTimeout = b.requestTimeout;
    this.classifier = b.classifier;
    this.excerptLength = b.excerptLength;
    this.captureBytes = b.excerptLength == 0 ? 0 : Math.max(1024, b.excerptLength * 4);
    this.secrets = secretsOf(b.headers);
    this.clients = List.copyOf(clients);
    this.ownedExecutor = ownedExecutor;
    this.tracing = b.tracing;
  }

  public static HttpDeliveryBuilder builder() {
    return new HttpDeliveryBuilder();
  }

  /**
   * Whether this JVM's {@code CompletableFuture} default executor starts a new thread per task, so
   * that the JDK client's {@code sendAsync} costs a thread per response (see {@link #handleAsync}).
   */
  static boolean asyncCompletionsStartThreads() {
    return THREAD_PER_ASYNC_COMPLETION;
  }

  /** The client of the next request: round robin over {@link HttpDeliveryBuilder#clients}. */
  private HttpClient client() {
    int n = clients.size();
    return n == 1 ? clients.get(0) : clients.get(Math.floorMod(nextClient.getAndIncrement(), n));
  }

  /** A request ready to send, with its span open. */
  private record Prepared(
      URI uri, String target, TracePropagation.Span span, HttpRequest request) {}

  /**
   * Sends the message and waits for the response on the calling thread: register with {@link
   * io.localmessage.LocalMessages#register}.
   */
  @Override
  public void handle(Message m) throws Exception {
    Prepared p = prepare(m);
    long start = System.nanoTime();
    HttpResponse<CapturedBody> response;
    try {
      response = client().send(p.request, this::bodyHandler);
    } catch (IOException | InterruptedException | RuntimeException e) {
      p.span.end("io_error", e.toString());
      if (!(e instanceof IOException io)) {
        throw e;
      }
      handleFailure(m, p.target, start, io);
      return;
    }
    answered(m, p, start, response);
  }

  /**
   * Sends the message with the client's asynchronous send: no thread waits for the response, so
   * thousands of requests can be in flight (register with {@link
   * io.localmessage.LocalMessages#registerAsync} and raise the engine's concurrency). The response
   * is classified exactly as {@link #handle} does. A stage the engine times out is cancelled, which
   * the JDK client may or may not turn into an aborted request: the engine keeps the message leased
   * until its lease ends either way.
   *
   * <p>The JDK client completes each {@code sendAsync} in {@code CompletableFuture}'s default
   * executor. On Java 17 with 2 CPUs or fewer (the common pool's parallelism is then 1) that
   * executor starts a new thread per task: a thread per response, several times the CPU and a third
   * of the throughput at 1,000 in flight. The first asynchronous send on such a JVM logs a warning
   * with the fix: {@code -Djava.util.concurrent.ForkJoinPool.common.parallelism=2}.
   */
  @Override
  public CompletionStage<Void> handleAsync(Message m) throws Exception {
    if (THREAD_PER_ASYNC_COMPLETION && WARNED_THREAD_PER_COMPLETION.compareAndSet(false, true)) {
      log.warn(
          "event=http_async_thread_per_response biz_type={} id={} idem_key={} cause=\"the JDK"
              + " client completes every sendAsync in CompletableFuture's default executor, which"
              + " on this JVM starts a new thread per task (Java 17 with a common pool parallelism"
              + " of 1: 2 CPUs or fewer)\" fix=\"start the JVM with"
              + " -Djava.util.concurrent.ForkJoinPool.common.parallelism=2\"",
          m.bizType(),
          m.id(),
          m.idemKey());
    }
    Prepared p = prepare(m);
    long start = System.nanoTime();
    return client()
        .sendAsync(p.request, this::bodyHandler)
        .handle(
            (response, error) -> {
              try {
                if (error != null) {
                  Throwable cause = unwrap(error);
                  p.span.end("io_error", cause.toString());
                  if (cause instanceof IOException io) {
                    handleFailure(m, p.target, start, io);
                    return null;
                  }
                  throw cause;
                }
                answered(m, p, start, response);
                return null;
              } catch (Throwable t) {
                throw t instanceof CompletionException c ? c : new CompletionException(t);
              }
            });
  }

  private HttpResponse.BodySubscriber<CapturedBody> bodyHandler(HttpResponse.ResponseInfo info) {
    return new CappedBodySubscriber(captureBytes, DISCARD_LIMIT);
  }

  private static Throwable unwrap(Throwable t) {
    Throwable e = t;
    while ((e instanceof CompletionException || e instanceof ExecutionException)
        && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }

  private void answered(Message m, Prepared p, long start, HttpResponse<CapturedBody> response)
      throws Exception {
    notAnotherRequest(p, response);
    int status = response.statusCode();
    p.span.end(Integer.toString(status), status < 400 ? null : "HTTP " + status);
    respond(m, p.uri, p.target, start, response);
  }

  /**
   * A delivery's success is the answer to the request that was sent. A client that follows
   * redirects turns a POST answered 301, 302 or 303 into a GET without the body: the answer to that
   * GET is not a delivery, and counting it would delete the message with the effect never done. A
   * 307 or 308 repeats the request with its body, so its answer counts.
   */
  private void notAnotherRequest(Prepared p, HttpResponse<CapturedBody> response)
      throws PermanentFailure {
    if (response.previousResponse().isEmpty()
        || response.request().method().equalsIgnoreCase(method)) {
      return;
    }
    HttpResponse<CapturedBody> first = response;
    while (first.previousResponse().isPresent()) {
      first = first.previousResponse().get();
    }
    String why =
        "HTTP "
            + first.statusCode()
            + " from "
            + p.target
            + ": redirected to "
            + response.request().method()
            + " "
            + Redaction.safeUrl(response.request().uri())
            + " (HTTP "
            + response.statusCode()
            + "), a request without the message's body; not a delivery. The endpoint moved:"
            + " configure its new URL (a 307/308 redirect repeats the "
            + method
            + ")";
    p.span.end(Integer.toString(first.statusCode()), why);
    throw new PermanentFailure(why);
  }

  private Prepared prepare(Message m) throws PermanentFailure {
    URI uri = resolve(m);
    String target = method + " " + Redaction.safeUrl(uri);
    Map<String, String> trace = new LinkedHashMap<>();
    TracePropagation.Span span =
        tracing == TracePropagation.NONE
            ? TracePropagation.Span.NOOP
            : tracing.inject(
                new TracePropagation.Hop(
                    CLIENT_SPAN,
                    TracePropagation.Hop.Kind.REQUEST,
                    method,
                    Map.of("biz_type", m.bizType(), "method", method),
                    Map.of("url", Redaction.safeUrl(uri), "message_id", Long.toString(m.id()))),
                trace);
    try {
      return new Prepared(uri, target, span, request(m, uri, target, trace));
    } catch (PermanentFailure | RuntimeException e) {
      span.end("not_sent", e.getMessage());
      throw e;
    }
  }

  private void handleFailure(Message m, String target, long start, IOException e) throws Exception {
    log.debug(
        "event=http_failed biz_type={} id={} idem_key={} target={} took_ms={} error={}",
        m.bizType(),
        m.id(),
        m.idemKey(),
        target,
        millisSince(start),
        e.toString());
    classifier.classifyFailure(m, target, e);
  }

  private void respond(
      Message m, URI uri, String target, long start, HttpResponse<CapturedBody> response)
      throws Exception {
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    log.debug(
        "event=http_response biz_type={} id={} idem_key={} target={} status={} took_ms={}",
        m.bizType(),
        m.id(),
        m.idemKey(),
        target,
        response.statusCode(),
        took.toMillis());
    classifier.classify(
        m,
        new DeliveryResponse(
            method,
            uri,
            response.statusCode(),
            response.headers(),
            response.body() == null ? CapturedBody.EMPTY : response.body(),
            took,
            excerptLength,
            secrets));
  }

  /**
   * A handler config whose timeout fits this delivery: handler timeout = request timeout + {@link
   * #HANDLER_TIMEOUT_MARGIN}, and a {@code Retry-After} counts as an attempt, so a service that
   * answers "later" forever still ends in a dead letter after {@code maxAttempts}. Adjust the rest
   * (attempts, backoff, concurrency) and build.
   */
  public HandlerConfig.Builder handlerConfig() {
    return HandlerConfig.builder()
        .handlerTimeout(requestTimeout.plus(HANDLER_TIMEOUT_MARGIN))
        .retryAfterCountsAttempt(true);
  }

  /**
   * Returns {@code config} when its handler timeout is longer than this delivery's request timeout;
   * otherwise throws an {@link IllegalArgumentException} naming both.
   */
  public HandlerConfig checkFits(HandlerConfig config) {
    Objects.requireNonNull(config, "config");
    if (requestTimeout.compareTo(config.handlerTimeout()) >= 0) {
      throw new IllegalArgumentException(
          "requestTimeout "
              + requestTimeout
              + " must be shorter than the handler timeout "
              + config.handlerTimeout()
              + ": the engine would cut slow requests off before the HTTP client reports them;"
              + " raise handlerTimeout to at least requestTimeout + "
              + HANDLER_TIMEOUT_MARGIN
              + " (handlerConfig() does) or shorten requestTimeout");
    }
    return config;
  }

  public Duration requestTimeout() {
    return requestTimeout;
  }

  /**
   * Shuts down the HTTP clients this delivery created (not one it was given) and their executor. On
   * Java 21 and later each client itself is shut down too, which ends its selector thread and
   * closes its pooled connections at once; on Java 17 the JDK client has no shutdown, so they go
   * when the client is collected.
   */
  @Override
  public void close() {
    if (ownedExecutor == null) {
      return;
    }
    shutDownClient();
    ownedExecutor.shutdown();
    try {
      if (!ownedExecutor.awaitTermination(2, TimeUnit.SECONDS)) {
        ownedExecutor.shutdownNow();
      }
    } catch (InterruptedException e) {
      ownedExecutor.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }

  /** {@code HttpClient.shutdownNow()} where the JVM has it (Java 21+), found at run time. */
  private void shutDownClient() {
    for (HttpClient client : clients) {
      try {
        HttpClient.class.getMethod("shutdownNow").invoke(client);
      } catch (NoSuchMethodException e) {
        return; // Java 17: no shutdown; a client's thread ends once the client is unreachable
      } catch (ReflectiveOperationException | RuntimeException e) {
        log.debug("event=http_client_shutdown_failed error={}", e.toString());
      }
    }
  }

  @Override
  public String toString() {
    // header names only: the values are credentials
    return "HttpDelivery{"
        + method
        + ", headers="
        + staticHeaders.keySet()
        + ", requestTimeout="
        + requestTimeout
        + "}";
  }

  private URI resolve(Message m) throws PermanentFailure {
    URI uri;
    try {
      uri = resolver.resolve(m);
    } catch (IllegalArgumentException e) {
      throw new PermanentFailure("no URL for the ticket: " + e.getMessage(), e);
    }
    if (uri == null) {
      throw new PermanentFailure("no URL for the ticket: the resolver returned none");
    }
    String scheme = uri.getScheme();
    if (!"http".equalsIgnoreCase(scheme) && !"https".equalsIgnoreCase(scheme)) {
      throw new PermanentFailure(
          "URL scheme '" + scheme + "' is not http or https: " + Redaction.safeUrl(uri));
    }
    return uri;
  }

  private HttpRequest request(Message m, URI uri, String target, Map<String, String> trace)
      throws PermanentFailure {
    try {
      HttpRequest.Builder b =
          HttpRequest.newBuilder(uri)
              .timeout(requestTimeout)
              .method(method, HttpRequest.BodyPublishers.ofByteArray(m.payload()))
              .header(IDEMPOTENCY_KEY_HEADER, m.idemKey());
      String contentType = ticketHeader(m, "content-type");
      b.header("Content-Type", contentType == null ? defaultContentType : contentType);
      for (String name : forwardedHeaders) {
        String value = ticketHeader(m, name);
        if (value != null) {
          b.header(name, value);
        }
      }
      staticHeaders.forEach(b::header);
      // the delivery's own context, never the save's context a forwarded header would carry
      trace.forEach(b::setHeader);
      return b.build();
    } catch (IllegalArgumentException e) {
      throw new PermanentFailure("cannot build the request " + target + ": " + e.getMessage(), e);
    }
  }

  private static String ticketHeader(Message m, String name) {
    for (Map.Entry<String, String> e : m.headers().entrySet()) {
      if (e.getKey().equalsIgnoreCase(name)) {
        return e.getValue();
      }
    }
    return null;
  }

  private static List<String> secretsOf(Map<String, String> headers) {
    List<String> s = new ArrayList<>();
    for (String v : headers.values()) {
      s.add(v);
      int space = v.lastIndexOf(' ');
      if (space >= 0) {
        s.add(v.substring(space + 1)); // the token of "Bearer <token>"
      }
    }
    // longest first, so a value is masked before a part of it
    s.sort((a, b) -> Integer.compare(b.length(), a.length()));
    return List.copyOf(s);
  }

  private static long millisSince(long startNanos) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
  }
}
