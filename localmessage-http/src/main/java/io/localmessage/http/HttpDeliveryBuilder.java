package io.localmessage.http;

import io.localmessage.spi.TracePropagation;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

/** Builds an {@link HttpDelivery}; every setter checks its input at once. */
public final class HttpDeliveryBuilder {
  private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+\\-.^_`|~0-9A-Za-z]+");
  private static final Set<String> SET_PER_REQUEST =
      Set.of(
          "idempotency-key",
          "content-type",
          "content-length",
          "host",
          "connection",
          "expect",
          "upgrade",
          "transfer-encoding",
          "te",
          "trailer",
          "keep-alive",
          "proxy-connection",
          "http2-settings");
  private static final Set<String> CREDENTIALS =
      Set.of("authorization", "proxy-authorization", "cookie");
  private static final AtomicInteger CLIENTS = new AtomicInteger();

  String method = "POST";
  UrlResolver resolver = UrlResolver.destination();
  final Map<String, String> headers = new LinkedHashMap<>();
  final List<String> forwarded = new ArrayList<>();
  String defaultContentType = HttpDelivery.DEFAULT_CONTENT_TYPE;
  Duration requestTimeout = HttpDelivery.DEFAULT_REQUEST_TIMEOUT;
  private Duration connectTimeout = HttpDelivery.DEFAULT_CONNECT_TIMEOUT;
  private boolean connectTimeoutSet;
  private boolean followRedirects;
  private boolean followRedirectsSet;
  private HttpClient httpClient;
  private int clients = 1;
  private boolean clientsSet;
  ResponseClassifier classifier = ResponseClassifier.standard();
  int excerptLength = HttpDelivery.DEFAULT_EXCERPT_LENGTH;
  TracePropagation tracing = TracePropagation.NONE;

  HttpDeliveryBuilder() {}

  /** {@code POST} (default) or {@code PUT}. */
  public HttpDeliveryBuilder method(String method) {
    Objects.requireNonNull(method, "method");
    String m = method.trim().toUpperCase(Locale.ROOT);
    if (!m.equals("POST") && !m.equals("PUT")) {
      throw new IllegalArgumentException("method must be POST or PUT, was '" + method + "'");
    }
    this.method = m;
    return this;
  }

  /** Where each message goes (default {@link UrlResolver#destination()}). */
  public HttpDeliveryBuilder urlResolver(UrlResolver resolver) {
    this.resolver = Objects.requireNonNull(resolver, "resolver");
    return this;
  }

  /**
   * A header sent with every request, e.g. {@code Authorization}. Values come from configuration
   * and are never logged. {@code Idempotency-Key}, {@code Content-Type} and the headers the client
   * manages itself ({@code Host}, {@code Content-Length} ...) are refused.
   */
  public HttpDeliveryBuilder header(String name, String value) {
    checkName(name);
    String lower = name.toLowerCase(Locale.ROOT);
    if (SET_PER_REQUEST.contains(lower)) {
      throw new IllegalArgumentException(
          "header '"
              + name
              + "' is set per request"
              + (lower.equals("content-type")
                  ? "; use defaultContentType(...) or the ticket's content-type header"
                  : ""));
    }
    Objects.requireNonNull(value, () -> "value of header '" + name + "'");
    if (value.chars().anyMatch(c -> (c < 0x20 && c != '\t') || c == 0x7f)) {
      // the value itself is not repeated: it is probably a credential
      throw new IllegalArgumentException(
          "value of header '" + name + "' contains a line break or another control character");
    }
    headers.keySet().removeIf(k -> k.equalsIgnoreCase(name));
    headers.put(name, value);
    return this;
  }

  /**
   * Message headers copied onto the request when present (e.g. {@code traceparent}). Credentials
   * ({@code Authorization}, {@code Cookie} ...) are refused: they never come from a message.
   */
  public HttpDeliveryBuilder forwardTicketHeaders(String... names) {
    for (String name : names) {
      checkName(name);
      String lower = name.toLowerCase(Locale.ROOT);
      if (CREDENTIALS.contains(lower)) {
        throw new IllegalArgumentException(
            "header '"
                + name
                + "' is never taken from a ticket: credentials come from configuration,"
                + " see header(name, value)");
      }
      if (SET_PER_REQUEST.contains(lower)) {
        throw new IllegalArgumentException(
            "header '" + name + "' is set per request and cannot be forwarded");
      }
      forwarded.add(name);
    }
    return this;
  }

  /** The {@code Content-Type} of messages without a content-type header. */
  public HttpDeliveryBuilder defaultContentType(String contentType) {
    Objects.requireNonNull(contentType, "contentType");
    if (contentType.isBlank() || contentType.chars().anyMatch(c -> c < 0x20 && c != '\t')) {
      throw new IllegalArgumentException(
          "defaultContentType must be a non-blank single-line value, was '" + contentType + "'");
    }
    this.defaultContentType = contentType;
    return this;
  }

  /**
   * The whole request, connecting included, until the response headers arrive: 10 ms to 30 min
   * (default 10 s). Must be shorter than the type's handler timeout.
   */
  public HttpDeliveryBuilder requestTimeout(Duration timeout) {
    this.requestTimeout = range("requestTimeout", timeout, HttpDelivery.MAX_REQUEST_TIMEOUT);
    return this;
  }

  /**
   * Connecting alone: 10 ms to 30 min, at most the request timeout (default 5 s, or the request
   * timeout when that is shorter).
   */
  public HttpDeliveryBuilder connectTimeout(Duration timeout) {
    this.connectTimeout = range("connectTimeout", timeout, HttpDelivery.MAX_REQUEST_TIMEOUT);
    this.connectTimeoutSet = true;
    return this;
  }

  /**
   * Whether redirects are followed (default false: a 3xx is a permanent failure, since a moved
   * endpoint is a configuration error and following could send the payload elsewhere). When
   * followed, only an answer to the request that was sent counts: a 307/308 repeats it, while a
   * 301/302/303 that the client turns into a body-less GET is a permanent failure naming both.
   */
  public HttpDeliveryBuilder followRedirects(boolean follow) {
    this.followRedirects = follow;
    this.followRedirectsSet = true;
    return this;
  }

  /**
   * Uses the caller's client (its connect timeout, redirect policy, TLS, proxy and executor apply,
   * and the caller closes it). Not combinable with {@link #connectTimeout} or {@link
   * #followRedirects}.
   */
  public HttpDeliveryBuilder httpClient(HttpClient client) {
    this.httpClient = Objects.requireNonNull(client, "client");
    return this;
  }

  /** The most JDK clients one delivery spreads its requests over. */
  public static final int MAX_CLIENTS = 64;

  /**
   * Spreads the requests over {@code n} JDK clients (default 1), round robin. A JDK {@link
   * HttpClient} does all its socket I/O on one selector thread and keeps its idle connections in
   * one list, so with thousands of asynchronous requests in flight that one thread is the limit of
   * the replica; {@code n} clients have {@code n} selector threads and pools a {@code n}th of the
   * size, on the same few worker threads. Each client keeps its own connections: a receiver sees up
   * to {@code n} times as many idle keep-alive connections. Worth it from about a thousand requests
   * in flight; at most {@value #MAX_CLIENTS}, and not with {@link #httpClient} (give several
   * deliveries their own clients instead).
   */
  public HttpDeliveryBuilder clients(int n) {
    if (n < 1 || n > MAX_CLIENTS) {
      throw new IllegalArgumentException(
          "clients must be between 1 and " + MAX_CLIENTS + ", was " + n);
    }
    this.clients = n;
    this.clientsSet = true;
    return this;
  }

  /** The response policy (default {@link ResponseClassifier#standard()}). */
  public HttpDeliveryBuilder classifier(ResponseClassifier classifier) {
    this.classifier = Objects.requireNonNull(classifier, "classifier");
    return this;
  }

  /** Characters of the response body kept in error messages: 0 (none) to 512 (default 256). */
  public HttpDeliveryBuilder excerptLength(int length) {
    if (length < 0 || length > 512) {
      throw new IllegalArgumentException("excerptLength must be between 0 and 512, was " + length);
    }
    this.excerptLength = length;
    return this;
  }

  /**
   * Sends each delivery's trace context with its request (default {@link TracePropagation#NONE}).
   * With tracing, each request is a {@value HttpDelivery#CLIENT_SPAN} span (kind client), a child
   * of the handler's execution, whose {@code traceparent} (and {@code tracestate}, {@code baggage}
   * when configured) the request carries; outcome: the status code, or {@code io_error}. A receiver
   * continues it: {@link IdempotentEndpoint#withTracing}, or a Spring MVC endpoint through Spring
   * Boot's own server observation. Give it the same propagation as the engine.
   */
  public HttpDeliveryBuilder tracing(TracePropagation tracing) {
    this.tracing = TracePropagation.failSafe(Objects.requireNonNull(tracing, "tracing"));
    return this;
  }

  /**
   * The delivery handler; register it with {@code LocalMessages.register}.
   *
   * @throws IllegalArgumentException when the settings do not fit together
   */
  public HttpDelivery build() {
    if (httpClient != null && (connectTimeoutSet || followRedirectsSet)) {
      throw new IllegalArgumentException(
          "connectTimeout and followRedirects belong to the HttpClient given to httpClient(...);"
              + " set them there");
    }
    if (httpClient != null && clientsSet) {
      throw new IllegalArgumentException(
          "clients(...) spreads requests over clients this delivery builds; with httpClient(...)"
              + " it would have only the one given");
    }
    if (httpClient != null) {
      return new HttpDelivery(this, List.of(httpClient), null);
    }
    if (!connectTimeoutSet && connectTimeout.compareTo(requestTimeout) > 0) {
      connectTimeout = requestTimeout; // the default never outlasts a shorter request timeout
    }
    if (connectTimeout.compareTo(requestTimeout) > 0) {
      throw new IllegalArgumentException(
          "connectTimeout "
              + connectTimeout
              + " must not be longer than requestTimeout "
              + requestTimeout);
    }
    int id = CLIENTS.incrementAndGet();
    AtomicInteger threads = new AtomicInteger();
    // the client's own tasks (response parsing, completing the sends) never block, so a few
    // threads serve any number of requests in flight, blocking or asynchronous; a cached pool would
    // grow a thread per simultaneous response
    int size = Math.max(4, 2 * Runtime.getRuntime().availableProcessors());
    ThreadPoolExecutor executor =
        new ThreadPoolExecutor(
            size,
            size,
            60,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t = new Thread(r, "lm-http-" + id + "-" + threads.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    executor.allowCoreThreadTimeOut(true);
    List<HttpClient> built = new ArrayList<>(clients);
    for (int i = 0; i < clients; i++) {
      built.add(
          HttpClient.newBuilder()
              .executor(executor)
              .connectTimeout(connectTimeout)
              .followRedirects(
                  followRedirects ? HttpClient.Redirect.NORMAL : HttpClient.Redirect.NEVER)
              // keep-alive connections are reused; plain-http services see no h2c upgrade
              .version(HttpClient.Version.HTTP_1_1)
              .build());
    }
    return new HttpDelivery(this, built, executor);
  }

  private static void checkName(String name) {
    if (name == null || !TOKEN.matcher(name).matches()) {
      throw new IllegalArgumentException("'" + name + "' is not a valid HTTP header name");
    }
  }

  private static Duration range(String what, Duration value, Duration max) {
    Objects.requireNonNull(value, what);
    if (value.compareTo(Duration.ofMillis(10)) < 0 || value.compareTo(max) > 0) {
      throw new IllegalArgumentException(
          what + " must be between PT0.01S and " + max + ", was " + value);
    }
    return value;
  }
}
