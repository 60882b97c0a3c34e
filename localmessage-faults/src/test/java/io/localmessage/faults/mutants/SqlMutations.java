package io.localmessage.faults.mutants;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The mutation points of one SQL statement, found in its text: each conjunct of a {@code WHERE},
 * {@code ON} or {@code AND} list replaced by {@code 1 = 1} (dropped; its bind parameters kept),
 * each comparison flipped ({@code <}/{@code <=}, {@code >}/{@code >=}, {@code =}/{@code <>})
 * outside {@code SET} lists, {@code SKIP LOCKED} and {@code FOR UPDATE [SKIP LOCKED]} dropped, each
 * assignment of a {@code SET} list dropped, each {@code LIMIT n} made {@code LIMIT (n) + 1}, each
 * {@code ORDER BY} dropped. Text inside single quotes is never touched. The points are numbered in
 * the order they are found, so the same statement shape always has the same numbering. In a
 * statement of {@code UNION ALL} branches (one per type, built by one loop) the same point of every
 * branch is one mutation, as a bug in the loop would change them all. Test scope.
 */
final class SqlMutations {
  /**
   * One mutation: what it does (table names shown as {@code T}), the same with numbers masked (the
   * mutation in every statement of the shape, whatever its limits), and the statement with it
   * applied.
   */
  record Mutation(String description, String key, String sql) {}

  private static final String[] CLAUSE_ENDS = {
    " ORDER BY ",
    " LIMIT ",
    " FOR UPDATE",
    " FOR SHARE",
    " RETURNING ",
    " GROUP BY ",
    " UNION ",
    " FROM ",
    " WHERE ",
    " SET ",
    " USING ",
    " ON CONFLICT"
  };

  private SqlMutations() {}

  /** Every mutation of {@code sql}, numbered from 0. */
  static List<Mutation> of(String sql) {
    String upper = sql.toUpperCase(Locale.ROOT);
    int[] depth = depths(sql);
    boolean[] quoted = quoted(sql);
    List<Point> points = new ArrayList<>();
    conjuncts(sql, upper, depth, quoted, points);
    comparisons(sql, upper, depth, quoted, points);
    locking(sql, upper, quoted, points);
    assignments(sql, upper, depth, quoted, points);
    limits(sql, upper, depth, quoted, points);
    orderBys(sql, upper, depth, quoted, points);
    // the branches of a UNION ALL are built by one loop (one per type): a point of that loop's
    // template is one mutation, applied in every branch that has it, as a bug in the loop would be;
    // a text that occurs twice in one branch is two points (its second "(2nd)")
    Map<String, List<Point>> groups = new LinkedHashMap<>();
    Map<String, String> descriptions = new java.util.HashMap<>();
    Map<String, Integer> occurrences = new java.util.HashMap<>();
    for (Point p : points) {
      String text = TABLE.matcher(p.description()).replaceAll("T");
      String key = NUMBER.matcher(text).replaceAll("N");
      int n = occurrences.merge(branch(upper, quoted, p.start()) + "|" + key, 1, Integer::sum);
      String suffix = n == 1 ? "" : " (" + ordinal(n) + ")";
      groups.computeIfAbsent(key + suffix, k -> new ArrayList<>()).add(p);
      descriptions.putIfAbsent(key + suffix, text + suffix);
    }
    List<Mutation> out = new ArrayList<>();
    groups.forEach(
        (key, group) -> out.add(new Mutation(descriptions.get(key), key, apply(sql, group))));
    return out;
  }

  private static String ordinal(int n) {
    return n + (n == 2 ? "nd" : n == 3 ? "rd" : "th");
  }

  /** Which branch of a UNION ALL the position lies in (0 when there is none). */
  private static int branch(String upper, boolean[] quoted, int at) {
    int b = 0;
    for (int i = upper.indexOf(" UNION ALL ");
        i >= 0 && i < at;
        i = upper.indexOf(" UNION ALL ", i + 1)) {
      if (!quoted[i]) {
        b++;
      }
    }
    return b;
  }

