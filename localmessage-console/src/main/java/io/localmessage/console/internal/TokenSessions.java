package io.localmessage.console.internal;

import io.localmessage.Printable;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Token mode's credentials. The token itself is compared in constant time; a login turns it into a
 * signed cookie {@code name.expiry.session.mac} (HMAC-SHA256 with a key derived from the token), so
 * every replica sharing the token accepts it and changing the token logs everyone out. Every login
 * draws a new random session id, which logout revokes on all replicas ({@link TokenRevocations}).
 * The CSRF value of a login is an HMAC of its cookie: a page on another site can neither read nor
 * compute it.
 */
public final class TokenSessions {
  private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder B64D = Base64.getUrlDecoder();
  private static final SecureRandom RANDOM = new SecureRandom();
  static final int MAX_NAME = 64;

  private final byte[] token;
  private final SecretKeySpec key;
  private final Clock clock;
  private final Duration lifetime;

  public TokenSessions(String token, Duration lifetime, Clock clock) {
    this.token = token.getBytes(StandardCharsets.UTF_8);
    this.key = new SecretKeySpec(sha256("localmessage-console|" + token), "HmacSHA256");
    this.lifetime = lifetime;
    this.clock = clock;
  }

  /** Constant-time comparison with the configured token. */
  public boolean tokenMatches(String presented) {
    return presented != null
        && MessageDigest.isEqual(token, presented.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Whether {@code name} may be used as an operator name: 1 to 64 characters, no control
   * characters, no bidirectional overrides or isolates.
   */
  public static boolean validName(String name) {
    if (name == null || name.isBlank() || name.length() > MAX_NAME) {
      return false;
    }
    return Printable.unprintable(name) == null;
  }

  /** One login: who, which session (random, new at every login), and until when. */
  public record Session(String name, String id, long expiresAtEpochSecond) {}

  /** A cookie value for {@code name}, with a new session id, that expires after the lifetime. */
  public String issue(String name) {
    byte[] id = new byte[16];
    RANDOM.nextBytes(id);
    String body =
        B64.encodeToString(name.strip().getBytes(StandardCharsets.UTF_8))
            + "."
            + (clock.instant().plus(lifetime).getEpochSecond())
            + "."
            + B64.encodeToString(id);
    return body + "." + mac(body);
  }

  /** The operator name of a valid, unexpired cookie value, or null. */
  public String verify(String cookie) {
    Session s = session(cookie);
    return s == null ? null : s.name();
  }

  /**
   * The session of a correctly signed, unexpired cookie value, or null. Revocation is checked
   * separately, against the shared table.
   */
  public Session session(String cookie) {
    if (cookie == null) {
      return null;
    }
    String[] parts = cookie.split("\\.", -1);
    if (parts.length != 4 || parts[0].isEmpty() || parts[2].isEmpty()) {
      return null;
    }
    String body = parts[0] + "." + parts[1] + "." + parts[2];
    byte[] expected = mac(body).getBytes(StandardCharsets.US_ASCII);
    if (!MessageDigest.isEqual(expected, parts[3].getBytes(StandardCharsets.US_ASCII))) {
      return null;
    }
    try {
      long expiry = Long.parseLong(parts[1]);
      if (clock.instant().getEpochSecond() >= expiry) {
        return null;
      }
      String name = new String(B64D.decode(parts[0]), StandardCharsets.UTF_8);
      return validName(name) ? new Session(name, parts[2], expiry) : null;
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** The CSRF value bound to one login (cookie value). */
  public String csrfFor(String cookie) {
    return mac("csrf|" + cookie);
  }

  public boolean csrfMatches(String cookie, String presented) {
    return presented != null
        && MessageDigest.isEqual(
            csrfFor(cookie).getBytes(StandardCharsets.US_ASCII),
            presented.getBytes(StandardCharsets.US_ASCII));
  }

  public Duration lifetime() {
    return lifetime;
  }

  private String mac(String data) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(key);
      return B64.encodeToString(mac.doFinal(data.getBytes(StandardCharsets.UTF_8)));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is not available", e);
    }
  }

  private static byte[] sha256(String s) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 is not available", e);
    }
  }
}
