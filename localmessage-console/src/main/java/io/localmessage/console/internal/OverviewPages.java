package io.localmessage.console.internal;

import io.localmessage.admin.TypeStats;
import java.util.List;

/** The backlog per biz type, and one biz type with its switches. */
final class OverviewPages {
  private OverviewPages() {}

  static String overview(
      View v, List<TypeStats> stats, ActivityRecorder activity, String done, String n) {
    Html h = Layout.open(v, "Overview");
    h.el("h1", "Backlog per biz type");
    Layout.notice(h, done, n);
    h.raw("<p class=\"muted\">Counts by the database clock, all replicas. Chart: deliveries on")
        .raw(" this replica over the last ")
        .text(activity.minutes())
        .raw(" minutes (green succeeded, red failed). ")
        .raw("<label><input type=\"checkbox\" id=\"auto-refresh\"> refresh every 5 s</label></p>");
    if (!activity.installed()) {
      h.raw("<p class=\"problem\">The chart is empty: the application builds its own engine, so")
          .raw(" the console could not install its delivery listener.</p>");
    }
    if (stats.isEmpty()) {
      h.raw("<p>No tickets yet.</p>");
      return Layout.close(h);
    }
    h.raw("<table id=\"overview\"><thead><tr><th>Biz type</th><th>Pending</th><th>Due now</th>")
        .raw("<th>In flight</th><th>Dead</th><th>Oldest pending</th><th>Oldest dead</th>")
        .raw("<th>State</th><th>Last ")
        .text(activity.minutes())
        .raw(" min</th></tr></thead><tbody>");
    for (TypeStats s : stats) {
      h.raw("<tr").attr("data-type", s.bizType()).raw(s.paused() ? " class=\"paused\"" : "");
      h.raw("><td>").link(v.url("/type?name=" + Html.q(s.bizType())), s.bizType()).raw("</td>");
      num(h, "pending", s.pending());
      num(h, "due-now", s.dueNow());
      num(h, "in-flight", s.inFlight());
      h.raw("<td class=\"n\" data-col=\"dead\">");
      if (s.dead() > 0) {
        h.link(v.url("/dead?type=" + Html.q(s.bizType())), s.dead());
      } else {
        h.text(0);
      }
      h.raw("</td>");
      h.raw("<td class=\"n\" data-col=\"oldest-pending\">").text(Html.age(s.oldestPendingAge()));
      h.raw("</td><td class=\"n\" data-col=\"oldest-dead\">").text(Html.age(s.oldestDeadAge()));
      h.raw("</td><td data-col=\"state\">");
      h.raw(s.paused() ? "<span class=\"badge paused\">paused</span>" : "running");
      h.raw("</td><td class=\"chartcell\">");
      ActivityRecorder.Series series = activity.series(s.bizType());
      Chart.render(h, series, 4, 28);
      h.raw("<span class=\"tot\"><span data-col=\"ok\">")
          .text(series.totalSuccesses())
          .raw("</span> ok / <span data-col=\"failed\">")
          .text(series.totalFailures())
          .raw("</span> failed</span></td></tr>");
    }
    h.raw("</tbody></table>");
    return Layout.close(h);
  }

  static String type(View v, String bizType, TypeStats s, ActivityRecorder activity) {
    Html h = Layout.open(v, bizType);
    h.raw("<h1>Biz type <span class=\"mono\">").text(bizType).raw("</span>");
    if (s != null && s.paused()) {
      h.raw(" <span class=\"badge paused\">paused</span>");
    }
    h.raw("</h1>");
    if (s == null) {
      h.raw("<p>No tickets of this type, and it is not paused.</p>");
    } else {
      h.raw("<dl class=\"fields\">");
      field(h, "Pending", s.pending());
      field(h, "Due now", s.dueNow());
      field(h, "In flight", s.inFlight());
      field(h, "Dead", s.dead());
      field(h, "Canceled (kept)", s.canceled());
      field(h, "Succeeded (kept)", s.succeeded());
      field(h, "Oldest pending", Html.age(s.oldestPendingAge()));
      field(h, "Oldest dead", Html.age(s.oldestDeadAge()));
      h.raw("</dl>");
    }
    ActivityRecorder.Series series = activity.series(bizType);
    h.raw("<h2>Deliveries on this replica, last ").text(activity.minutes()).raw(" minutes</h2>");
    Chart.render(h, series, 12, 80);
    h.raw("<p>").text(series.totalSuccesses() + " succeeded, " + series.totalFailures());
    h.raw(" failed</p>");
    String[][] type = {{"type", bizType}};
    h.el("h2", "Switches");
    if (s != null && s.paused()) {
      h.raw("<p>Paused: no replica claims this type until it is resumed.</p>");
      Layout.actionForm(h, v, "resume", type, "Resume", null, "resume-form");
    } else {
      h.raw(
          "<p>Pausing stops claiming on every replica within a poll interval; saving goes on.</p>");
      Layout.actionForm(
          h, v, "pause", type, "Pause", "Pause " + bizType + " on every replica?", "pause-form");
    }
    if (s != null && s.dead() > 0) {
      h.el("h2", "Dead letters");
      h.raw("<p>").link(v.url("/dead?type=" + Html.q(bizType)), s.dead() + " dead").raw("</p>");
      Layout.actionForm(
          h,
          v,
          "requeue-all",
          type,
          "Requeue all " + s.dead() + " dead",
          "Requeue every dead ticket of " + bizType + "?",
          "requeue-all-form");
    }
    if (!v.mayAct()) {
      h.raw("<p class=\"muted\">You may look but not act.</p>");
    }
    return Layout.close(h);
  }

  private static void num(Html h, String col, long value) {
    h.raw("<td class=\"n\"").attr("data-col", col).raw(">").text(value).raw("</td>");
  }

  private static void field(Html h, String name, Object value) {
    h.el("dt", name).el("dd", value);
  }
}
