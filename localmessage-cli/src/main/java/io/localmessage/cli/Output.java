package io.localmessage.cli;

import io.localmessage.Printable;
import io.localmessage.admin.AuditEntry;
import io.localmessage.admin.MessageView;
import io.localmessage.admin.TypeStats;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.core.json.JsonWriteFeature;
import tools.jackson.databind.json.JsonMapper;

/** Prints rows as an aligned text table or as JSON. */
final class Output {
  /**
   * Control characters are escaped by JSON itself; non-ASCII ones are escaped too, so that no
   * bidirectional override reaches a terminal that prints the JSON.
   */
  private static final JsonMapper JSON =
      JsonMapper.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();

  private final PrintWriter out;
  private final boolean json;

  Output(PrintWriter out, boolean json) {
    this.out = out;
    this.json = json;
  }

  void json(Object value) {
    out.println(JSON.writeValueAsString(value));
  }

  boolean isJson() {
    return json;
  }

  void message(String text, Map<String, Object> asJson) {
    if (json) {
      json(asJson);
    } else {
      out.println(text);
    }
  }

  void stats(List<TypeStats> stats) {
    if (json) {
      List<Map<String, Object>> rows = new ArrayList<>();
      for (TypeStats s : stats) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("bizType", s.bizType());
        m.put("pending", s.pending());
        m.put("dueNow", s.dueNow());
        m.put("inFlight", s.inFlight());
        m.put("dead", s.dead());
        m.put("canceled", s.canceled());
        m.put("succeeded", s.succeeded());
        m.put("oldestPendingAgeSeconds", s.oldestPendingAge().toSeconds());
        m.put("oldestDeadAgeSeconds", s.oldestDeadAge().toSeconds());
        m.put("paused", s.paused());
        rows.add(m);
      }
      json(rows);
      return;
    }
    List<String[]> rows = new ArrayList<>();
    rows.add(
        new String[] {
          "BIZ_TYPE",
          "PENDING",
          "DUE",
          "IN_FLIGHT",
          "DEAD",
          "CANCELED",
          "SUCCEEDED",
          "OLDEST_PENDING",
          "OLDEST_DEAD",
          "PAUSED"
        });
    for (TypeStats s : stats) {
      rows.add(
          new String[] {
            s.bizType(),
            n(s.pending()),
            n(s.dueNow()),
            n(s.inFlight()),
            n(s.dead()),
            n(s.canceled()),
            n(s.succeeded()),
            age(s.oldestPendingAge()),
            age(s.oldestDeadAge()),
            s.paused() ? "yes" : "no"
          });
    }
    table(rows);
  }

  void messages(List<MessageView> messages) {
    if (json) {
      json(messages);
      return;
    }
    List<String[]> rows = new ArrayList<>();
    rows.add(
        new String[] {
          "ID",
          "BIZ_TYPE",
          "IDEM_KEY",
          "AGGREGATE",
          "STATUS",
          "ATTEMPTS",
          "UPDATED_AT",
          "LAST_ERROR"
        });
    for (MessageView t : messages) {
      rows.add(
          new String[] {
            Long.toString(t.id()),
            t.bizType(),
            t.idemKey(),
            t.aggregateId() == null ? "" : t.aggregateId(),
            t.status().name(),
            t.attempts() + "/" + t.maxAttempts(),
            String.valueOf(t.updatedAt()),
            cut(t.lastError(), 60)
          });
    }
    table(rows);
  }

  void message(MessageView t, List<AuditEntry> audit) {
    if (json) {
      Map<String, Object> m = new LinkedHashMap<>();
      // the keys scripts read, kept from the first version ("message", "ticketId")
      m.put("ticket", t);
      List<Map<String, Object>> entries = new ArrayList<>();
      for (AuditEntry a : audit) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("id", a.id());
        e.put("ticketId", a.messageId());
        e.put("bizType", a.bizType());
        e.put("action", a.action());
        e.put("operator", a.operator());
        e.put("reason", a.reason());
        e.put("at", a.at());
        entries.add(e);
      }
      m.put("audit", entries);
      json(m);
      return;
    }
    out.printf("id            %d%n", t.id());
    out.printf("kind          %s%n", t.kind());
    out.printf("biz_type      %s%n", safe(t.bizType()));
    out.printf("idem_key      %s%n", safe(t.idemKey()));
    out.printf("aggregate_id  %s%n", safe(t.aggregateId()));
    out.printf("destination   %s%n", safe(t.destination()));
    out.printf("status        %s%n", t.status());
    out.printf("attempts      %d/%d%n", t.attempts(), t.maxAttempts());
    out.printf("next_retry_at %s%n", t.nextRetryAt());
    out.printf("lease_owner   %s%n", safe(t.leaseOwner()));
    out.printf("version       %d%n", t.version());
    out.printf("created_at    %s%n", t.createdAt());
    out.printf("updated_at    %s%n", t.updatedAt());
    out.printf("payload       %d bytes%n", t.payloadBytes());
    out.printf("headers       %s%n", safe(t.headers()));
    out.printf("last_error    %s%n", safe(t.lastError()));
    if (!audit.isEmpty()) {
      out.println("audit:");
      for (AuditEntry a : audit) {
        out.printf("  %s %s by %s: %s%n", a.at(), a.action(), safe(a.operator()), safe(a.reason()));
      }
    }
  }

  private void table(List<String[]> rows) {
    for (String[] r : rows) {
      for (int i = 0; i < r.length; i++) {
        r[i] = safe(r[i]);
      }
    }
    int[] width = new int[rows.get(0).length];
    for (String[] r : rows) {
      for (int i = 0; i < r.length; i++) {
        width[i] = Math.max(width[i], r[i].length());
      }
    }
    for (String[] r : rows) {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < r.length; i++) {
        sb.append(i == 0 ? "" : "  ");
        sb.append(i == r.length - 1 ? r[i] : String.format("%-" + width[i] + "s", r[i]));
      }
      out.println(sb.toString().stripTrailing());
    }
  }

  /**
   * Stored strings come from senders and handlers: control characters (terminal escape sequences
   * included) and bidirectional overrides are printed as {@code \}{@code uXXXX}, never sent to the
   * operator's terminal. JSON output escapes them already.
   */
  static String safe(Object value) {
    return Printable.escape(String.valueOf(value));
  }

  private static String n(long v) {
    return Long.toString(v);
  }

  static String age(Duration d) {
    if (d.isZero()) {
      return "-";
    }
    long s = d.toSeconds();
    if (s < 120) {
      return s + "s";
    }
    if (s < 7200) {
      return (s / 60) + "m";
    }
    if (s < 172800) {
      return (s / 3600) + "h";
    }
    return (s / 86400) + "d";
  }

  private static String cut(String s, int max) {
    if (s == null) {
      return "";
    }
    String one = s.replace('\n', ' ');
    return one.length() <= max ? one : one.substring(0, max - 3) + "...";
  }
}
