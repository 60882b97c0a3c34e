package io.localmessage.spring.internal;

import io.localmessage.LocalMessages;
import io.localmessage.MessageInFlightException;
import io.localmessage.Printable;
import io.localmessage.admin.Admin;
import io.localmessage.admin.AuditEntry;
import io.localmessage.admin.MessageView;
import io.localmessage.admin.TypeStats;
import io.localmessage.spring.OperatorRule;
import java.security.Principal;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * Actuator endpoint {@code localmessage}. Over the web (only when the application exposes it, e.g.
 * {@code management.endpoints.web.exposure.include=health,localmessage}):
 *
 * <ul>
 *   <li>{@code GET /actuator/localmessage}: backlog per biz type and the paused types;
 *   <li>{@code GET /actuator/localmessage/dead?type=&afterId=&limit=}: DEAD messages, by id;
 *   <li>{@code GET /actuator/localmessage/{id}}: one message (without its payload) and its audit
 *       trail;
 *   <li>{@code POST /actuator/localmessage/{action}/{target}} with {@code {"reason": "..."}}:
 *       {@code requeue/<id>}, {@code cancel/<id>}, {@code requeue-dead/<biz-type>}, {@code
 *       pause/<biz-type>}, {@code resume/<biz-type>};
 *   <li>{@code DELETE /actuator/localmessage/{id}?reason=...}: cancel a message.
 * </ul>
 *
 * <p>Read-only unless the application sets {@code localmessage.endpoint.write-enabled=true}, which
 * needs Spring Security. Then every action needs an authenticated principal holding the operator
 * authority ({@code localmessage.console.action-authority}, the console's), answers 403 otherwise,
 * and is audited with that principal's name and the reason, which is required. Bad input answers
 * 400 with {@code {"error": "..."}} saying what is wrong, and changes nothing. Not API.
 */
@Endpoint(id = "localmessage")
public final class LocalMessageEndpoint {
  private static final Logger log = LoggerFactory.getLogger(LocalMessageEndpoint.class);
  static final int DEFAULT_LIMIT = 50;
  static final int MAX_LIMIT = 500;

  private final LocalMessages engine;
  private final OperatorRule rule;
  private final boolean writeEnabled;

  /**
   * @param rule who may act
   * @param writeEnabled whether the write operations act at all; when false they answer 403
   */
  public LocalMessageEndpoint(LocalMessages engine, OperatorRule rule, boolean writeEnabled) {
    this.engine = engine;
    this.rule = rule;
    this.writeEnabled = writeEnabled;
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

  /** A message without its payload; times as ISO-8601 instants. */
  public record MessageSummary(
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

  /** One message and its audit trail. */
  public record MessageDetail(MessageSummary message, List<AuditRow> audit) {}

  /** One recorded operator action. */
  public record AuditRow(String action, String operator, String reason, String at) {}

  /** What an action did: {@code changed} messages (or 1/0 for pause and resume). */
  public record ActionResult(String action, String target, long changed, String operator) {}

  @ReadOperation
  public Overview overview() {
    Admin admin = engine.admin();
    List<TypeRow> rows = admin.stats().stream().map(LocalMessageEndpoint::row).toList();
    return new Overview(engine.replicaId(), admin.paused(), rows);
  }

  /**
   * {@code GET .../dead}: DEAD messages of {@code type} (all when absent) with id above afterId;
   * {@code GET .../<id>}: that message (without its payload) and its audit trail, 404 when there is
   * no such message.
   */
  @ReadOperation
  public WebEndpointResponse<Object> show(
      @Selector String id, @Nullable String type, @Nullable Long afterId, @Nullable Integer limit) {
    if (!"dead".equals(id)) {
      long ticket;
      try {
        ticket = Long.parseLong(id);
      } catch (NumberFormatException e) {
        return bad(
            "'" + Printable.escape(id) + "' is neither 'dead' (the dead letters) nor a message id");
      }
      return engine
          .admin()
          .get(ticket)
          .<WebEndpointResponse<Object>>map(
              t ->
                  new WebEndpointResponse<>(
                      new MessageDetail(
                          row(t),
                          engine.admin().audit(ticket).stream()
                              .map(LocalMessageEndpoint::row)
                              .toList())))
          .orElseGet(
              () ->
                  new WebEndpointResponse<>(Map.of("error", "no message with id " + ticket), 404));
    }
    int n = limit == null ? DEFAULT_LIMIT : limit;
    if (n < 1 || n > MAX_LIMIT) {
      return bad("limit must be between 1 and " + MAX_LIMIT + ", was " + n);
    }
    String bizType = type == null || type.isBlank() ? null : type;
    try {
      return new WebEndpointResponse<>(
          engine.admin().listDead(bizType, afterId == null ? 0 : afterId, n).stream()
              .map(LocalMessageEndpoint::row)
              .toList());
    } catch (IllegalArgumentException e) {
      return bad(e.getMessage());
    }
  }

  @WriteOperation
  public WebEndpointResponse<Object> act(
      @Selector String action,
      @Selector String target,
      @Nullable String reason,
      SecurityContext security) {
    String operator = operator(security);
    if (operator == null) {
      return refused(security);
    }
    if (reason == null || reason.isBlank()) {
      return bad(REASON_REQUIRED);
    }
    String why = reason.strip();
    Admin admin = engine.admin();
    try {
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
                throw new IllegalArgumentException(
                    "unknown action '"
                        + Printable.escape(action)
                        + "': use requeue/<id>, cancel/<id>, requeue-dead/<biz-type>,"
                        + " pause/<biz-type> or resume/<biz-type>");
          };
      return new WebEndpointResponse<>(new ActionResult(action, target, changed, operator));
    } catch (MessageInFlightException e) {
      return new WebEndpointResponse<>(Map.of("error", e.getMessage()), 409);
    } catch (IllegalArgumentException e) {
      return bad(e.getMessage());
    }
  }

  @DeleteOperation
  public WebEndpointResponse<Object> cancel(
      @Selector String id, @Nullable String reason, SecurityContext security) {
    String operator = operator(security);
    if (operator == null) {
      return refused(security);
    }
    if (reason == null || reason.isBlank()) {
      return bad(REASON_REQUIRED + " (DELETE takes it as ?reason=...)");
    }
    try {
      boolean done = engine.admin().cancel(ticketId(id), operator, reason.strip());
      return new WebEndpointResponse<>(new ActionResult("cancel", id, done ? 1 : 0, operator));
    } catch (MessageInFlightException e) {
      // the handler may still be running: refusing is the answer, not an error of the server
      return new WebEndpointResponse<>(Map.of("error", e.getMessage()), 409);
    } catch (IllegalArgumentException e) {
      return bad(e.getMessage());
    }
  }

  /** The authorized operator's name, or null when this call may not act. */
  private String operator(SecurityContext security) {
    return writeEnabled ? ActuatorOperator.authorized(security, rule) : null;
  }

  private WebEndpointResponse<Object> refused(SecurityContext security) {
    String why;
    if (!writeEnabled) {
      why =
          "the localmessage endpoint is read-only: the application opts in to its write"
              + " operations with localmessage.endpoint.write-enabled=true";
    } else {
      why =
          "operator actions need an authenticated user with the authority "
              + String.join(" or ", new java.util.TreeSet<>(rule.forms()));
      Principal p = security == null ? null : security.getPrincipal();
      log.warn(
          "event=endpoint_action_refused principal={}",
          p == null ? "-" : Printable.escape(p.getName()));
    }
    return new WebEndpointResponse<>(Map.of("error", why), 403);
  }

  /** Said when an action comes without a reason, whatever the door. */
  static final String REASON_REQUIRED =
      "a reason is required: it goes to the audit trail. Send {\"reason\": \"...\"} with"
          + " Content-Type: application/json";

  private static long ticketId(String target) {
    try {
      return Long.parseLong(target);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("'" + Printable.escape(target) + "' is not a message id");
    }
  }

  private static WebEndpointResponse<Object> bad(String message) {
    return new WebEndpointResponse<>(Map.of("error", message), 400);
  }

  private static AuditRow row(AuditEntry a) {
    return new AuditRow(a.action(), a.operator(), a.reason(), text(a.at()));
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

  private static MessageSummary row(MessageView t) {
    return new MessageSummary(
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
