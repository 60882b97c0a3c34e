package io.localmessage.console.internal;

import io.localmessage.console.ConsoleProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.web.server.servlet.context.ServletWebServerInitializedEvent;
import org.springframework.context.ApplicationListener;

/**
 * Says once the web server runs that the console is on, where, and how it is secured, so nobody has
 * to guess whether enabling it worked or which URL to open. Not API.
 */
public final class ConsoleAnnouncer
    implements ApplicationListener<ServletWebServerInitializedEvent> {
  private static final Logger log = LoggerFactory.getLogger(ConsoleAnnouncer.class);

  private final ConsoleProperties props;
  private final ConsoleAccess access;

  public ConsoleAnnouncer(ConsoleProperties props, ConsoleAccess access) {
    this.props = props;
    this.access = access;
  }

  @Override
  public void onApplicationEvent(ServletWebServerInitializedEvent event) {
    String contextPath = event.getApplicationContext().getServletContext().getContextPath();
    String address = event.getApplicationContext().getEnvironment().getProperty("server.address");
    String host = address == null || address.isBlank() ? "localhost" : address;
    String url =
        "http://" + host + ":" + event.getWebServer().getPort() + contextPath + props.getPath();
    if (access instanceof SpringSecurityAccess) {
      log.info(
          "event=console_enabled url={} security=spring-security login={}/login"
              + " action_authority={} view_authority={}",
          url,
          url,
          props.getActionAuthority(),
          props.getViewAuthority() == null || props.getViewAuthority().isBlank()
              ? "any-authenticated-user"
              : props.getViewAuthority());
    } else {
      log.info("event=console_enabled url={} security=token login={}/login", url, url);
    }
  }
}
