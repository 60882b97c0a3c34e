package io.localmessage.console.internal;

import static io.localmessage.console.internal.Responses.asset;
import static io.localmessage.console.internal.Responses.html;
import static io.localmessage.console.internal.Responses.longParam;
import static io.localmessage.console.internal.Responses.param;
import static io.localmessage.console.internal.Responses.problem;

import io.localmessage.LocalMessages;
import io.localmessage.Printable;
import io.localmessage.Texts;
import io.localmessage.admin.Admin;
import io.localmessage.admin.MessageView;
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
  static final int SEARCH_LIMIT = 100;

  private final LocalMessages engine;
  private final ConsoleProperties props;
  private final ConsoleAccess access;
  private final PayloadRedactor redactor;
  private final ActivityRecorder activity;
  private final ConsoleActions actions;
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
    this.actions = new ConsoleActions(engine, access, props.getPath());
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
        .POST(p + "/actions/{action}", actions::act)
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
        log.warn(
            "event=console_page_failed uri={} error={}",
            Printable.escape(http.getRequestURI()),
            Printable.escape(e.toString()));
        return problem(500, v, "Failed", "The console could not show this page: " + e.getMessage());
      }
    };
  }

  private View view(HttpServletRequest http, String operator) {
    return View.of(http, props.getPath(), operator, access, engine.replicaId());
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
    List<MessageView> rows = new ArrayList<>(admin.listDead(type, afterId, size + 1));
    boolean more = rows.size() > size;
    if (more) {
      rows.remove(rows.size() - 1);
    }
    Map<Long, PayloadPreview> previews = new LinkedHashMap<>();
    for (MessageView t : rows) {
      previews.put(t.id(), preview(admin, t));
    }
    List<String> types =
        admin.stats().stream().filter(s -> s.dead() > 0).map(TypeStats::bizType).toList();
    return html(
        200,
        MessagePages.dead(
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
    MessageView t = admin.get(id).orElse(null);
    PayloadPreview preview = t == null ? null : preview(admin, t);
    return html(
        200,
        MessagePages.ticket(
            v, id, t, preview, admin.audit(id), param(request, "done"), param(request, "n")));
  }

  private ServerResponse search(ServerRequest request, View v) {
    String q = param(request, "q");
    if (q == null) {
      return ServerResponse.seeOther(URI.create(v.base())).build();
    }
    String unstorable = Texts.unstorable(q);
    if (unstorable != null) {
      throw new IllegalArgumentException("the search text " + unstorable);
    }
    Admin admin = engine.admin();
    MessageView byId = null;
    if (q.matches("\\d{1,18}")) {
      byId = admin.get(Long.parseLong(q)).orElse(null);
    }
    // longer than the columns: nothing can match
    boolean fits = q.length() <= 128;
    List<MessageView> aggregate = fits ? admin.findByAggregate(q, SEARCH_LIMIT) : List.of();
    List<MessageView> key = fits ? admin.findByIdemKey(q) : List.of();
    return html(200, MessagePages.search(v, q, byId, aggregate, key, SEARCH_LIMIT));
  }

  private PayloadPreview preview(Admin admin, MessageView t) {
    int cap = props.getPayloadPreviewBytes();
    if (cap == 0 || t.payloadBytes() == 0) {
      return null;
    }
    Optional<byte[]> payload = admin.payload(t.id());
    return payload.map(b -> PayloadPreview.of(t, b, redactor, cap)).orElse(null);
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
