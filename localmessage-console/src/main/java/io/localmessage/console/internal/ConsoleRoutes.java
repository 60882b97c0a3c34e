package io.localmessage.console.internal;

import io.localmessage.LocalMessages;
import io.localmessage.admin.Admin;
import io.localmessage.admin.TicketView;
import io.localmessage.admin.TypeStats;
import io.localmessage.console.ConsoleProperties;
import io.localmessage.console.PayloadRedactor;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.web.servlet.function.HandlerFunction;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The console's URLs, under the configured path: pages are GET, actions are POST with a reason.
 * Every handler checks {@link ConsoleAccess} itself, whatever filter ran before it.
 */
public final class ConsoleRoutes {
  private static final Logger log = LoggerFactory.getLogger(ConsoleRoutes.class);
  private static final MediaType HTML = new MediaType("text", "html", StandardCharsets.UTF_8);
  private static final String CSP =
      "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self';"
          + " form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
  static final int SEARCH_LIMIT = 100;
  static final int MAX_IDS = 1000;

  private final LocalMessages engine;
  private final ConsoleProperties props;
  private final ConsoleAccess access;
  private final PayloadRedactor redactor;
  private final ActivityRecorder activity;
  private final String css = resource("console.css");
  private final String js = resource("console.js");

  public ConsoleRoutes(
      LocalMessages engine,
      ConsoleProperties props,
      ConsoleAccess access,
      PayloadRedactor redactor,
      ActivityRecorder activity) {
    this.engine = engine;
    this.props = props;
    this.access = access;
    this.redactor = redactor;
    this.activity = activity;
  }

  public RouterFunction<ServerResponse> routes() {
    String p = props.getPath();
    return RouterFunctions.route()
        .GET(
            p + "/console.css",
            r -> asset(css, new MediaType("text", "css", StandardCharsets.UTF_8)))
        .GET(
            p + "/console.js",
            r -> asset(js, new MediaType("text", "javascript", StandardCharsets.UTF_8)))
        .GET(p + "/login", this::login)
        .GET(p, view(this::overview))
        .GET(p + "/", view(this::overview))
        .GET(p + "/type", view(this::type))
        .GET(p + "/dead", view(this::dead))
        .GET(p + "/tickets/{id}", view(this::ticket))
        .GET(p + "/search", view(this::search))
        .POST(p + "/actions/{action}", this::act)
        .build();
  }

  private interface Page {
    ServerResponse render(ServerRequest request, View view);
  }

  private HandlerFunction<ServerResponse> view(Page page) {
    return request -> {
      HttpServletRequest http = request.servletRequest();
      String operator = access.operator(http);
      if (operator == null) {
        return problem(401, null, "Not logged in", "The console needs an authenticated operator.");
      }
      View v = view(http, operator);
      if (!access.mayView(http)) {
        return problem(403, null, "Forbidden", "You may not see the localmessage console.");
      }
      try {
        return page.render(request, v);
      } catch (IllegalArgumentException e) {
        return problem(400, v, "Bad request", e.getMessage());
      } catch (RuntimeException e) {
        log.warn("event=console_page_failed uri={} error={}", http.getRequestURI(), e.toString());
        return problem(500, v, "Failed", "The console could not show this page: " + e.getMessage());
      }
    };
  }

  private View view(HttpServletRequest http, String operator) {
    return new View(
        http.getContextPath() + props.getPath(),
        operator,
        access.mayAct(http),
        access.csrf(http),
        engine.replicaId());
  }

  private ServerResponse login(ServerRequest request) {
    HttpServletRequest http = request.servletRequest();
    String base = http.getContextPath() + props.getPath();
    return html(
        200,
        Layout.login(
            base,
            access.loginForm(),
            access.csrf(http),
            request.param("error").isPresent(),
            request.param("logout").isPresent()));
  }

  private ServerResponse overview(ServerRequest request, View v) {
    List<TypeStats> stats = engine.admin().stats();
    return html(
        200,
        OverviewPages.overview(v, stats, activity, param(request, "done"), param(request, "n")));
  }

