package io.localmessage.demo;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** The demo's options; every default runs on embedded infrastructure in about a minute. */
@Command(
    name = "localmessage-demo",
    mixinStandardHelpOptions = true,
    description =
        "Deposit -> payment channel -> Kafka -> ledger, and order -> points over HTTP,"
            + " with injected faults and a reconciliation report at the end.")
final class DemoOptions {
  @Option(
      names = "--deposits",
      defaultValue = "3000",
      description = "Deposits to create (default ${DEFAULT-VALUE}).")
  int deposits;

  @Option(
      names = "--rate",
      defaultValue = "150",
      description = "Deposits created per second (default ${DEFAULT-VALUE}).")
  int rate;

  @Option(
      names = "--replicas",
      defaultValue = "3",
      description =
          "Deposit-service worker replicas, each its own engine and pool (default ${DEFAULT-VALUE}).")
  int replicas;

  @Option(
      names = "--timeout-rate",
      defaultValue = "0.10",
      description = "Share of payment requests that time out after charging.")
  double timeoutRate;

  @Option(
      names = "--unavailable-rate",
      defaultValue = "0.10",
      description = "Share of payment requests answered 503 before charging.")
  double unavailableRate;

  @Option(
      names = "--reject-rate",
      defaultValue = "0.02",
      description = "Share of payments the channel rejects.")
  double rejectRate;

  @Option(
      names = "--duplicate-publish-rate",
      defaultValue = "0.05",
      description =
          "Share of Kafka publishes whose ack is 'lost', so the event is published again.")
  double duplicatePublishRate;

  @Option(
      names = "--points-orders",
      defaultValue = "1000",
      description = "Orders of the order -> points scenario (0 skips it).")
  int pointsOrders;

  @Option(
      names = "--chaos",
      description = "Stop a replica abruptly mid-run (no lease release) and start a new one.")
  boolean chaos;

  @Option(
      names = "--ledger-without-inbox",
      description =
          "Broken on purpose: the ledger consumes without the inbox (reconciliation must fail).")
  boolean ledgerWithoutInbox;

  @Option(
      names = "--deposit-jdbc-url",
      description =
          "External deposit database (PostgreSQL or MariaDB); default: embedded PostgreSQL.")
  String depositJdbcUrl;

  @Option(
      names = "--ledger-jdbc-url",
      description = "External ledger database, required with --deposit-jdbc-url.")
  String ledgerJdbcUrl;

  @Option(
      names = "--db-user",
      defaultValue = "postgres",
      description = "User of the external databases (password: DEMO_DB_PASSWORD).")
  String dbUser;

  @Option(
      names = "--bootstrap-servers",
      description = "External Kafka; default: a broker in this JVM.")
  String bootstrapServers;

  @Option(
      names = "--deadline-seconds",
      defaultValue = "300",
      description = "Give up waiting for convergence after this long.")
  int deadlineSeconds;

  @Option(
      names = "--trace",
      description =
          "Trace the flow (Micrometer Observation on the OpenTelemetry SDK, spans kept in memory)"
              + " and print one deposit's trace as a tree at the end of the report.")
  boolean trace;

  @Option(names = "--quiet", description = "No progress lines.")
  boolean quiet;
}
