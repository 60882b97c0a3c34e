package io.localmessage.console.internal;

import io.localmessage.MessageStatus;
import io.localmessage.admin.AuditEntry;
import io.localmessage.admin.MessageView;
import java.util.List;
import java.util.Map;

/** Dead letters, one message with its audit trail, and search results. */
final class MessagePages {
  private MessagePages() {}

  static String dead(
      View v,
      String type,
      List<String> types,
      long afterId,
      List<MessageView> rows,
      Map<Long, PayloadPreview> previews,
      boolean more,
      String done,
      String n) {
    Html h = Layout.open(v, "Dead letters");
    h.el("h1", type == null ? "Dead letters" : "Dead letters of " + type);
    Layout.notice(h, done, n);
    h.raw("<form class=\"filters\" method=\"get\"").attr("action", v.url("/dead")).raw(">");
    h.raw("<label>Biz type <select name=\"type\"><option value=\"\">all</option>");
    for (String t : types) {
      h.raw("<option").attr("value", t).raw(t.equals(type) ? " selected" : "").raw(">");
      h.text(t).raw("</option>");
    }
    h.raw("</select></label><button type=\"submit\">Show</button></form>");
    if (rows.isEmpty()) {
      h.raw("<p>").text(afterId > 0 ? "No more dead letters." : "No dead letters.").raw("</p>");
      pager(h, v, type, afterId, rows, false);
      return Layout.close(h);
    }
    String back = v.url("/dead" + query(type, afterId));
    if (v.mayAct()) {
      h.raw("<form class=\"action\" id=\"requeue-selected\" method=\"post\"");
      h.attr("action", v.url("/actions/requeue")).raw(">");
      Layout.csrf(h, v.csrf());
      h.hidden("back", back);
      Layout.reasonAndButton(h, "Requeue selected", false);
      h.raw("</form>");
    }
    h.raw("<table id=\"dead\"><thead><tr>");
    if (v.mayAct()) {
      h.raw("<th><input type=\"checkbox\" id=\"select-all\" aria-label=\"select all\"></th>");
    }
    h.raw("<th>Id</th><th>Biz type</th><th>Idem key</th><th>Aggregate</th><th>Attempts</th>")
        .raw("<th>Last error</th><th>Created</th><th>Updated</th><th>Payload</th></tr></thead>")
        .raw("<tbody>");
    for (MessageView t : rows) {
      h.raw("<tr").attr("data-id", t.id()).raw(">");
      if (v.mayAct()) {
        h.raw("<td><input type=\"checkbox\" name=\"id\" form=\"requeue-selected\"");
        h.attr("value", t.id()).attr("aria-label", "select " + t.id()).raw("></td>");
      }
      h.raw("<td>").link(v.url("/tickets/" + t.id()), t.id()).raw("</td>");
      h.el("td", t.bizType()).el("td class=\"mono\"", t.idemKey());
      h.raw("<td class=\"mono\">");
      if (t.aggregateId() != null) {
        h.link(v.url("/search?q=" + Html.q(t.aggregateId())), t.aggregateId());
      }
      h.raw("</td>");
      h.el("td class=\"n\"", t.attempts() + "/" + t.maxAttempts());
      h.el("td class=\"err\"", t.lastError());
      h.el("td", Html.time(t.createdAt())).el("td", Html.time(t.updatedAt()));
      h.raw("<td>");
      payload(h, previews.get(t.id()), t.payloadBytes(), true);
      h.raw("</td></tr>");
    }
    h.raw("</tbody></table>");
    pager(h, v, type, afterId, rows, more);
    if (type != null) {
      Layout.actionForm(
          h,
          v,
          "requeue-all",
          new String[][] {{"type", type}, {"back", v.url("/dead?type=" + Html.q(type))}},
          "Requeue all dead of " + type,
          "Requeue every dead ticket of " + type + "?",
          "requeue-all-form");
    }
    return Layout.close(h);
  }