  private ServerResponse type(ServerRequest request, View v) {
    String name = param(request, "name");
    if (name == null) {
      throw new IllegalArgumentException("name the biz type: /type?name=...");
    }
    TypeStats s =
        engine.admin().stats().stream()
            .filter(t -> t.bizType().equals(name))
            .findFirst()
            .orElse(null);
    return html(200, OverviewPages.type(v, name, s, activity));
  }

  private ServerResponse dead(ServerRequest request, View v) {
    Admin admin = engine.admin();
    String type = param(request, "type");
    long afterId = longParam(request, "afterId", 0);
    int size = props.getPageSize();
    List<TicketView> rows = new ArrayList<>(admin.listDead(type, afterId, size + 1));
    boolean more = rows.size() > size;
    if (more) {
      rows.remove(rows.size() - 1);
    }
    Map<Long, PayloadPreview> previews = new LinkedHashMap<>();
    for (TicketView t : rows) {
      previews.put(t.id(), preview(admin, t));
    }
    List<String> types =
        admin.stats().stream().filter(s -> s.dead() > 0).map(TypeStats::bizType).toList();
    return html(
        200,
        TicketPages.dead(
            v,
            type,
            types,
            afterId,
            rows,
            previews,
            more,
            param(request, "done"),
            param(request, "n")));
  }

  private ServerResponse ticket(ServerRequest request, View v) {
    long id;
    try {
      id = Long.parseLong(request.pathVariable("id"));
    } catch (NumberFormatException e) {
      return problem(404, v, "Not found", "No such ticket.");
    }
    Admin admin = engine.admin();
    TicketView t = admin.get(id).orElse(null);
    PayloadPreview preview = t == null ? null : preview(admin, t);
    return html(
        200,
        TicketPages.ticket(
            v, id, t, preview, admin.audit(id), param(request, "done"), param(request, "n")));
  }

  private ServerResponse search(ServerRequest request, View v) {
    String q = param(request, "q");
    if (q == null) {
      return ServerResponse.seeOther(URI.create(v.base())).build();
    }
    Admin admin = engine.admin();
    TicketView byId = null;
    if (q.matches("\\d{1,18}")) {
      byId = admin.get(Long.parseLong(q)).orElse(null);
    }
    // longer than the columns: nothing can match
    boolean fits = q.length() <= 128;
    List<TicketView> aggregate = fits ? admin.findByAggregate(q, SEARCH_LIMIT) : List.of();
    List<TicketView> key = fits ? admin.findByIdemKey(q) : List.of();
    return html(200, TicketPages.search(v, q, byId, aggregate, key, SEARCH_LIMIT));
  }

  private ServerResponse act(ServerRequest request) {
    HttpServletRequest http = request.servletRequest();
    String operator = access.operator(http);
    if (operator == null) {
      return problem(401, null, "Not logged in", "The console needs an authenticated operator.");
    }
    View v = view(http, operator);
    if (!access.mayAct(http)) {
      return problem(403, v, "Forbidden", "You may look but not act: ask for the role.");
    }
    if (!access.csrfVerified(http)) {
      return problem(
          403, v, "Forbidden", "This action came without a verified CSRF token; reload the page.");
    }
    String action = request.pathVariable("action");
    String reason = param(request, "reason");
    try {
      if (reason == null) {
        throw new IllegalArgumentException("a reason is required: it goes to the audit trail");
      }
      Admin admin = engine.admin();
      return switch (action) {
        case "requeue" -> {
          List<Long> ids = ids(request);
          int n = admin.requeueDead(ids, operator, reason);
          String fallback = ids.size() == 1 ? "/tickets/" + ids.get(0) : "/dead";
          yield done(request, v, fallback, "requeued", n);
        }
        case "requeue-all" -> {
          String type = required(request, "type");
          int n = admin.requeueAllDead(type, operator, reason);
          yield done(request, v, "/dead?type=" + Html.q(type), "requeued", n);
        }
        case "cancel" -> {
          List<Long> ids = ids(request);
          if (ids.size() != 1) {
            throw new IllegalArgumentException("cancel one ticket at a time");
          }
          boolean moved = admin.cancel(ids.get(0), operator, reason);
          yield done(request, v, "/tickets/" + ids.get(0), "canceled", moved ? 1 : 0);
        }
        case "pause", "resume" -> {
          String type = required(request, "type");
          if (action.equals("pause")) {
            admin.pause(type, operator, reason);
          } else {
            admin.resume(type, operator, reason);
          }
          yield done(
              request,
              v,
              "/type?name=" + Html.q(type),
              action.equals("pause") ? "paused" : "resumed",
              1);
        }
        default -> problem(404, v, "Not found", "No such action.");
      };
    } catch (IllegalArgumentException e) {
      return problem(400, v, "Bad request", e.getMessage());
    }
  }

