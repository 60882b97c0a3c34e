package io.localmessage.internal;

import io.localmessage.Message;
import io.localmessage.MessageKind;
import io.localmessage.spi.ClaimedRow;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;

/** The {@link Message} handed to handlers: a view of a claimed row. */
final class ClaimedMessage implements Message {
  private final ClaimedRow row;
  private final Map<String, String> headers;

  ClaimedMessage(ClaimedRow row) {
    this.row = row;
    this.headers = HeadersCodec.decode(row.headersJson());
  }

  ClaimedRow row() {
    return row;
  }

  @Override
  public long id() {
    return row.id();
  }

  @Override
  public MessageKind kind() {
    return MessageKind.ofCode(row.kind());
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