  /** One place of a statement and what replaces it there. */
  private record Point(String description, int start, int end, String replacement) {}

  private static final Pattern NUMBER = Pattern.compile("\\b\\d+\\b");
  private static final Pattern TABLE = Pattern.compile("\\blm\\d+");

  /** {@code sql} with every point of {@code group} replaced, the last first. */
  private static String apply(String sql, List<Point> group) {
    List<Point> byStart = new ArrayList<>(group);
    byStart.sort(Comparator.comparingInt(Point::start).reversed());
    StringBuilder b = new StringBuilder(sql);
    int limit = sql.length();
    for (Point p : byStart) {
      if (p.end() > limit) {
        continue; // overlaps the one after it: never in the engine's statements
      }
      b.replace(p.start(), p.end(), p.replacement());
      limit = p.start();
    }
    return b.toString();
  }

  private static void conjuncts(
      String sql, String upper, int[] depth, boolean[] quoted, List<Point> out) {
    for (String keyword : new String[] {" WHERE ", " ON ", " AND "}) {
      for (int i = upper.indexOf(keyword); i >= 0; i = upper.indexOf(keyword, i + 1)) {
        if (quoted[i] || (keyword.equals(" ON ") && upper.startsWith(" ON CONFLICT", i))) {
          continue;
        }
        int start = i + keyword.length();
        int end = conjunctEnd(upper, depth, quoted, start);
        if (end <= start) {
          continue;
        }
        String conjunct = sql.substring(start, end).trim();
        out.add(new Point("drop `" + conjunct + "`", start, end, alwaysTrue(conjunct)));
      }
    }
  }

  /**
   * A condition that is always true and keeps the conjunct's bind parameters ({@code ? IS NULL} for
   * each), so the statement still takes the values the code binds: the mutant changes what the
   * statement means, not whether it runs.
   */
  private static String alwaysTrue(String conjunct) {
    long params = conjunct.chars().filter(c -> c == '?').count();
    if (params == 0) {
      return "1 = 1";
    }
    StringBuilder t = new StringBuilder("(1 = 1");
    for (long p = 0; p < params; p++) {
      t.append(" OR ? IS NULL");
    }
    return t.append(')').toString();
  }

  /** Where a conjunct starting at {@code start} ends: the next AND/OR or clause at its depth. */
  private static int conjunctEnd(String upper, int[] depth, boolean[] quoted, int start) {
    // the depth of the keyword before it: a conjunct that opens with ( lies one deeper
    int d = depth[start - 1];
    for (int j = start; j < upper.length(); j++) {
      if (quoted[j]) {
        continue;
      }
      if (depth[j] < d || (upper.charAt(j) == ')' && depth[j] == d)) {
        return j;
      }
      if (depth[j] == d
          && (upper.startsWith(" AND ", j)
              || upper.startsWith(" OR ", j)
              || endsClause(upper, j))) {
        // BETWEEN x AND y is not in the engine's statements
        return j;
      }
    }
    return upper.length();
  }

  private static boolean endsClause(String upper, int j) {
    for (String end : CLAUSE_ENDS) {
      if (upper.startsWith(end, j)) {
        return true;
      }
    }
    return false;
  }

  private static void comparisons(
      String sql, String upper, int[] depth, boolean[] quoted, List<Point> out) {
    for (int i = 0; i < sql.length(); i++) {
      if (quoted[i] || inSetList(upper, depth, i)) {
        continue;
      }
      String op = operatorAt(sql, i);
      if (op == null) {
        continue;
      }
      String flipped =
          switch (op) {
            case "<=" -> "<";
            case ">=" -> ">";
            case "<>" -> "=";
            case "<" -> "<=";
            case ">" -> ">=";
            default -> "<>";
          };
      out.add(
          new Point(
              "`"
                  + op
                  + "` -> `"
                  + flipped
                  + "` in `"
                  + comparison(sql, upper, depth, quoted, i, op)
                  + "`",
              i,
              i + op.length(),
              flipped));
      i += op.length() - 1;
    }
  }