  private ServerResponse done(ServerRequest request, View v, String fallback, String what, long n) {
    String back = param(request, "back");
    String target = back != null && safeBack(v.base(), back) ? back : v.url(fallback);
    String sep = target.indexOf('?') < 0 ? "?" : "&";
    return ServerResponse.seeOther(URI.create(target + sep + "done=" + what + "&n=" + n)).build();
  }

  /** Only back into the console: no open redirect. */
  static boolean safeBack(String base, String back) {
    if (!back.startsWith(base)) {
      return false;
    }
    if (back.length() > base.length() && "/?".indexOf(back.charAt(base.length())) < 0) {
      return false;
    }
    return back.chars().noneMatch(c -> c == '\\' || c < 0x21 || c > 0x7e)
        && !back.contains("/../")
        && !back.contains("//");
  }

  private static List<Long> ids(ServerRequest request) {
    List<String> raw = request.params().getOrDefault("id", List.of());
    if (raw.isEmpty()) {
      throw new IllegalArgumentException("select at least one ticket");
    }
    if (raw.size() > MAX_IDS) {
      throw new IllegalArgumentException(
          "at most " + MAX_IDS + " tickets at once, got " + raw.size() + "; use requeue all");
    }
    List<Long> ids = new ArrayList<>(raw.size());
    for (String s : raw) {
      try {
        ids.add(Long.parseLong(s.strip()));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("'" + s + "' is not a ticket id");
      }
    }
    return ids;
  }

  private PayloadPreview preview(Admin admin, TicketView t) {
    int cap = props.getPayloadPreviewBytes();
    if (cap == 0 || t.payloadBytes() == 0) {
      return null;
    }
    Optional<byte[]> payload = admin.payload(t.id());
    return payload.map(b -> PayloadPreview.of(t, b, redactor, cap)).orElse(null);
  }

  private static String param(ServerRequest request, String name) {
    return request.param(name).map(String::strip).filter(s -> !s.isEmpty()).orElse(null);
  }

  private static String required(ServerRequest request, String name) {
    String v = param(request, name);
    if (v == null) {
      throw new IllegalArgumentException("'" + name + "' is required");
    }
    return v;
  }

  private static long longParam(ServerRequest request, String name, long fallback) {
    String v = param(request, name);
    if (v == null) {
      return fallback;
    }
    try {
      long n = Long.parseLong(v);
      if (n < 0) {
        throw new NumberFormatException();
      }
      return n;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be a non-negative number, was '" + v + "'");
    }
  }

  private ServerResponse problem(int status, View v, String title, String message) {
    return html(status, Layout.problem(v, title, message));
  }

  private static ServerResponse html(int status, String body) {
    return ServerResponse.status(status)
        .contentType(HTML)
        .headers(ConsoleRoutes::secure)
        .body(body);
  }

  private static ServerResponse asset(String body, MediaType type) {
    return ServerResponse.ok()
        .contentType(type)
        .header("X-Content-Type-Options", "nosniff")
        .header(HttpHeaders.CACHE_CONTROL, "max-age=300")
        .body(body);
  }

  private static void secure(HttpHeaders h) {
    h.set("Content-Security-Policy", CSP);
    h.set("X-Content-Type-Options", "nosniff");
    h.set("X-Frame-Options", "DENY");
    h.set("Referrer-Policy", "no-referrer");
    h.setCacheControl("no-store");
  }

  private static String resource(String name) {
    try (InputStream in = ConsoleRoutes.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing console resource " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
