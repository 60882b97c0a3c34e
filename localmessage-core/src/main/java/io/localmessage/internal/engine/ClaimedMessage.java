package io.localmessage.internal.engine;

import io.localmessage.Message;
import io.localmessage.MessageHeaders;
import io.localmessage.MessageKind;
import io.localmessage.spi.ClaimedRow;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;

/**
 * The {@link Message} handed to handlers: a view of a claimed row, plus what this replica knows
 * about its lease: when it ends (a conservative estimate on the engine's ticker: measured from
 * before the claim or renewal statement, so the database's lease end is never earlier) and whether
 * a renewal found it taken over (fenced).
 */
final class ClaimedMessage implements Message {
  private final ClaimedRow row;
  private final Map<String, String> headers;
  private final MessageKind kind;
  private volatile long leaseEndNanos;
  private volatile long renewedAtNanos;
  private volatile boolean fenced;

  /**
   * Decodes a claimed row; throws {@link IllegalArgumentException} when a column cannot be read
   * (headers that are not the JSON object the library writes, an unknown kind).
   */
  ClaimedMessage(ClaimedRow row, long claimStartNanos, long leaseNanos) {
    this.row = row;
    this.headers = MessageHeaders.decode(row.headersJson());
    if (row.kind() == null) {
      throw new IllegalArgumentException("unknown message kind");
    }
    this.kind = row.kind();
    this.leaseEndNanos = claimStartNanos + leaseNanos;
    this.renewedAtNanos = claimStartNanos;
  }

  ClaimedRow row() {
    return row;
  }

  long leaseEndNanos() {
    return leaseEndNanos;
  }

  long renewedAtNanos() {
    return renewedAtNanos;
  }

  void renewed(long startNanos, long leaseNanos) {
    renewedAtNanos = startNanos;
    leaseEndNanos = startNanos + leaseNanos;
  }

  boolean fenced() {
    return fenced;
  }

  void fence() {
    fenced = true;
  }

  @Override
  public long id() {
    return row.id();
  }

  @Override
  public MessageKind kind() {
    return kind;
  }

  @Override
  public String bizType() {
    return row.bizType();
  }

  @Override
  public String idemKey() {
    return row.idemKey();
  }

  @Override
  public String aggregateId() {
    return row.aggregateId();
  }

  @Override
  public String destination() {
    return row.destination();
  }

  @Override
  public byte[] payload() {
    byte[] p = row.payload();
    return p == null ? new byte[0] : Arrays.copyOf(p, p.length);
  }

  @Override
  public Map<String, String> headers() {
    return headers;
  }

  @Override
  public int attempt() {
    return row.attempts();
  }

  @Override
  public int maxAttempts() {
    return row.maxAttempts();
  }

  @Override
  public Instant createdAt() {
    return row.createdAt();
  }

  @Override
  public String toString() {
    return "Message{id="
        + row.id()
        + ", bizType="
        + row.bizType()
        + ", idemKey="
        + row.idemKey()
        + ", attempt="
        + row.attempts()
        + "}";
  }
}
