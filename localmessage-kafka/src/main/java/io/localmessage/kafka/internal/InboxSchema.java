package io.localmessage.kafka.internal;

import io.localmessage.Schema;
import io.localmessage.StoreException;
import io.localmessage.internal.store.Transactions;
import io.localmessage.spi.Dialect;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * The consumer side's tables: the inbox (from the core's schema steps, only their inbox statements)
 * and the dead table of this module's V2 schema, with the configured names. Not API.
 */
public final class InboxSchema {
  private InboxSchema() {}

  /** The resource of the dead table's DDL for {@code dialect}. */
  public static String deadTableResource(Dialect dialect) {
    return "db/localmessage/" + dialect.name() + "/V2__localmessage_inbox_dead.sql";
  }

  /** The DDL of the inbox and dead tables, renamed. */
  public static List<String> statements(Dialect dialect, String inboxTable, String deadTable) {
    List<String> out = new ArrayList<>();
    for (String s : Schema.statements(Schema.ddl(dialect))) {
      if (s.contains("local_inbox")) {
        out.add(rename(s, "local_inbox", inboxTable));
      }
    }
    if (out.isEmpty()) {
      throw new IllegalStateException(
          "the core schema " + dialect.schemaResource() + " has no local_inbox statements");
    }
    for (String s : Schema.statements(Schema.read(deadTableResource(dialect)))) {
      out.add(rename(s, "local_inbox_dead", deadTable));
    }
    return out;
  }

  /**
   * Creates the inbox and dead tables when missing, under the schema lock named by the inbox table:
   * consumers starting together take turns instead of racing in the catalog.
   */
  public static void create(DataSource ds, Dialect dialect, String inboxTable, String deadTable) {
    try (Connection c = Transactions.autocommit(ds)) {
      // the core's later steps alter the inbox; applied only where not done yet
      Schema.applyLocked(c, dialect, inboxTable, statements(dialect, inboxTable, deadTable));
    } catch (SQLException e) {
      throw new StoreException("creating the inbox tables failed: " + e.getMessage(), e);
    }
  }

  private static String rename(String sql, String from, String to) {
    String bare = to.contains(".") ? to.substring(to.indexOf('.') + 1) : to;
    return sql.replace("ix_" + from, "ix_" + bare).replace(from, to);
  }
}
