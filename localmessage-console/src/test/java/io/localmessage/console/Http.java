package io.localmessage.console;

import java.net.CookieManager;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A browser-like HTTP client for the console tests: its own cookie jar, no redirects followed. */
public final class Http {
  private static final Pattern CSRF = Pattern.compile("name=\"_csrf\" value=\"([^\"]+)\"");

  private final String base;
  private final HttpClient client;
  private final Map<String, String> headers = new LinkedHashMap<>();

  public Http(String base) {
    this.base = base;
    this.client =
        HttpClient.newBuilder()
            .cookieHandler(new CookieManager())
            .followRedirects(HttpClient.Redirect.NEVER)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
  }

  public Http basic(String user, String password) {
    headers.put(
        "Authorization",
        "Basic "
            + Base64.getEncoder()
                .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)));
    return this;
  }

  public Http header(String name, String value) {
    headers.put(name, value);
    return this;
  }

  public HttpResponse<String> get(String path, String... extraHeaders) {
    HttpRequest.Builder b = request(path).GET();
    for (int i = 0; i < extraHeaders.length; i += 2) {
      b.header(extraHeaders[i], extraHeaders[i + 1]);
    }
    return send(b);
  }

  /** POSTs a form; values are URL-encoded; pairs of name, value. */
  public HttpResponse<String> post(String path, String... form) {
    StringBuilder body = new StringBuilder();
    for (int i = 0; i < form.length; i += 2) {
      if (body.length() > 0) {
        body.append('&');
      }
      body.append(URLEncoder.encode(form[i], StandardCharsets.UTF_8))
          .append('=')
          .append(URLEncoder.encode(form[i + 1], StandardCharsets.UTF_8));
    }
    return send(
        request(path)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .POST(HttpRequest.BodyPublishers.ofString(body.toString())));
  }

  /** POSTs a JSON body with extra headers (pairs of name, value). */
  public HttpResponse<String> postJson(String path, String json, String... extraHeaders) {
    HttpRequest.Builder b =
        request(path)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json));
    for (int i = 0; i < extraHeaders.length; i += 2) {
      b.header(extraHeaders[i], extraHeaders[i + 1]);
    }
    return send(b);
  }

  /** POSTs without a body and without a Content-Type, as {@code curl -X POST} does. */
  public HttpResponse<String> postNoBody(String path, String... extraHeaders) {
    HttpRequest.Builder b = request(path).POST(HttpRequest.BodyPublishers.noBody());
    for (int i = 0; i < extraHeaders.length; i += 2) {
      b.header(extraHeaders[i], extraHeaders[i + 1]);
    }
    return send(b);
  }

  /** The CSRF value in a page's forms. */
  public static String csrf(String html) {
    Matcher m = CSRF.matcher(html);
    if (!m.find()) {
      throw new AssertionError("no _csrf field in the page:\n" + html);
    }
    return m.group(1);
  }

  private HttpRequest.Builder request(String path) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(20));
    headers.forEach(b::header);
    return b;
  }

  private HttpResponse<String> send(HttpRequest.Builder b) {
    try {
      return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
