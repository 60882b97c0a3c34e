package io.localmessage.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Runs every workload once on a tiny backlog, on PostgreSQL and MariaDB, so the harness cannot rot.
 * It checks that each measurement completed (every ticket handled exactly once, every table
 * drained, every row present in the outputs), never how fast: no timed assertions.
 */
class BenchSmokeTest {

  @Test
  void everyWorkloadRunsOnATinyBacklogAndLandsInTheOutputs() throws Exception {
    Path out = Path.of("target", "bench-smoke");
    Options options =
        Options.parse(
            new String[] {
              "--n", "300",
              "--reps", "1",
              "--warmup", "0",
              "--concurrency", "16",
              "--peer-threads", "4",
              "--rates", "200",
              "--latency-seconds", "1",
              "--save-clients", "2",
              "--save-seconds", "1",
              "--idle-seconds", "1",
              "--scaling", "200,300",
              "--relay-concurrency", "64",
              "--relay-batch", "50",
              "--io-n", "200",
              "--io-peer-n", "40",
              "--io-latency-ms", "20",
              "--io-rows", "platform-8,virtual-16,async-32,floor-32,dbscheduler-4,outbox-4",
              "--out", out.toString(),
              "--label", "smoke test"
            });

    Bench.Result result = Bench.run(options);

    assertThat(result.failures()).isEmpty();
    List<String> csv = Files.readAllLines(result.csv());
    assertThat(csv.get(0)).startsWith("workload,db,case,unit,key,min,median,max,runs");
    // every measured row has exactly one run; rows that were not measured say why
    for (String line : csv.subList(1, csv.size())) {
      List<String> f = fields(line);
      assertThat(f).as(line).hasSize(14);
      if (f.get(4).isEmpty()) {
        assertThat(f.get(13)).as(line).isNotEmpty();
      } else {
        assertThat(f.get(8)).as(line).isEqualTo("1");
        assertThat(Double.parseDouble(f.get(6))).as(line).isPositive();
      }
    }
    assertThat(csv).anyMatch(l -> l.contains("pg.drain.engine.1,"));
    assertThat(csv).anyMatch(l -> l.contains("pg.drain.floor.1,"));
    assertThat(csv).anyMatch(l -> l.contains("mariadb.drain.engine.2,"));
    assertThat(csv).anyMatch(l -> l.contains("pg.peers.dbscheduler,"));
    assertThat(csv).anyMatch(l -> l.contains("pg.peers.outbox,"));
    assertThat(csv).anyMatch(l -> l.contains("pg.latency.200.on.p99,"));
    assertThat(csv).anyMatch(l -> l.contains("pg.scaling.300,"));
    assertThat(csv).anyMatch(l -> l.contains("mariadb.save.save,"));
    assertThat(csv).anyMatch(l -> l.contains("pg.save.save_ordered,"));
    assertThat(csv).anyMatch(l -> l.contains("mariadb.save.save_ordered,"));
    assertThat(csv).anyMatch(l -> l.contains("pg.save.raw_insert,"));
    assertThat(csv).anyMatch(l -> l.contains("pg.idle.engine.500,"));
    assertThat(csv).anyMatch(l -> l.contains("pg.save.round_trip,"));
    assertThat(csv).anyMatch(l -> l.contains("pg.kafka.relay,"));
    assertThat(csv).anyMatch(l -> l.contains("pg.consumer.batch.1,"));
    assertThat(csv).anyMatch(l -> l.contains("pg.consumer.floor.3,"));
    assertThat(csv).anyMatch(l -> l.contains("mariadb.consumer.batch.3,"));
    assertThat(csv).anyMatch(l -> l.contains("mariadb.consumer.record.1,"));
    assertThat(csv).anyMatch(l -> l.contains("pg.consumer.batch.1.commits,"));
    assertThat(csv).anyMatch(l -> l.contains("pg.io.platform-8,"));
    assertThat(csv).anyMatch(l -> l.contains("pg.io.async-32,"));
    assertThat(csv).anyMatch(l -> l.contains("pg.io.async-32.threads,"));
    assertThat(csv).anyMatch(l -> l.contains("pg.io.async-32.cpu,"));
    assertThat(csv).anyMatch(l -> l.contains("pg.io.async-32.heap,"));
    assertThat(csv).anyMatch(l -> l.contains("pg.io.floor-32,"));
    assertThat(csv).anyMatch(l -> l.contains("pg.io.dbscheduler-4,"));
    assertThat(csv).anyMatch(l -> l.contains("pg.io.outbox-4,"));
    assertThat(csv).anyMatch(l -> l.contains("mariadb.io.async-32,"));
    if (Runtime.version().feature() >= 21) {
      assertThat(csv).anyMatch(l -> l.contains("pg.io.virtual-16,"));
    } else {
      assertThat(csv).anyMatch(l -> l.contains("virtual threads") && l.contains("needs Java 21+"));
    }

    String md = Files.readString(result.markdown());
    assertThat(md)
        .contains("**smoke test**")
        .contains("| workload | db | case |")
        .contains("## Goals")
        .contains("## Diagnostics")
        .contains("EXPLAIN ANALYZE, engine claim")
        .contains("## io summary, pg");
    assertThat(result.text())
        .contains("engine/floor")
        .contains("consumer/floor")
        .contains("batched/per-record")
        .contains("machine: ");
  }

  /** Splits one CSV line, honouring double quotes. */
  private static List<String> fields(String line) {
    List<String> out = new java.util.ArrayList<>();
    StringBuilder cur = new StringBuilder();
    boolean quoted = false;
    for (int i = 0; i < line.length(); i++) {
      char ch = line.charAt(i);
      if (quoted) {
        if (ch == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
          cur.append('"');
          i++;
        } else if (ch == '"') {
          quoted = false;
        } else {
          cur.append(ch);
        }
      } else if (ch == '"') {
        quoted = true;
      } else if (ch == ',') {
        out.add(cur.toString());
        cur.setLength(0);
      } else {
        cur.append(ch);
      }
    }
    out.add(cur.toString());
    return out;
  }
}
