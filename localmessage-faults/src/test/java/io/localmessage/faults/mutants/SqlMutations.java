package io.localmessage.faults.mutants;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The mutation points of one SQL statement, found in its text: each conjunct of a {@code WHERE},
 * {@code ON} or {@code AND} list replaced by {@code 1 = 1} (dropped; its bind parameters kept),
 * each comparison flipped ({@code <}/{@code <=}, {@code >}/{@code >=}, {@code =}/{@code <>})
 * outside {@code SET} lists, {@code SKIP LOCKED} and {@code FOR UPDATE [SKIP LOCKED]} dropped, each
 * assignment of a {@code SET} list dropped, each {@code LIMIT n} made {@code LIMIT (n) + 1}, each
 * {@code ORDER BY} dropped. Text inside single quotes is never touched. The points are numbered in
 * the order they are found, so the same statement shape always has the same numbering. Test scope.
 */
final class SqlMutations {
  /** One mutation: what it does, and the statement with it applied. */
  record Mutation(String description, String sql) {}

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
    List<Mutation> out = new ArrayList<>();
    conjuncts(sql, upper, depth, quoted, out);
    comparisons(sql, upper, depth, quoted, out);
    locking(sql, upper, quoted, out);
    assignments(sql, upper, depth, quoted, out);
    limits(sql, upper, depth, quoted, out);
    orderBys(sql, upper, depth, quoted, out);
    return out;
  }

  private static void conjuncts(
      String sql, String upper, int[] depth, boolean[] quoted, List<Mutation> out) {
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
        out.add(
            new Mutation(
                "drop `" + conjunct + "`",
                sql.substring(0, start) + alwaysTrue(conjunct) + sql.substring(end)));
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
      String sql, String upper, int[] depth, boolean[] quoted, List<Mutation> out) {
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
      int from = Math.max(0, i - 30);
      int to = Math.min(sql.length(), i + op.length() + 30);
      out.add(
          new Mutation(
              "`" + op + "` -> `" + flipped + "` in `" + sql.substring(from, to).trim() + "`",
              sql.substring(0, i) + flipped + sql.substring(i + op.length())));
      i += op.length() - 1;
    }
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

  private static void locking(String sql, String upper, boolean[] quoted, List<Mutation> out) {
    for (String clause : new String[] {" FOR UPDATE SKIP LOCKED", " SKIP LOCKED", " FOR UPDATE"}) {
      for (int i = upper.indexOf(clause); i >= 0; i = upper.indexOf(clause, i + 1)) {
        if (quoted[i]
            || (clause.equals(" FOR UPDATE") && upper.startsWith(" FOR UPDATE SKIP LOCKED", i))) {
          continue;
        }
        out.add(
            new Mutation(
                "drop `" + clause.trim() + "`",
                sql.substring(0, i) + sql.substring(i + clause.length())));
      }
    }
  }

  private static void assignments(
      String sql, String upper, int[] depth, boolean[] quoted, List<Mutation> out) {
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
            new Mutation(
                "drop assignment `" + sql.substring(item[0], item[1]).trim() + "`",
                sql.substring(0, cutFrom) + sql.substring(cutTo)));
      }
    }
  }

  private static void limits(
      String sql, String upper, int[] depth, boolean[] quoted, List<Mutation> out) {
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
          new Mutation(
              "`LIMIT " + limit + "` -> `LIMIT (" + limit + ") + 1`",
              sql.substring(0, start) + "(" + limit + ") + 1" + sql.substring(end)));
    }
  }

  private static void orderBys(
      String sql, String upper, int[] depth, boolean[] quoted, List<Mutation> out) {
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
      out.add(
          new Mutation(
              "drop `" + sql.substring(i, end).trim() + "`",
              sql.substring(0, i) + sql.substring(end)));
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
