package io.localmessage.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/** The rows, goals and header of a run, rendered as a text table, Markdown and CSV. */
final class Report {
  /**
   * One line of the table: the figure under {@code key}, and optionally the pairwise ratio {@code
   * num / den} taken within each repetition. {@code note} replaces the figures when the row was not
   * measured (e.g. a module that is not there).
   */
  record Row(
      String workload,
      String db,
      String what,
      String unit,
      String key,
      String ratioLabel,
      String num,
      String den,
      String note) {}

  /**
   * A table of its own after the main one (one line per case, several figures across), built from
   * the recorded figures when the report is rendered.
   */
  interface Section {
    String title();

    String[] columns();

    List<String[]> rows(Recorder rec);
  }

  /** A goal of the issue, checked against the median of a figure or of a pairwise ratio. */
  record Goal(String text, String key, String num, String den, double threshold, boolean atLeast) {}

  final List<String> header = new ArrayList<>();
  final List<Row> rows = new ArrayList<>();
  final List<Goal> goals = new ArrayList<>();
  final List<String> notes = new ArrayList<>();
  final List<String> diagnostics = new ArrayList<>();
  final List<Section> sections = new ArrayList<>();

  void row(String workload, String db, String what, String unit, String key) {
    rows.add(new Row(workload, db, what, unit, key, null, null, null, null));
  }

  void row(
      String workload,
      String db,
      String what,
      String unit,
      String key,
      String ratioLabel,
      String num,
      String den) {
    rows.add(new Row(workload, db, what, unit, key, ratioLabel, num, den, null));
  }

  void missing(String workload, String db, String what, String note) {
    rows.add(new Row(workload, db, what, "", null, null, null, null, note));
  }

  private static final String[] COLUMNS = {
    "workload",
    "db",
    "case",
    "unit",
    "min",
    "median",
    "max",
    "runs",
    "ratio",
    "ratio median",
    "ratio min..max"
  };

  private List<String[]> cells(Recorder rec) {
    List<String[]> out = new ArrayList<>();
    for (Row r : rows) {
      String[] c = new String[COLUMNS.length];
      c[0] = r.workload();
      c[1] = r.db();
      c[2] = r.what();
      c[3] = r.unit();
      if (r.note() != null) {
        c[4] = r.note();
        for (int i = 5; i < c.length; i++) {
          c[i] = "";
        }
        out.add(c);
        continue;
      }
      String failure = r.key() == null ? null : rec.failures().get(r.key());
      Stats s = Stats.of(rec.values(r.key()));
      if (s.runs() == 0) {
        c[4] = failure != null ? "FAILED: " + failure : "not measured";
        for (int i = 5; i < c.length; i++) {
          c[i] = "";
        }
        out.add(c);
        continue;
      }
      c[4] = fmt(s.min(), r.unit());
      c[5] = fmt(s.median(), r.unit());
      c[6] = fmt(s.max(), r.unit());
      c[7] = Integer.toString(s.runs()) + (failure != null ? " (some failed)" : "");
      if (r.ratioLabel() != null) {
        Stats q = Stats.of(rec.ratios(r.num(), r.den()));
        c[8] = r.ratioLabel();
        c[9] = q.runs() == 0 ? "n/a" : ratio(q.median());
        c[10] = q.runs() == 0 ? "" : ratio(q.min()) + ".." + ratio(q.max());
      } else {
        c[8] = "";
        c[9] = "";
        c[10] = "";
      }
      out.add(c);
    }
    return out;
  }

  private List<String[]> goalCells(Recorder rec) {
    List<String[]> out = new ArrayList<>();
    for (Goal g : goals) {
      List<Double> v = g.key() != null ? rec.values(g.key()) : rec.ratios(g.num(), g.den());
      Stats s = Stats.of(v);
      String measured;
      String verdict;
      if (s.runs() == 0) {
        measured = "n/a";
        verdict = "not measured";
      } else {
        measured = g.key() != null ? fmt(s.median(), "") : ratio(s.median()) + "x";
        boolean met = g.atLeast() ? s.median() >= g.threshold() : s.median() <= g.threshold();
        verdict = met ? "met" : "NOT met";
      }
      out.add(new String[] {g.text(), measured, verdict});
    }
    return out;
  }

  String text(Recorder rec) {
    StringBuilder sb = new StringBuilder();
    header.forEach(h -> sb.append(h).append('\n'));
    sb.append('\n');
    sb.append(table(COLUMNS, cells(rec), this::pad));
    for (Section x : sections) {
      sb.append('\n').append(x.title()).append(":\n");
      sb.append(table(x.columns(), x.rows(rec), this::pad));
    }
    if (!goals.isEmpty()) {
      sb.append('\n').append("Goals (median of the pairwise ratios or of the figure):\n");
      sb.append(table(new String[] {"goal", "measured", "verdict"}, goalCells(rec), this::pad));
    }
    if (!diagnostics.isEmpty()) {
      sb.append('\n').append("Diagnostics:\n");
      diagnostics.forEach(x -> sb.append("- ").append(x).append('\n'));
    }
    return sb.toString();
  }

