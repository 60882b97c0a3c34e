package io.localmessage.faults.mutants;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * How the mutant run tells statements apart: by shape, the text with what changes from one test or
 * call to the next masked (the per-test table names, numbers, the length of a list of
 * placeholders), and a readable name for each shape. Test scope.
 */
final class Statements {
  private static final Pattern TABLE = Pattern.compile("\\blm\\d+");
  private static final Pattern NUMBER = Pattern.compile("\\b\\d+\\b");
  private static final Pattern PLACEHOLDERS = Pattern.compile("\\?(\\s*,\\s*\\?)+");
  private static final Pattern ROWS =
      Pattern.compile("\\(\\?\\.\\.\\.\\)(\\s*,\\s*\\(\\?\\.\\.\\.\\))+");
  private static final Pattern SPACES = Pattern.compile("\\s+");

  private Statements() {}

  /**
   * Whether the run mutates {@code sql}: a query or change of rows (not DDL, not a catalog read)
   * with at least one mutation point.
   */
  static boolean mutable(String sql) {
    String upper = sql.stripLeading().toUpperCase(Locale.ROOT);
    boolean dml =
        upper.startsWith("SELECT")
            || upper.startsWith("INSERT")
            || upper.startsWith("UPDATE")
            || upper.startsWith("DELETE")
            || upper.startsWith("WITH");
    return dml
        && !upper.contains("INFORMATION_SCHEMA")
        && !upper.contains("PG_CATALOG")
        && !upper.contains("PG_STAT")
        && !SqlMutations.of(sql).isEmpty();
  }

  private static final StackWalker WALKER =
      StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE);

  /**
   * Whether the statement being prepared on this thread comes from the library (main code of a
   * localmessage module), not from a test checking or arranging rows: the caller of the outermost
   * proxied {@code prepareStatement} on the stack (data sources wrapped by tests nest, and a test's
   * own hook may prepare the library's statement for it), judged by where its class was loaded from
   * (test classes are in a {@code test-classes} directory or a {@code -tests.jar}).
   */
  static boolean fromLibraryCode() {
    return WALKER.walk(
        frames -> {
          Class<?> caller = null;
          boolean afterProxy = false;
          for (StackWalker.StackFrame f : (Iterable<StackWalker.StackFrame>) frames::iterator) {
            Class<?> c = f.getDeclaringClass();
            if (c.getName().contains("$Proxy")
                && (f.getMethodName().equals("prepareStatement")
                    || f.getMethodName().equals("prepareCall"))) {
              afterProxy = true;
              caller = null;
            } else if (afterProxy && caller == null && c.getName().startsWith("io.localmessage.")) {
              caller = c;
            }
          }
          return caller != null && isMainCode(caller);
        });
  }

  private static boolean isMainCode(Class<?> c) {
    var source = c.getProtectionDomain().getCodeSource();
    if (source == null || source.getLocation() == null) {
      return false;
    }
    String where = source.getLocation().toString();
    return !where.contains("test-classes") && !where.endsWith("-tests.jar");
  }

  /** {@code sql} with table names, numbers and placeholder lists masked, spaces collapsed. */
  static String shape(String sql) {
    String s = TABLE.matcher(sql).replaceAll("T");
    s = NUMBER.matcher(s).replaceAll("N");
    s = PLACEHOLDERS.matcher(s).replaceAll("?...");
    s = s.replace("(?)", "(?...)");
    s = ROWS.matcher(s).replaceAll("(?...), ...");
    return SPACES.matcher(s).replaceAll(" ").trim();
  }

  /**
   * A short name for a shape: the engine's main statements by what they do, any other by its first
   * words; with a short hash of the shape, so two shapes never share a name.
   */
  static String name(String shape) {
    String hash = String.format("%04x", shape.hashCode() & 0xffff);
    String what;
    if (shape.startsWith("WITH due AS (SELECT id, prev_owner")) {
      what =
          "claim"
              + (shape.contains(" UNION ALL ") ? ", types" : "")
              + (shape.contains("= ANY(") ? ", ids" : "")
              + (shape.contains("NOT EXISTS") ? ", ordered" : "");
    } else if (shape.startsWith("UPDATE ") && shape.contains(" t SET status = c.st")) {
      what = "write-back update";
    } else if (shape.startsWith("DELETE FROM ") && shape.contains(" t USING unnest(")) {
      what = "write-back delete";
    } else {
      String[] words = shape.replace("`", "").split(" ");
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < Math.min(words.length, 6); i++) {
        b.append(i == 0 ? "" : " ").append(words[i]);
      }
      what = b.toString().replace("|", "/").replace("#", "");
    }
    return what + " ~" + hash;
  }
}
