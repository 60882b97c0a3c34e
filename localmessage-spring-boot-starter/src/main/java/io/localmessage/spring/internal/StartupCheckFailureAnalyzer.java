package io.localmessage.spring.internal;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Turns a {@link StartupCheckException} into Boot's "APPLICATION FAILED TO START" advice. */
public final class StartupCheckFailureAnalyzer
    extends AbstractFailureAnalyzer<StartupCheckException> {

  @Override
  protected FailureAnalysis analyze(Throwable root, StartupCheckException cause) {
    return new FailureAnalysis(cause.getMessage(), cause.action(), cause);
  }
}