  String markdown(Recorder rec) {
    StringBuilder sb = new StringBuilder("# localmessage benchmark: latest results\n\n");
    header.forEach(h -> sb.append("- ").append(h).append('\n'));
    sb.append('\n');
    sb.append(markdownTable(COLUMNS, cells(rec)));
    for (Section x : sections) {
      sb.append("\n## ").append(x.title()).append("\n\n");
      sb.append(markdownTable(x.columns(), x.rows(rec)));
    }
    if (!goals.isEmpty()) {
      sb.append("\n## Goals\n\nMedian of the pairwise ratios (or of the figure) against the goals")
          .append(" of the benchmark issue.\n\n");
      sb.append(markdownTable(new String[] {"goal", "measured", "verdict"}, goalCells(rec)));
    }
    if (!diagnostics.isEmpty()) {
      sb.append("\n## Diagnostics (PostgreSQL, one run)\n\n");
      diagnostics.forEach(x -> sb.append("- ").append(x).append('\n'));
    }
    if (!notes.isEmpty()) {
      sb.append("\n## Notes\n\n");
      notes.forEach(n -> sb.append("- ").append(n).append('\n'));
    }
    return sb.toString();
  }

  String csv(Recorder rec) {
    StringBuilder sb = new StringBuilder();
    sb.append(
        "workload,db,case,unit,key,min,median,max,runs,ratio,ratio_min,ratio_median,ratio_max,"
            + "note\n");
    for (Row r : rows) {
      List<String> f = new ArrayList<>();
      f.add(r.workload());
      f.add(r.db());
      f.add(r.what());
      f.add(r.unit());
      f.add(r.key() == null ? "" : r.key());
      Stats s = r.key() == null ? Stats.of(List.of()) : Stats.of(rec.values(r.key()));
      f.add(raw(s.min()));
      f.add(raw(s.median()));
      f.add(raw(s.max()));
      f.add(Integer.toString(s.runs()));
      if (r.ratioLabel() != null) {
        Stats q = Stats.of(rec.ratios(r.num(), r.den()));
        f.add(r.ratioLabel());
        f.add(raw(q.min()));
        f.add(raw(q.median()));
        f.add(raw(q.max()));
      } else {
        f.add("");
        f.add("");
        f.add("");
        f.add("");
      }
      String failure = r.key() == null ? null : rec.failures().get(r.key());
      f.add(r.note() != null ? r.note() : failure != null ? "FAILED: " + failure : "");
      sb.append(String.join(",", f.stream().map(Report::csvField).toList())).append('\n');
    }
    return sb.toString();
  }

  private static String csvField(String s) {
    if (s.contains(",") || s.contains("\"") || s.contains("\n")) {
      return "\"" + s.replace("\"", "\"\"") + "\"";
    }
    return s;
  }

  private static String raw(double v) {
    return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.4f", v);
  }

  static String fmt(double v, String unit) {
    if (Double.isNaN(v)) {
      return "n/a";
    }
    if (unit.equals("ms")) {
      return String.format(Locale.ROOT, "%.2f", v);
    }
    if (Math.abs(v) >= 100) {
      return String.format(Locale.ROOT, "%,.0f", v);
    }
    return String.format(Locale.ROOT, "%.1f", v);
  }

  static String ratio(double v) {
    return String.format(Locale.ROOT, "%.2f", v);
  }

  private String pad(String s, int width) {
    return s + " ".repeat(Math.max(0, width - s.length()));
  }

  private static String table(
      String[] columns,
      List<String[]> cells,
      java.util.function.BiFunction<String, Integer, String> pad) {
    int[] w = new int[columns.length];
    for (int i = 0; i < columns.length; i++) {
      w[i] = columns[i].length();
    }
    for (String[] row : cells) {
      for (int i = 0; i < row.length; i++) {
        // a long note in the first figure column runs on instead of widening the column
        if (!(row.length > 5 && i == 4 && row[5].isEmpty())) {
          w[i] = Math.max(w[i], row[i].length());
        }
      }
    }
    Function<String[], String> line =
        row -> {
          StringBuilder sb = new StringBuilder();
          for (int i = 0; i < row.length; i++) {
            sb.append(pad.apply(row[i], w[i])).append(i + 1 < row.length ? "  " : "");
          }
          return sb.toString().stripTrailing() + "\n";
        };
    StringBuilder sb = new StringBuilder(line.apply(columns));
    String[] rule = new String[columns.length];
    for (int i = 0; i < rule.length; i++) {
      rule[i] = "-".repeat(w[i]);
    }
    sb.append(line.apply(rule));
    cells.forEach(r -> sb.append(line.apply(r)));
    return sb.toString();
  }

  private static String markdownTable(String[] columns, List<String[]> cells) {
    StringBuilder sb = new StringBuilder("| ").append(String.join(" | ", columns)).append(" |\n|");
    for (int i = 0; i < columns.length; i++) {
      sb.append(" --- |");
    }
    sb.append('\n');
    for (String[] r : cells) {
      sb.append("| ").append(String.join(" | ", r).replace("\n", " ")).append(" |\n");
    }
    return sb.toString();
  }
}
