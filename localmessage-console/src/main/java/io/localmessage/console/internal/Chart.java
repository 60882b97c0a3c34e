package io.localmessage.console.internal;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * A small inline SVG: successes per minute as bars above the axis, failures below, the current
 * minute on the right. Hovering a bar shows its minute and counts ({@code <title>}).
 */
final class Chart {
  private static final DateTimeFormatter MINUTE =
      DateTimeFormatter.ofPattern("HH:mm'Z'").withZone(ZoneOffset.UTC);

  private Chart() {}

  static void render(Html h, ActivityRecorder.Series s, int barWidth, int height) {
    int n = s.successes().length;
    long max = 1;
    for (int i = 0; i < n; i++) {
      max = Math.max(max, Math.max(s.successes()[i], s.failures()[i]));
    }
    int width = n * barWidth;
    int mid = height / 2;
    double scale = (mid - 1) / (double) max;
    String label =
        "last "
            + n
            + " minutes: "
            + s.totalSuccesses()
            + " succeeded, "
            + s.totalFailures()
            + " failed";
    h.raw("<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\"")
        .attr("width", width)
        .attr("height", height)
        .attr("viewBox", "0 0 " + width + " " + height)
        .attr("aria-label", label)
        .raw(">");
    h.el("title", label);
    h.raw("<line class=\"axis\" x1=\"0\" x2=\"" + width + "\" y1=\"" + mid + "\" y2=\"" + mid)
        .raw("\"/>");
    for (int i = 0; i < n; i++) {
      long ok = s.successes()[i];
      long bad = s.failures()[i];
      if (ok == 0 && bad == 0) {
        continue;
      }
      int x = i * barWidth;
      String tip =
          MINUTE.format(Instant.ofEpochSecond((s.firstMinute() + i) * 60))
              + ": "
              + ok
              + " succeeded, "
              + bad
              + " failed";
      h.raw("<g><title>").text(tip).raw("</title>");
      if (ok > 0) {
        int bh = Math.max(1, (int) Math.round(ok * scale));
        bar(h, "ok", x, mid - bh, barWidth, bh);
      }
      if (bad > 0) {
        int bh = Math.max(1, (int) Math.round(bad * scale));
        bar(h, "bad", x, mid + 1, barWidth, bh);
      }
      h.raw("</g>");
    }
    h.raw("</svg>");
  }

  private static void bar(Html h, String cls, int x, int y, int barWidth, int bh) {
    h.raw("<rect class=\"" + cls + "\" x=\"" + x + "\" y=\"" + y + "\" width=\"")
        .raw(Integer.toString(Math.max(1, barWidth - 1)))
        .raw("\" height=\"" + bh + "\"/>");
  }
}
