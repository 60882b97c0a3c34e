package io.localmessage.spring.internal;

import io.localmessage.LocalMessages;
import io.localmessage.admin.Admin;
import io.localmessage.admin.TicketView;
import io.localmessage.admin.TypeStats;
import java.security.Principal;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * Actuator endpoint {@code localmessage}. Over the web (only when the application exposes it, e.g.
 * {@code management.endpoints.web.exposure.include=health,localmessage}):
 *
 * <ul>
 *   <li>{@code GET /actuator/localmessage}: backlog per biz type and the paused types;
 *   <li>{@code GET /actuator/localmessage/dead?type=&afterId=&limit=}: DEAD tickets, by id;
 *   <li>{@code POST /actuator/localmessage/{action}/{target}} with {@code {"reason": "..."}}:
 *       {@code requeue/<id>}, {@code cancel/<id>}, {@code requeue-dead/<biz-type>}, {@code
 *       pause/<biz-type>}, {@code resume/<biz-type>};
 *   <li>{@code DELETE /actuator/localmessage/{id}?reason=...}: cancel a ticket.
 * </ul>
 *
 * <p>Every action is audited with the authenticated principal's name (or {@code actuator}) and the
 * reason, which is required. Not API.
 */
@Endpoint(id = "localmessage")
public final class LocalMessageEndpoint {
  static final int DEFAULT_LIMIT = 50;
  static final int MAX_LIMIT = 500;

  private final LocalMessages engine;

  public LocalMessageEndpoint(LocalMessages engine) {
    this.engine = engine;
  }

  /** The backlog as the endpoint shows it. */
  public record Overview(String replica, List<String> paused, List<TypeRow> types) {}

  /** One biz type's backlog; ages as ISO-8601 durations. */
  public record TypeRow(
      String bizType,
      long pending,
      long dueNow,
      long inFlight,
      long dead,
      long canceled,
      long succeeded,
      String oldestPendingAge,
      String oldestDeadAge,
      boolean paused) {}

  /** A ticket without its payload; times as ISO-8601 instants. */
  public record TicketRow(
      long id,
      String kind,
      String bizType,
      String idemKey,
      String aggregateId,
      String destination,
      int payloadBytes,
      Map<String, String> headers,
      String status,
      int attempts,
      int maxAttempts,
      String nextRetryAt,
      String lastError,
      String createdAt,
      String updatedAt) {}

  /** What an action did: {@code changed} tickets (or 1/0 for pause and resume). */
  public record ActionResult(String action, String target, long changed, String operator) {}

  @ReadOperation
  public Overview overview() {
    Admin admin = engine.admin();
    List<TypeRow> rows = admin.stats().stream().map(LocalMessageEndpoint::row).toList();
    return new Overview(engine.replicaId(), admin.paused(), rows);
  }

  /** {@code GET .../dead}: DEAD tickets of {@code type} (all when absent) with id above afterId. */
  @ReadOperation
  public @Nullable List<TicketRow> list(
      @Selector String section,
      @Nullable String type,
      @Nullable Long afterId,
      @Nullable Integer limit) {
    if (!"dead".equals(section)) {
      return null; // 404
    }
    int n = limit == null ? DEFAULT_LIMIT : limit;
    if (n < 1 || n > MAX_LIMIT) {
      throw invalid("limit must be between 1 and " + MAX_LIMIT + ", was " + n);
    }
    String bizType = type == null || type.isBlank() ? null : type;
    return engine.admin().listDead(bizType, afterId == null ? 0 : afterId, n).stream()
        .map(LocalMessageEndpoint::row)
        .toList();
  }

  @WriteOperation
  public ActionResult act(
      @Selector String action, @Selector String target, String reason, SecurityContext security) {
    String why = requireReason(reason);
    String operator = operator(security);
    Admin admin = engine.admin();
    long changed =
        switch (action) {
          case "requeue" -> admin.requeueDead(List.of(ticketId(target)), operator, why);
          case "cancel" -> admin.cancel(ticketId(target), operator, why) ? 1 : 0;
          case "requeue-dead" -> admin.requeueAllDead(target, operator, why);
          case "pause" -> {
            admin.pause(target, operator, why);
            yield 1;
          }
          case "resume" -> {
            admin.resume(target, operator, why);
            yield 1;
          }
          default ->
              throw invalid(
                  "unknown action '"
                      + action
                      + "': use requeue/<id>, cancel/<id>, requeue-dead/<biz-type>,"
                      + " pause/<biz-type> or resume/<biz-type>");
        };
    return new ActionResult(action, target, changed, operator);
  }

  @DeleteOperation
  public ActionResult cancel(@Selector String id, String reason, SecurityContext security) {
    String why = requireReason(reason);
    String operator = operator(security);
    boolean done = engine.admin().cancel(ticketId(id), operator, why);
    return new ActionResult("cancel", id, done ? 1 : 0, operator);
  }

  private static String operator(SecurityContext security) {
    Principal p = security == null ? null : security.getPrincipal();
    String name = p == null ? null : p.getName();
    return name == null || name.isBlank() ? "actuator" : name;
  }

  private static String requireReason(String reason) {
    if (reason == null || reason.isBlank()) {
      throw invalid("a reason is required: it goes to the audit trail");
    }
    return reason.strip();
  }

  private static long ticketId(String target) {
    try {
      return Long.parseLong(target);
    } catch (NumberFormatException e) {
      throw invalid("'" + target + "' is not a ticket id");
    }
  }

  private static InvalidEndpointRequestException invalid(String message) {
    return new InvalidEndpointRequestException(message, message);
  }

  private static TypeRow row(TypeStats s) {
    return new TypeRow(
        s.bizType(),
        s.pending(),
        s.dueNow(),
        s.inFlight(),
        s.dead(),
        s.canceled(),
        s.succeeded(),
        s.oldestPendingAge().toString(),
        s.oldestDeadAge().toString(),
        s.paused());
  }

  private static TicketRow row(TicketView t) {
    return new TicketRow(
        t.id(),
        t.kind().name(),
        t.bizType(),
        t.idemKey(),
        t.aggregateId(),
        t.destination(),
        t.payloadBytes(),
        t.headers(),
        t.status().name(),
        t.attempts(),
        t.maxAttempts(),
        text(t.nextRetryAt()),
        t.lastError(),
        text(t.createdAt()),
        text(t.updatedAt()));
  }

  private static String text(Instant instant) {
    return instant == null ? null : instant.toString();
  }
}
