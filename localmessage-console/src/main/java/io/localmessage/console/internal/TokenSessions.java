package io.localmessage.console.internal;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Token mode's credentials. The token itself is compared in constant time; a login turns it into a
 * signed cookie {@code name.expiry.mac} (HMAC-SHA256 with a key derived from the token), so every
 * replica sharing the token accepts it and changing the token logs everyone out. The CSRF value of
 * a login is an HMAC of its cookie: a page on another site can neither read nor compute it.
 */
public final class TokenSessions {
  private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder B64D = Base64.getUrlDecoder();
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

  /** Whether {@code name} may be used as an operator name (printable, 1 to 64 characters). */
  public static boolean validName(String name) {
    if (name == null || name.isBlank() || name.length() > MAX_NAME) {
      return false;
    }
    return name.codePoints().noneMatch(Character::isISOControl);
  }

  /** A cookie value for {@code name} that expires after the session lifetime. */
  public String issue(String name) {
    String body =
        B64.encodeToString(name.strip().getBytes(StandardCharsets.UTF_8))
            + "."
            + (clock.instant().plus(lifetime).getEpochSecond());
    return body + "." + mac(body);
  }

  /** The operator name of a valid, unexpired cookie value, or null. */
  public String verify(String cookie) {
    if (cookie == null) {
      return null;
    }
    int last = cookie.lastIndexOf('.');
    int first = cookie.indexOf('.');
    if (first <= 0 || last <= first) {
      return null;
    }
    String body = cookie.substring(0, last);
    byte[] expected = mac(body).getBytes(StandardCharsets.US_ASCII);
    if (!MessageDigest.isEqual(
        expected, cookie.substring(last + 1).getBytes(StandardCharsets.US_ASCII))) {
      return null;
    }
    try {
      long expiry = Long.parseLong(cookie.substring(first + 1, last));
      if (clock.instant().getEpochSecond() >= expiry) {
        return null;
      }
      String name = new String(B64D.decode(cookie.substring(0, first)), StandardCharsets.UTF_8);
      return validName(name) ? name : null;
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
