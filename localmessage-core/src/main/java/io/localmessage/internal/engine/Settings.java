package io.localmessage.internal.engine;

import io.localmessage.spi.Dialect;
import io.localmessage.spi.EngineListener;
import io.localmessage.spi.ErrorRedactor;
import io.localmessage.spi.TracePropagation;
import java.time.Duration;
import javax.sql.DataSource;

/** The validated engine settings, built by {@code LocalMessagesBuilder}. Not API. */
public record Settings(
    DataSource dataSource,
    String table,
    String inboxTable,
    String replicaId,
    int concurrency,
    Duration lease,
    Duration pollInterval,
    Duration writeBackMargin,
    Duration shutdownTimeout,
    Duration maintenanceInterval,
    int maxPayloadBytes,
    int purgeBatchSize,
    int writeBatchSize,
    int defaultMaxAttempts,
    boolean defaultMaxAttemptsSet,
    Dialect dialect,
    boolean autoCreateSchema,
    EngineListener listener,
    ErrorRedactor redactor,
    Object meterRegistry,
    Duration maxExecutionTime,
    Duration loopStuckAfter,
    boolean wakeUps,
    TracePropagation tracing,
    boolean virtualThreads,
    java.util.Set<String> unorderedTypes,
    Ticker ticker) {}
