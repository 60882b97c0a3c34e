package io.localmessage.http;

import io.localmessage.Message;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Finds the URL a message is delivered to. A resolver that cannot find one throws {@link
 * IllegalArgumentException}; the delivery then dead-letters the message, since trying again cannot
 * help.
 *
 * <p>Security: {@link #destination()} trusts the URL stored in the message. When destinations can
 * be influenced by users, prefer {@link #named(Map)} or {@link #fixed(URI)}, which only ever call
 * the configured hosts.
 */
@FunctionalInterface
public interface UrlResolver {

  /** The absolute {@code http} or {@code https} URL to call for {@code message}. */
  URI resolve(Message message);

  /** The message's destination is the absolute URL (the default). */
  static UrlResolver destination() {
    return m -> {
      String d = m.destination();
      if (d == null || d.isBlank()) {
        throw new IllegalArgumentException("the ticket has no destination URL");
      }
      URI uri = URI.create(d.trim());
      if (!uri.isAbsolute()) {
        throw new IllegalArgumentException("destination '" + d + "' is not an absolute URL");
      }
      return uri;
    };
  }

  /** Every message goes to {@code url}, whatever its destination. */
  static UrlResolver fixed(URI url) {
    URI u = checkBase("url", url);
    return m -> u;
  }

  /**
   * Logical destination names mapped to base URLs: a message with destination {@code points} goes
   * to the base URL of {@code points}; {@code points/orders/42} goes to that base URL plus {@code
   * /orders/42}. An unknown name is a permanent failure; the host is always the configured one.
   */
  static UrlResolver named(Map<String, URI> baseUrls) {
    Objects.requireNonNull(baseUrls, "baseUrls");
    if (baseUrls.isEmpty()) {
      throw new IllegalArgumentException("baseUrls must name at least one destination");
    }
    Map<String, URI> bases = new LinkedHashMap<>();
    baseUrls.forEach((name, url) -> bases.put(name, checkBase("base URL of '" + name + "'", url)));
    return m -> {
      String d = m.destination();
      if (d == null || d.isBlank()) {
        throw new IllegalArgumentException("the ticket has no destination name");
      }
      int slash = d.indexOf('/');
      String name = slash < 0 ? d : d.substring(0, slash);
      URI base = bases.get(name);
      if (base == null) {
        throw new IllegalArgumentException(
            "unknown destination '" + name + "'; known: " + bases.keySet());
      }
      if (slash < 0) {
        return base;
      }
      String b = base.toString();
      String url = (b.endsWith("/") ? b.substring(0, b.length() - 1) : b) + d.substring(slash);
      URI u = URI.create(url);
      if (!Objects.equals(u.getScheme(), base.getScheme())
          || !Objects.equals(u.getRawAuthority(), base.getRawAuthority())) {
        throw new IllegalArgumentException(
            "destination '" + d + "' leaves the configured host of '" + name + "'");
      }
      return u;
    };
  }

  private static URI checkBase(String what, URI url) {
    Objects.requireNonNull(url, what);
    if (!"http".equalsIgnoreCase(url.getScheme()) && !"https".equalsIgnoreCase(url.getScheme())) {
      throw new IllegalArgumentException(
          what + " must be an absolute http or https URL, was " + url);
    }
    if (url.getHost() == null) {
      throw new IllegalArgumentException(what + " has no host: " + url);
    }
    return url;
  }
}
