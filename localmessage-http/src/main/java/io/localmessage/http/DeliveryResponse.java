package io.localmessage.http;

import io.localmessage.http.internal.CapturedBody;
import io.localmessage.http.internal.Redaction;
import java.net.URI;
import java.net.http.HttpHeaders;
import java.time.Duration;
import java.util.Collection;
import java.util.Optional;

/**
 * The response to one delivery, as a {@link ResponseClassifier} sees it. Only the start of the body
 * is kept; {@link #bodyExcerpt()} gives it capped and redacted, ready for {@code last_error}.
 */
public final class DeliveryResponse {
  private final String method;
  private final URI uri;
  private final int status;
  private final HttpHeaders headers;
  private final CapturedBody body;
  private final Duration elapsed;
  private final int excerptLength;
  private final Collection<String> secrets;
  private String excerpt;

  DeliveryResponse(
      String method,
      URI uri,
      int status,
      HttpHeaders headers,
      CapturedBody body,
      Duration elapsed,
      int excerptLength,
      Collection<String> secrets) {
    this.method = method;
    this.uri = uri;
    this.status = status;
    this.headers = headers;
    this.body = body;
    this.elapsed = elapsed;
    this.excerptLength = excerptLength;
    this.secrets = secrets;
  }

  /** {@code POST} or {@code PUT}. */
  public String method() {
    return method;
  }

  /** The URL called. It may hold credentials in its query: use {@link #target()} in messages. */
  public URI uri() {
    return uri;
  }

  /** {@code METHOD scheme://host:port/path}, without user info, query or fragment. */
  public String target() {
    return method + " " + Redaction.safeUrl(uri);
  }

  public int status() {
    return status;
  }

  public HttpHeaders headers() {
    return headers;
  }

  /** The first value of header {@code name} (case-insensitive). */
  public Optional<String> header(String name) {
    return headers.firstValue(name);
  }

  /**
   * The start of the body as one line of text, redacted (configured header values, bearer tokens,
   * password/token/secret fields and card-like numbers masked) and capped at the configured excerpt
   * length; "" when there is no body.
   */
  public synchronized String bodyExcerpt() {
    if (excerpt == null) {
      boolean cut = !body.complete() || body.totalBytes() > body.prefix().length;
      excerpt = Redaction.excerpt(body.prefix(), cut, excerptLength, secrets);
    }
    return excerpt;
  }

  /** Body bytes received in all (reading stops at a bound for very large bodies). */
  public long bodyBytes() {
    return body.totalBytes();
  }

  /** From sending the request to the end of the response. */
  public Duration elapsed() {
    return elapsed;
  }

  @Override
  public String toString() {
    return "DeliveryResponse{" + target() + " -> " + status + "}";
  }
}