  /**
   * The comparison around the operator at {@code i}: from the AND, OR, WHERE, ON, WHEN, comma or
   * parenthesis before it to the one after it at its depth ({@code m.attempts < m.max_attempts}).
   */
  private static String comparison(
      String sql, String upper, int[] depth, boolean[] quoted, int i, String op) {
    int d = depth[i];
    int from = 0;
    for (int j = i - 1; j >= 0; j--) {
      if (quoted[j]) {
        continue;
      }
      if (depth[j] < d || (sql.charAt(j) == '(' && depth[j] == d)) {
        from = j + 1;
        break;
      }
      String before = depth[j] == d ? boundaryAt(upper, j, BEFORE) : null;
      if (before != null && j + before.length() <= i) {
        from = j + before.length();
        break;
      }
    }
    int to = sql.length();
    for (int j = i + op.length(); j < sql.length(); j++) {
      if (quoted[j]) {
        continue;
      }
      if (depth[j] < d
          || (sql.charAt(j) == ')' && depth[j] == d)
          || (depth[j] == d && (boundaryAt(upper, j, AFTER) != null || endsClause(upper, j)))) {
        to = j;
        break;
      }
    }
    return sql.substring(from, to).trim();
  }

  private static final String[] BEFORE = {
    " AND ", " OR ", " WHERE ", " ON ", " WHEN ", " THEN ", " ELSE ", " SET ", ","
  };
  private static final String[] AFTER = {" AND ", " OR ", " THEN ", " ELSE ", " END", ","};

  private static String boundaryAt(String upper, int j, String[] boundaries) {
    for (String b : boundaries) {
      if (upper.startsWith(b, j)) {
        return b;
      }
    }
    return null;
  }

  /** The comparison operator starting at {@code i}, or null ({@code :=}, {@code ::}, arrows no). */
  private static String operatorAt(String sql, int i) {
    char c = sql.charAt(i);
    char prev = i > 0 ? sql.charAt(i - 1) : ' ';
    char next = i + 1 < sql.length() ? sql.charAt(i + 1) : ' ';
    if (c == '<' && next == '=') {
      return "<=";
    }
    if (c == '>' && next == '=') {
      return ">=";
    }
    if (c == '<' && next == '>') {
      return "<>";
    }
    if (c == '<' && prev != '-') {
      return "<";
    }
    if (c == '>' && prev != '-' && prev != '<' && prev != '=') {
      return ">";
    }
    if (c == '=' && prev != '<' && prev != '>' && prev != ':' && prev != '!' && next != '>') {
      return "=";
    }
    return null;
  }

  /** Whether {@code i} lies in a {@code SET a = x, b = y} list (its {@code =} are assignments). */
  private static boolean inSetList(String upper, int[] depth, int i) {
    int set = upper.lastIndexOf(" SET ", i);
    if (set < 0 || depth[set] != depth[i]) {
      return false;
    }
    int end = setListEnd(upper, depth, set + 5);
    return i < end;
  }

  private static int setListEnd(String upper, int[] depth, int start) {
    int d = depth[start];
    for (int j = start; j < upper.length(); j++) {
      if (depth[j] < d) {
        return j;
      }
      if (depth[j] == d
          && (upper.startsWith(" FROM ", j)
              || upper.startsWith(" WHERE ", j)
              || upper.startsWith(" RETURNING ", j))) {
        return j;
      }
    }
    return upper.length();
  }

  private static void locking(String sql, String upper, boolean[] quoted, List<Point> out) {
    for (String clause : new String[] {" FOR UPDATE SKIP LOCKED", " SKIP LOCKED", " FOR UPDATE"}) {
      for (int i = upper.indexOf(clause); i >= 0; i = upper.indexOf(clause, i + 1)) {
        if (quoted[i]
            || (clause.equals(" FOR UPDATE") && upper.startsWith(" FOR UPDATE SKIP LOCKED", i))) {
          continue;
        }
        out.add(new Point("drop `" + clause.trim() + "`", i, i + clause.length(), ""));
      }
    }
  }