  private static String query(String type, long afterId) {
    StringBuilder q = new StringBuilder();
    if (type != null) {
      q.append("?type=").append(Html.q(type));
    }
    if (afterId > 0) {
      q.append(q.length() == 0 ? '?' : '&').append("afterId=").append(afterId);
    }
    return q.toString();
  }

  private static void pager(
      Html h, View v, String type, long afterId, List<MessageView> rows, boolean more) {
    h.raw("<div class=\"pager\">");
    if (afterId > 0) {
      h.link(v.url("/dead" + query(type, 0)), "« first page");
    }
    if (more) {
      long last = rows.get(rows.size() - 1).id();
      h.raw("<a rel=\"next\"")
          .attr("href", v.url("/dead" + query(type, last)))
          .raw(">next page »</a>");
    }
    h.raw("</div>");
  }

  static void payload(Html h, PayloadPreview p, int size, boolean collapsed) {
    if (size == 0) {
      h.raw("<span class=\"muted\">empty</span>");
      return;
    }
    if (p == null || p.text() == null) {
      h.raw("<span class=\"muted\">").text(size + " bytes, not shown").raw("</span>");
      return;
    }
    String summary =
        size + " bytes" + (p.binary() ? ", binary (hex)" : "") + (p.truncated() ? ", cut" : "");
    if (collapsed) {
      h.raw("<details><summary>").text(summary).raw("</summary>");
    } else {
      h.raw("<p class=\"muted\">").text(summary).raw("</p>");
    }
    h.raw("<pre class=\"payload\">").text(p.text()).raw(p.truncated() ? "…" : "").raw("</pre>");
    if (collapsed) {
      h.raw("</details>");
    }
  }

  static String ticket(
      View v,
      long id,
      MessageView t,
      PayloadPreview preview,
      List<AuditEntry> audit,
      String done,
      String n) {
    Html h = Layout.open(v, "Ticket " + id);
    h.raw("<h1>Ticket ").text(id);
    if (t != null) {
      h.raw(" <span id=\"status\"").attr("class", "badge " + t.status().name()).raw(">");
      h.text(t.status().name()).raw("</span>");
    }
    h.raw("</h1>");
    Layout.notice(h, done, n);
    if (t == null) {
      h.raw("<p id=\"status\" class=\"muted\">Not in the table: it never existed, or it")
          .raw(" succeeded and was deleted, or it was purged. Its audit trail remains.</p>");
    } else {
      details(h, v, t, preview);
      actions(h, v, t);
    }
    h.el("h2", "Audit trail");
    if (audit.isEmpty()) {
      h.raw("<p class=\"muted\">No operator action on this ticket.</p>");
    } else {
      h.raw("<table id=\"audit\"><thead><tr><th>At</th><th>Action</th><th>Operator</th>")
          .raw("<th>Reason</th></tr></thead><tbody>");
      for (AuditEntry a : audit) {
        h.raw("<tr>").el("td", Html.time(a.at())).el("td", a.action()).el("td", a.operator());
        h.el("td", a.reason()).raw("</tr>");
      }
      h.raw("</tbody></table>");
    }
    return Layout.close(h);
  }

  private static void details(Html h, View v, MessageView t, PayloadPreview preview) {
    h.raw("<dl class=\"fields\">");
    h.el("dt", "Biz type").raw("<dd>");
    h.link(v.url("/type?name=" + Html.q(t.bizType())), t.bizType()).raw("</dd>");
    h.el("dt", "Kind").el("dd", t.kind());
    h.el("dt", "Idem key").el("dd class=\"mono\"", t.idemKey());
    h.el("dt", "Aggregate").raw("<dd class=\"mono\">");
    if (t.aggregateId() != null) {
      h.link(v.url("/search?q=" + Html.q(t.aggregateId())), t.aggregateId());
    }
    h.raw("</dd>");
    h.el("dt", "Destination").el("dd class=\"mono\"", t.destination());
    h.el("dt", "Attempts").el("dd", t.attempts() + " of " + t.maxAttempts());
    if (t.status() == MessageStatus.PENDING) {
      h.el("dt", "Due / lease end").el("dd", Html.time(t.nextRetryAt()));
    }
    h.el("dt", "Lease owner").el("dd class=\"mono\"", t.leaseOwner());
    h.el("dt", "Version").el("dd", t.version());
    h.el("dt", "Created").el("dd", Html.time(t.createdAt()));
    h.el("dt", "Updated").el("dd", Html.time(t.updatedAt()));
    h.el("dt", "Headers").raw("<dd class=\"mono\">");
    t.headers().forEach((k, val) -> h.text(k).text(": ").text(val).raw("<br>"));
    h.raw("</dd>");
    h.el("dt", "Last error").el("dd class=\"err\" id=\"last-error\"", t.lastError());
    h.raw("</dl>");
    h.el("h2", "Payload");
    payload(h, preview, t.payloadBytes(), false);
  }

