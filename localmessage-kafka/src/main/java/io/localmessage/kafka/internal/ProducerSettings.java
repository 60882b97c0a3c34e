package io.localmessage.kafka.internal;

import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The producer properties of a relay that owns its producer: the user's, checked, on top of
 * defaults that are right for money (idempotence, {@code acks=all}, at most 5 requests in flight,
 * bounded delivery and blocking times). Settings that would weaken delivery are refused with the
 * reason. Not API.
 */
public final class ProducerSettings {
  public static final Duration DEFAULT_DELIVERY_TIMEOUT = Duration.ofSeconds(15);
  public static final Duration DEFAULT_MAX_BLOCK = Duration.ofSeconds(5);
  public static final Duration MAX_DELIVERY_TIMEOUT = Duration.ofMinutes(10);
  public static final Duration MAX_MAX_BLOCK = Duration.ofMinutes(1);
  static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(10);

  private final Map<String, Object> properties;
  private final Duration deliveryTimeout;
  private final Duration maxBlock;

  private ProducerSettings(
      Map<String, Object> properties, Duration deliveryTimeout, Duration maxBlock) {
    this.properties = properties;
    this.deliveryTimeout = deliveryTimeout;
    this.maxBlock = maxBlock;
  }

  /**
   * Checks {@code user} and completes it. {@code deliveryTimeout} and {@code maxBlock} are the
   * builder's explicit values ({@code null}: take the property, else the default); an explicit
   * value that contradicts the property is refused.
   */
  public static ProducerSettings of(
      Map<String, ?> user, Duration deliveryTimeout, Duration maxBlock) {
    Objects.requireNonNull(user, "producer properties");
    Map<String, Object> p = new HashMap<>();
    user.forEach(
        (k, v) -> {
          if (k == null || v == null) {
            throw new IllegalArgumentException(
                "producer properties must not hold null keys or" + " values (key " + k + ")");
          }
          p.put(k, v);
        });
    if (text(p, ProducerConfig.BOOTSTRAP_SERVERS_CONFIG) == null) {
      throw new IllegalArgumentException(
          "producer properties need " + ProducerConfig.BOOTSTRAP_SERVERS_CONFIG);
    }
    requireByteArray(p, ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG);
    requireByteArray(p, ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG);
    String idempotence = text(p, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG);
    if (idempotence != null && !idempotence.equalsIgnoreCase("true")) {
      throw new IllegalArgumentException(
          "enable.idempotence="
              + idempotence
              + " is refused: without the idempotent producer a retried send can duplicate or"
              + " reorder events within a partition");
    }
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    String acks = text(p, ProducerConfig.ACKS_CONFIG);
    if (acks != null && !acks.equalsIgnoreCase("all") && !acks.equals("-1")) {
      throw new IllegalArgumentException(
          "acks="
              + acks
              + " is refused: a ticket is completed on the broker's acknowledgement, and only"
              + " acks=all survives the loss of the partition leader");
    }
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    String inFlight = text(p, ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION);
    if (inFlight != null) {
      int n = parseInt(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, inFlight);
      if (n < 1 || n > 5) {
        throw new IllegalArgumentException(
            "max.in.flight.requests.per.connection must be between 1 and 5 (the idempotent"
                + " producer keeps order only up to 5), was "
                + n);
      }
    } else {
      p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
    }
    if (text(p, ProducerConfig.TRANSACTIONAL_ID_CONFIG) != null) {
      throw new IllegalArgumentException(
          "transactional.id is refused: the relay completes each ticket from its own send and"
              + " does not use Kafka transactions");
    }
    Duration delivery =
        resolve(
            p,
            ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG,
            deliveryTimeout,
            DEFAULT_DELIVERY_TIMEOUT);
    Duration block = resolve(p, ProducerConfig.MAX_BLOCK_MS_CONFIG, maxBlock, DEFAULT_MAX_BLOCK);
    checkDeliveryTimeout(delivery);
    checkMaxBlock(block);
    long linger = longValue(p, ProducerConfig.LINGER_MS_CONFIG, 5);
    long request =
        longValue(
            p,
            ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG,
            Math.min(DEFAULT_REQUEST_TIMEOUT.toMillis(), delivery.toMillis() / 2));
    if (delivery.toMillis() < linger + request) {
      throw new IllegalArgumentException(
          "delivery.timeout.ms "
              + delivery.toMillis()
              + " must be at least linger.ms "
              + linger
              + " + request.timeout.ms "
              + request);
    }
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Long.toString(delivery.toMillis()));
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Long.toString(block.toMillis()));
    p.put(ProducerConfig.LINGER_MS_CONFIG, Long.toString(linger));
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Long.toString(request));
    p.putIfAbsent(ProducerConfig.BATCH_SIZE_CONFIG, "65536");
    p.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, "lm-relay");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    return new ProducerSettings(Map.copyOf(p), delivery, block);
  }

  public static Duration checkDeliveryTimeout(Duration d) {
    Objects.requireNonNull(d, "deliveryTimeout");
    if (d.compareTo(Duration.ofSeconds(1)) < 0 || d.compareTo(MAX_DELIVERY_TIMEOUT) > 0) {
      throw new IllegalArgumentException(
          "deliveryTimeout (delivery.timeout.ms) must be between 1 s and "
              + MAX_DELIVERY_TIMEOUT
              + ", was "
              + d);
    }
    return d;
  }

  public static Duration checkMaxBlock(Duration d) {
    Objects.requireNonNull(d, "maxBlock");
    if (d.isNegative() || d.compareTo(MAX_MAX_BLOCK) > 0) {
      throw new IllegalArgumentException(
          "maxBlock (max.block.ms) must be between 0 and " + MAX_MAX_BLOCK + ", was " + d);
    }
    return d;
  }

  public Map<String, Object> properties() {
    return properties;
  }

  public Duration deliveryTimeout() {
    return deliveryTimeout;
  }

  public Duration maxBlock() {
    return maxBlock;
  }

  private static Duration resolve(
      Map<String, Object> p, String key, Duration explicit, Duration fallback) {
    String v = text(p, key);
    if (v == null) {
      return explicit != null ? explicit : fallback;
    }
    Duration fromProperty = Duration.ofMillis(parseLong(key, v));
    if (explicit != null && !explicit.equals(fromProperty)) {
      throw new IllegalArgumentException(
          key + "=" + v + " contradicts the builder's " + explicit + "; set only one of them");
    }
    return fromProperty;
  }

  private static void requireByteArray(Map<String, Object> p, String key) {
    Object v = p.get(key);
    if (v == null) {
      return;
    }
    String name = v instanceof Class<?> c ? c.getName() : v.toString();
    if (!name.equals(ByteArraySerializer.class.getName())) {
      throw new IllegalArgumentException(
          key + " must be ByteArraySerializer (payloads are bytes already), was " + name);
    }
  }

  private static String text(Map<String, Object> p, String key) {
    Object v = p.get(key);
    if (v == null) {
      return null;
    }
    String s = v.toString().trim().toLowerCase(Locale.ROOT);
    return s.isEmpty() ? null : s;
  }

  private static long longValue(Map<String, Object> p, String key, long fallback) {
    String v = text(p, key);
    return v == null ? fallback : parseLong(key, v);
  }

  private static long parseLong(String key, String v) {
    try {
      return Long.parseLong(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + " must be a number of milliseconds, was " + v, e);
    }
  }

  private static int parseInt(String key, String v) {
    try {
      return Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + " must be a number, was " + v, e);
    }
  }
}