  private static void assignments(
      String sql, String upper, int[] depth, boolean[] quoted, List<Point> out) {
    for (int set = upper.indexOf(" SET "); set >= 0; set = upper.indexOf(" SET ", set + 1)) {
      if (quoted[set]) {
        continue;
      }
      int start = set + 5;
      int end = setListEnd(upper, depth, start);
      int d = depth[start];
      List<int[]> items = new ArrayList<>();
      int from = start;
      for (int j = start; j < end; j++) {
        if (!quoted[j] && depth[j] == d && sql.charAt(j) == ',') {
          items.add(new int[] {from, j});
          from = j + 1;
        }
      }
      items.add(new int[] {from, end});
      if (items.size() < 2) {
        continue; // dropping the only assignment leaves no statement
      }
      for (int k = 0; k < items.size(); k++) {
        int[] item = items.get(k);
        // remove the item with the comma before it (or after it, for the first)
        int cutFrom = k == 0 ? item[0] : items.get(k - 1)[1];
        int cutTo = k == 0 ? items.get(1)[0] : item[1];
        out.add(
            new Point(
                "drop assignment `" + sql.substring(item[0], item[1]).trim() + "`",
                cutFrom,
                cutTo,
                ""));
      }
    }
  }

  private static void limits(
      String sql, String upper, int[] depth, boolean[] quoted, List<Point> out) {
    for (int i = upper.indexOf(" LIMIT "); i >= 0; i = upper.indexOf(" LIMIT ", i + 1)) {
      if (quoted[i]) {
        continue;
      }
      int start = i + 7;
      int end = start;
      while (end < sql.length()
          && !Character.isWhitespace(sql.charAt(end))
          && sql.charAt(end) != ')') {
        end++;
      }
      String limit = sql.substring(start, end);
      out.add(
          new Point(
              "`LIMIT " + limit + "` -> `LIMIT (" + limit + ") + 1`",
              start,
              end,
              "(" + limit + ") + 1"));
    }
  }

  private static void orderBys(
      String sql, String upper, int[] depth, boolean[] quoted, List<Point> out) {
    for (int i = upper.indexOf(" ORDER BY "); i >= 0; i = upper.indexOf(" ORDER BY ", i + 1)) {
      if (quoted[i]) {
        continue;
      }
      int d = depth[i];
      int end = sql.length();
      for (int j = i + 10; j < sql.length(); j++) {
        if (depth[j] < d
            || (depth[j] == d
                && (upper.startsWith(" LIMIT ", j)
                    || upper.startsWith(" FOR ", j)
                    || upper.startsWith(" OFFSET ", j)
                    || upper.startsWith(" FETCH ", j)))) {
          end = j;
          break;
        }
      }
      out.add(new Point("drop `" + sql.substring(i, end).trim() + "`", i, end, ""));
    }
  }

  /** The parenthesis depth at every character. */
  private static int[] depths(String sql) {
    int[] depth = new int[sql.length() + 1];
    int d = 0;
    boolean q = false;
    for (int i = 0; i < sql.length(); i++) {
      char c = sql.charAt(i);
      if (c == '\'') {
        q = !q;
      }
      if (!q && c == '(') {
        d++;
      }
      depth[i] = d;
      if (!q && c == ')') {
        d--;
      }
    }
    depth[sql.length()] = d;
    return depth;
  }

  /** Whether each character lies inside a single-quoted literal. */
  private static boolean[] quoted(String sql) {
    boolean[] quoted = new boolean[sql.length() + 1];
    boolean q = false;
    for (int i = 0; i < sql.length(); i++) {
      if (sql.charAt(i) == '\'') {
        q = !q;
      }
      quoted[i] = q;
    }
    return quoted;
  }
}
