package io.localmessage.faults;

import io.localmessage.testing.TestDatabase;
import java.io.File;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Restarts the local database server the suite runs on, and measures how long it was away. */
final class DatabaseRestart {
  private DatabaseRestart() {}

  /** Returns the downtime in ms, or -1 when this machine cannot restart the server. */
  static long restart(TestDatabase.Kind kind) throws Exception {
    long t0 = System.nanoTime();
    switch (kind) {
      case POSTGRESQL -> {
        String[] versions = new File("/etc/postgresql").list();
        if (versions == null || versions.length == 0) {
          return -1;
        }
        run(
            List.of(
                "pg_ctlcluster",
                "--skip-systemctl-redirect",
                versions[0],
                "main",
                "restart",
                "-m",
                "fast"));
        waitUntil(List.of("pg_isready", "-h", "127.0.0.1", "-q"));
      }
      case MARIADB -> {
        run(
            List.of(
                "bash",
                "-c",
                "mariadb-admin shutdown && sleep 1; "
                    + "[ -d /run/mysqld ] || install -d -o mysql -g mysql /run/mysqld; "
                    + "start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd"));
        waitUntil(List.of("mariadb-admin", "ping"));
      }
      default -> {
        return -1;
      }
    }
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
  }

  private static void run(List<String> cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).inheritIO().start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException(cmd + " did not finish in 60 s");
    }
  }

  private static void waitUntil(List<String> probe) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      Process p = new ProcessBuilder(probe).start();
      if (p.waitFor(5, TimeUnit.SECONDS) && p.exitValue() == 0) {
        return;
      }
      FaultRun.waitQuietly(java.time.Duration.ofMillis(100));
    }
    throw new IllegalStateException(probe + " never succeeded");
  }
}
