package io.localmessage.http;

import io.localmessage.Message;
import io.localmessage.MessageKind;
import java.time.Instant;
import java.util.Map;

/** A {@link Message} for tests that need no engine. */
record TestMessage(String idemKey, String destination, Map<String, String> headers, byte[] body)
    implements Message {
  static TestMessage to(String destination) {
    return new TestMessage("k-1", destination, Map.of(), new byte[0]);
  }

  @Override
  public long id() {
    return 1;
  }

  @Override
  public MessageKind kind() {
    return MessageKind.ACTION;
  }

  @Override
  public String bizType() {
    return "test.call";
  }

  @Override
  public String aggregateId() {
    return null;
  }

  @Override
  public byte[] payload() {
    return body.clone();
  }

  @Override
  public int attempt() {
    return 1;
  }

  @Override
  public int maxAttempts() {
    return 1;
  }

  @Override
  public Instant createdAt() {
    return Instant.EPOCH;
  }
}
