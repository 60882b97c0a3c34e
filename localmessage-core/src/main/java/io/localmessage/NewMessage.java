package io.localmessage;

import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A message to save. Build one with {@link #action} or {@link #event}. Field limits follow the
 * schema; a value that does not fit is rejected at {@link Builder#build()} with a message that
 * names the field, so nothing half-valid ever reaches the database. Every text (keys, destination,
 * header names and values) must be storable text: U+0000 and unpaired surrogate characters are
 * refused. The payload size limit is the engine's ({@link
 * LocalMessagesBuilder#maxPayloadBytes(int)}), checked at save.
 */
public final class NewMessage {
  /** The longest biz type, in characters. */
  public static final int MAX_BIZ_TYPE_LENGTH = 64;

  /** The longest idempotency key, in characters. */
  public static final int MAX_IDEM_KEY_LENGTH = 128;

  /** The longest aggregate id, in characters. */
  public static final int MAX_AGGREGATE_ID_LENGTH = 128;

  /** The longest destination, in characters. */
  public static final int MAX_DESTINATION_LENGTH = 128;

  /** The headers are stored as a small JSON object; this bounds its encoded length. */
  public static final int MAX_HEADERS_LENGTH = 4096;

  private static final Pattern BIZ_TYPE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:\\-]*");

  private final MessageKind kind;
  private final String bizType;
  private final String idemKey;
  private final String aggregateId;
  private final String destination;
  private final byte[] payload;
  private final Map<String, String> headers;
  private final Integer maxAttempts;

  /**
   * The longest delay of a message: 100 years, a time every supported database can store (MySQL and
   * MariaDB's {@code DATETIME} ends in 9999) and every computation survives. Also the longest
   * {@link RetryAfter} and backoff.
   */
  public static final Duration MAX_DELAY = Duration.ofDays(36_500);

  private final Duration delay;

  private NewMessage(Builder b) {
    this.kind = b.kind;
    this.bizType = b.bizType;
    this.idemKey = b.idemKey;
    this.aggregateId = b.aggregateId;
    this.destination = b.destination;
    this.payload = b.payload;
    this.headers = Collections.unmodifiableMap(new LinkedHashMap<>(b.headers));
    this.maxAttempts = b.maxAttempts;
    this.delay = b.delay;
  }

  /** A message that calls something (a payment channel, another service). */
  public static Builder action(String bizType, String idemKey) {
    return new Builder(MessageKind.ACTION, bizType, idemKey);
  }

  /** A message that publishes a fact (relayed to Kafka). */
  public static Builder event(String bizType, String idemKey) {
    return new Builder(MessageKind.EVENT, bizType, idemKey);
  }

  /** Action or event. */
  public MessageKind kind() {
    return kind;
  }

  /** The biz type: selects the handler. */
  public String bizType() {
    return bizType;
  }

  /** The idempotency key: unique within the biz type, the identity of the side effect. */
  public String idemKey() {
    return idemKey;
  }

  /** The ordering key (and Kafka record key), or {@code null}. */
  public String aggregateId() {
    return aggregateId;
  }

  /** The topic, URL or handler-specific target, or {@code null}. */
  public String destination() {
    return destination;
  }

  /** The payload; the array is shared, do not modify it. */
  public byte[] payload() {
    return payload;
  }

  /** The headers, in insertion order; unmodifiable. */
  public Map<String, String> headers() {
    return headers;
  }

  /** An explicit attempt cap for this message, or {@code null} for the type's (or engine's). */
  public Integer maxAttempts() {
    return maxAttempts;
  }

  /** How long after the save the first attempt becomes due ({@code ZERO}: at once). */
  public Duration delay() {
    return delay;
  }

  /** Checks a biz type name; returns it or throws an {@link IllegalArgumentException}. */
  public static String checkBizType(String bizType) {
    checkText("bizType", bizType, MAX_BIZ_TYPE_LENGTH);
    if (!BIZ_TYPE.matcher(bizType).matches()) {
      throw new IllegalArgumentException(
          "bizType '"
              + bizType
              + "' has characters outside [A-Za-z0-9._:-] or does not start with a letter or digit");
    }
    return bizType;
  }

  static void checkText(String field, String value, int maxLength) {
    if (value == null) {
      throw new IllegalArgumentException(field + " must not be null");
    }
    if (value.isBlank()) {
      throw new IllegalArgumentException(field + " must not be blank");
    }
    if (value.length() > maxLength) {
      throw new IllegalArgumentException(
          field + " is " + value.length() + " characters, longer than the limit " + maxLength);
    }
    checkStorable(field, value);
  }

  /**
   * Refuses U+0000 and lone surrogates: PostgreSQL rejects the first inside the statement, which
   * aborts the caller's whole transaction, and neither can be stored faithfully anywhere.
   */
  private static void checkStorable(String field, String value) {
    String why = Texts.unstorable(value);
    if (why != null) {
      throw new IllegalArgumentException(field + " " + why);
    }
  }

  private static void checkOptional(String field, String value, int maxLength) {
    if (value != null) {
      checkText(field, value, maxLength);
    }
  }

  @Override
  public String toString() {
    // never the payload: it may carry personal or financial data
    return "NewMessage{"
        + kind
        + ", bizType="
        + bizType
        + ", idemKey="
        + idemKey
        + ", aggregateId="
        + aggregateId
        + ", payloadBytes="
        + payload.length
        + "}";
  }

  /** Builds a {@link NewMessage}; validation happens in {@link #build()}. */
  public static final class Builder {
    private final MessageKind kind;
    private final String bizType;
    private final String idemKey;
    private String aggregateId;
    private String destination;
    private byte[] payload = new byte[0];
    private final Map<String, String> headers = new LinkedHashMap<>();
    private Integer maxAttempts;
    private Duration delay = Duration.ZERO;

    private Builder(MessageKind kind, String bizType, String idemKey) {
      this.kind = kind;
      this.bizType = bizType;
      this.idemKey = idemKey;
    }

    /**
     * The ordering key: an ordered type runs the messages of one aggregate one after another; the
     * Kafka relay uses it as the record key. At most {@value #MAX_AGGREGATE_ID_LENGTH} characters;
     * {@code null} (the default) for none.
     */
    public Builder aggregateId(String aggregateId) {
      this.aggregateId = aggregateId;
      return this;
    }

    /**
     * The topic, URL or handler-specific target, at most {@value #MAX_DESTINATION_LENGTH}
     * characters; {@code null} (the default) for none.
     */
    public Builder destination(String destination) {
      this.destination = destination;
      return this;
    }

    /** The payload bytes; the array is copied. {@code null} means empty. */
    public Builder payload(byte[] payload) {
      this.payload = payload == null ? new byte[0] : Arrays.copyOf(payload, payload.length);
      return this;
    }

    /** The payload as UTF-8 text. */
    public Builder payload(String payload) {
      this.payload =
          payload == null ? new byte[0] : payload.getBytes(java.nio.charset.StandardCharsets.UTF_8);
      return this;
    }

    /**
     * Adds a header. Names and values must be text: U+0000 and lone surrogates are refused (encode
     * binary values, e.g. as Base64).
     */
    public Builder header(String name, String value) {
      checkText("header name", name, 128);
      Objects.requireNonNull(value, () -> "header '" + name + "' value must not be null");
      checkStorable("header '" + name + "' value", value);
      headers.put(name, value);
      return this;
    }

    /** Overrides the attempt cap of the type for this message; at least 1. */
    public Builder maxAttempts(int maxAttempts) {
      if (maxAttempts < 1) {
        throw new IllegalArgumentException("maxAttempts must be at least 1, was " + maxAttempts);
      }
      this.maxAttempts = maxAttempts;
      return this;
    }

    /** Makes the first attempt due only after {@code delay} (database clock). */
    public Builder delay(Duration delay) {
      Objects.requireNonNull(delay, "delay");
      if (delay.isNegative()) {
        throw new IllegalArgumentException("delay must not be negative, was " + delay);
      }
      if (delay.compareTo(MAX_DELAY) > 0) {
        throw new IllegalArgumentException(
            "delay must be at most " + MAX_DELAY + " (100 years), was " + delay);
      }
      this.delay = delay;
      return this;
    }

    /**
     * The message, after every check.
     *
     * @throws IllegalArgumentException naming the field that does not fit
     */
    public NewMessage build() {
      checkBizType(bizType);
      checkText("idemKey", idemKey, MAX_IDEM_KEY_LENGTH);
      checkOptional("aggregateId", aggregateId, MAX_AGGREGATE_ID_LENGTH);
      checkOptional("destination", destination, MAX_DESTINATION_LENGTH);
      int encoded = MessageHeaders.encode(headers).length();
      if (encoded > MAX_HEADERS_LENGTH) {
        throw new IllegalArgumentException(
            "headers encode to "
                + encoded
                + " characters, longer than the limit "
                + MAX_HEADERS_LENGTH);
      }
      return new NewMessage(this);
    }
  }
}
