package io.localmessage.console.internal;

import static io.localmessage.console.internal.Responses.param;
import static io.localmessage.console.internal.Responses.problem;
import static io.localmessage.console.internal.Responses.required;

import io.localmessage.LocalMessages;
import io.localmessage.MessageInFlightException;
import io.localmessage.admin.Admin;
import jakarta.servlet.http.HttpServletRequest;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The console's POST actions: requeue (one or selected), requeue all dead of a type, cancel, pause,
 * resume. Each needs an operator allowed to act, a verified CSRF token and a reason; each is
 * audited by the core with that operator and reason; each ends in a redirect back into the console
 * (post/redirect/get).
 */
final class ConsoleActions {
  /**
   * Messages per request: the largest page, and well below the servlet container's own parameter
   * limit (Tomcat's is 1000), so that a larger selection gets this console's answer, not the
   * container's.
   */
  static final int MAX_IDS = 500;

  private final LocalMessages engine;
  private final ConsoleAccess access;
  private final String path;

  ConsoleActions(LocalMessages engine, ConsoleAccess access, String path) {
    this.engine = engine;
    this.access = access;
    this.path = path;
  }

  ServerResponse act(ServerRequest request) {
    HttpServletRequest http = request.servletRequest();
    String operator = access.operator(http);
    if (operator == null) {
      return problem(401, null, "Not logged in", "The console needs an authenticated operator.");
    }
    View v = View.of(http, path, operator, access, engine.replicaId());
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
    } catch (MessageInFlightException e) {
      // not an error of the console: the operator learns why and what to do instead
      return problem(409, v, "In flight", e.getMessage());
    }
  }

  private static ServerResponse done(
      ServerRequest request, View v, String fallback, String what, long n) {
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
}