  private static void actions(Html h, View v, MessageView t) {
    String[][] self = {{"id", Long.toString(t.id())}, {"back", v.url("/tickets/" + t.id())}};
    boolean dead = t.status() == MessageStatus.DEAD;
    boolean cancelable = dead || t.status() == MessageStatus.PENDING;
    if (!cancelable) {
      return;
    }
    h.el("h2", "Actions");
    if (!v.mayAct()) {
      h.raw("<p class=\"muted\">You may look but not act.</p>");
      return;
    }
    if (dead) {
      Layout.actionForm(h, v, "requeue", self, "Requeue", null, "requeue-form");
    }
    Layout.actionForm(
        h,
        v,
        "cancel",
        self,
        "Cancel ticket",
        "Cancel ticket "
            + t.id()
            + "? It will never be delivered; nothing is undone."
            + (t.aggregateId() == null
                ? ""
                : " For an ordered type the next ticket of its aggregate starts: a purge never"
                    + " releases it, this decision does."),
        "cancel-form");
  }

  static String search(
      View v,
      String q,
      MessageView byId,
      List<MessageView> aggregate,
      List<MessageView> key,
      int limit) {
    Html h = Layout.open(v, "Search");
    h.raw("<h1>Search <span class=\"mono\">").text(q).raw("</span></h1>");
    h.raw("<form class=\"filters\" method=\"get\"").attr("action", v.url("/search")).raw(">");
    h.raw("<input name=\"q\" required aria-label=\"query\"").attr("value", q).raw(">");
    h.raw("<button type=\"submit\">Search</button></form>");
    if (byId != null) {
      h.el("h2", "Ticket id " + byId.id());
      list(h, v, List.of(byId), "by-id");
    }
    h.el("h2", "Aggregate id");
    list(h, v, aggregate, "by-aggregate");
    if (aggregate.size() >= limit) {
      h.raw("<p class=\"muted\">The first ").text(limit).raw(" tickets of this aggregate.</p>");
    }
    h.el("h2", "Idempotency key");
    list(h, v, key, "by-key");
    return Layout.close(h);
  }

  private static void list(Html h, View v, List<MessageView> rows, String id) {
    if (rows.isEmpty()) {
      h.raw("<p class=\"muted\"").attr("id", id).raw(">Nothing found.</p>");
      return;
    }
    h.raw("<table")
        .attr("id", id)
        .raw("><thead><tr><th>Id</th><th>Status</th><th>Biz type</th>")
        .raw("<th>Idem key</th><th>Aggregate</th><th>Attempts</th><th>Last error</th>")
        .raw("<th>Created</th></tr></thead><tbody>");
    for (MessageView t : rows) {
      h.raw("<tr").attr("data-id", t.id()).raw("><td>").link(v.url("/tickets/" + t.id()), t.id());
      h.raw("</td><td><span").attr("class", "badge " + t.status().name()).raw(">");
      h.text(t.status().name()).raw("</span></td>");
      h.el("td", t.bizType()).el("td class=\"mono\"", t.idemKey());
      h.el("td class=\"mono\"", t.aggregateId());
      h.el("td class=\"n\"", t.attempts() + "/" + t.maxAttempts());
      h.el("td class=\"err\"", t.lastError()).el("td", Html.time(t.createdAt())).raw("</tr>");
    }
    h.raw("</tbody></table>");
  }
}
