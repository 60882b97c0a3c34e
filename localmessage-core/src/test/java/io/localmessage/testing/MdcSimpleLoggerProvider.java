package io.localmessage.testing;

import org.slf4j.helpers.BasicMDCAdapter;
import org.slf4j.simple.SimpleServiceProvider;
import org.slf4j.spi.MDCAdapter;

/**
 * slf4j-simple with a working MDC (its own is a no-op), so tests can see what the engine puts in
 * the MDC. Selected with {@code -Dslf4j.provider} in the core's test configuration.
 */
public final class MdcSimpleLoggerProvider extends SimpleServiceProvider {
  private final MDCAdapter mdc = new BasicMDCAdapter();

  @Override
  public MDCAdapter getMDCAdapter() {
    return mdc;
  }
}
