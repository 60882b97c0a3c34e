package io.localmessage.kafka.internal;

import io.localmessage.StoreException;
import io.localmessage.jdbc.SchemaScripts;
import io.localmessage.spi.Dialect;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
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
    for (String s : SchemaScripts.split(SchemaScripts.coreDdl(dialect))) {
      if (s.contains("local_inbox")) {
        out.add(rename(s, "local_inbox", inboxTable));
      }
    }
    if (out.isEmpty()) {
      throw new IllegalStateException(
          "the core schema " + dialect.schemaResource() + " has no local_inbox statements");
    }
    for (String s : split(read(deadTableResource(dialect)))) {
      out.add(rename(s, "local_inbox_dead", deadTable));
    }
    return out;
  }

  /** Creates the inbox and dead tables when missing. */
  public static void create(DataSource ds, Dialect dialect, String inboxTable, String deadTable) {
    try (Connection c = ds.getConnection()) {
      // the core's later steps alter the inbox; applied only where not done yet
      SchemaScripts.apply(c, statements(dialect, inboxTable, deadTable));
      if (!c.getAutoCommit()) {
        c.commit();
      }
    } catch (SQLException e) {
      throw new StoreException("creating the inbox tables failed: " + e.getMessage(), e);
    }
  }

  private static String rename(String sql, String from, String to) {
    String bare = to.contains(".") ? to.substring(to.indexOf('.') + 1) : to;
    return sql.replace("ix_" + from, "ix_" + bare).replace(from, to);
  }

  private static String read(String resource) {
    try (InputStream in = InboxSchema.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("schema resource " + resource + " is missing");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read schema resource " + resource, e);
    }
  }

  /** Statements separated by {@code ;}, without comment lines. */
  private static List<String> split(String ddl) {
    StringBuilder sb = new StringBuilder();
    for (String line : ddl.split("\n")) {
      String t = line.strip();
      if (!t.startsWith("--")) {
        int comment = line.indexOf("--");
        sb.append(comment >= 0 ? line.substring(0, comment) : line).append('\n');
      }
    }
    List<String> out = new ArrayList<>();
    for (String s : sb.toString().split(";")) {
      if (!s.isBlank()) {
        out.add(s.strip());
      }
    }
    return out;
  }
}
