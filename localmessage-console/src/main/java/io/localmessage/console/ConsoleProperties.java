package io.localmessage.console;

import java.time.Duration;
import java.util.regex.Pattern;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code localmessage.console.*}: the web console. Disabled unless {@code enabled=true}; then it is
 * secured by Spring Security when the application has it, otherwise by a required {@code token}.
 */
@ConfigurationProperties("localmessage.console")
public final class ConsoleProperties {
  public static final String DEFAULT_PATH = "/localmessage";
  public static final String DEFAULT_ACTION_AUTHORITY = "LOCALMESSAGE_ADMIN";
  public static final int DEFAULT_PAGE_SIZE = 25;
  public static final int DEFAULT_PAYLOAD_PREVIEW_BYTES = 2048;
  public static final int DEFAULT_CHART_MINUTES = 30;
  public static final Duration DEFAULT_TOKEN_SESSION = Duration.ofHours(8);
  public static final int MIN_TOKEN_LENGTH = 16;

  private static final Pattern PATH = Pattern.compile("(/[A-Za-z0-9._~-]+)+");

  /** Serve the console. Off by default: it must be switched on deliberately. */
  private boolean enabled;

  /** Where the console is served, relative to the context path. */
  private String path = DEFAULT_PATH;

  /**
   * Without Spring Security: the secret operators present (header {@code X-LocalMessage-Token} or
   * the console's login form). Required then, at least 16 characters. Ignored with Spring Security.
   */
  private String token;

  /** How long a token login lasts (the signed cookie's lifetime). */
  private Duration tokenSession = DEFAULT_TOKEN_SESSION;

  /**
   * With Spring Security: the authority needed for requeue, cancel, pause and resume ({@code
   * ROLE_}-prefixed form also accepted, so {@code roles("LOCALMESSAGE_ADMIN")} works).
   */
  private String actionAuthority = DEFAULT_ACTION_AUTHORITY;

  /**
   * With Spring Security: the authority needed to see the console; empty: any authenticated user.
   */
  private String viewAuthority = "";

  /** Dead letters per page. */
  private int pageSize = DEFAULT_PAGE_SIZE;

  /** Payload preview cap in bytes (UTF-8); 0 shows no payloads and never reads them. */
  private int payloadPreviewBytes = DEFAULT_PAYLOAD_PREVIEW_BYTES;

  /** Minutes of successes/failures kept for the overview chart (this replica's deliveries). */
  private int chartMinutes = DEFAULT_CHART_MINUTES;

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public String getPath() {
    return path;
  }

  public void setPath(String path) {
    if (path == null || !PATH.matcher(path).matches()) {
      throw new IllegalArgumentException(
          "localmessage.console.path must look like /localmessage (segments of letters, digits,"
              + " '.', '_', '~' or '-', no trailing slash), was '"
              + path
              + "'");
    }
    this.path = path;
  }

  public String getToken() {
    return token;
  }

  public void setToken(String token) {
    this.token = token;
  }

  public Duration getTokenSession() {
    return tokenSession;
  }

  public void setTokenSession(Duration tokenSession) {
    if (tokenSession == null
        || tokenSession.compareTo(Duration.ofMinutes(1)) < 0
        || tokenSession.compareTo(Duration.ofDays(30)) > 0) {
      throw new IllegalArgumentException(
          "localmessage.console.token-session must be between 1m and 30d, was " + tokenSession);
    }
    this.tokenSession = tokenSession;
  }

  public String getActionAuthority() {
    return actionAuthority;
  }

  public void setActionAuthority(String actionAuthority) {
    if (actionAuthority == null || actionAuthority.isBlank()) {
      throw new IllegalArgumentException(
          "localmessage.console.action-authority must not be blank: actions always need one");
    }
    this.actionAuthority = actionAuthority.strip();
  }

  public String getViewAuthority() {
    return viewAuthority;
  }

  public void setViewAuthority(String viewAuthority) {
    this.viewAuthority = viewAuthority == null ? "" : viewAuthority.strip();
  }

  public int getPageSize() {
    return pageSize;
  }

  public void setPageSize(int pageSize) {
    if (pageSize < 1 || pageSize > 500) {
      throw new IllegalArgumentException(
          "localmessage.console.page-size must be between 1 and 500, was " + pageSize);
    }
    this.pageSize = pageSize;
  }

  public int getPayloadPreviewBytes() {
    return payloadPreviewBytes;
  }

  public void setPayloadPreviewBytes(int payloadPreviewBytes) {
    if (payloadPreviewBytes < 0 || payloadPreviewBytes > 65_536) {
      throw new IllegalArgumentException(
          "localmessage.console.payload-preview-bytes must be between 0 and 65536, was "
              + payloadPreviewBytes);
    }
    this.payloadPreviewBytes = payloadPreviewBytes;
  }

  public int getChartMinutes() {
    return chartMinutes;
  }

  public void setChartMinutes(int chartMinutes) {
    if (chartMinutes < 5 || chartMinutes > 240) {
      throw new IllegalArgumentException(
          "localmessage.console.chart-minutes must be between 5 and 240, was " + chartMinutes);
    }
    this.chartMinutes = chartMinutes;
  }
}
