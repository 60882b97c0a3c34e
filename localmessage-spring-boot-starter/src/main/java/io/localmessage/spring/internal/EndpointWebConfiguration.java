package io.localmessage.spring.internal;

import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;

/**
 * On the server that serves actuator (the application's, or the management port's): actions sent
 * without a body reach the {@code localmessage} endpoint, which then says that a reason is
 * required, instead of the bare 415 of actuator's content negotiation. Not API.
 */
@ManagementContextConfiguration(value = ManagementContextType.ANY, proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({FilterRegistrationBean.class, PathMappedEndpoints.class})
@ConditionalOnBean({LocalMessageEndpoint.class, PathMappedEndpoints.class})
public class EndpointWebConfiguration {

  @Bean
  FilterRegistrationBean<EmptyActionBodyFilter> localMessageEmptyActionBodyFilter(
      PathMappedEndpoints endpoints) {
    String path = endpoints.getPath(EndpointId.of("localmessage"));
    FilterRegistrationBean<EmptyActionBodyFilter> registration =
        new FilterRegistrationBean<>(new EmptyActionBodyFilter());
    if (path != null) {
      registration.addUrlPatterns(path + "/*");
    } else {
      registration.setEnabled(false); // not exposed over the web
    }
    // after Spring Security: who may act is decided before the body is looked at
    registration.setOrder(Ordered.LOWEST_PRECEDENCE - 100);
    return registration;
  }
}
