package io.localmessage.spring.internal;

import io.localmessage.spring.OperatorRule;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Turns a refused endpoint opt-in into Boot's "APPLICATION FAILED TO START" advice. */
public final class EndpointNotProtectedFailureAnalyzer
    extends AbstractFailureAnalyzer<EndpointNotProtectedException> {

  @Override
  protected FailureAnalysis analyze(Throwable root, EndpointNotProtectedException cause) {
    return new FailureAnalysis(
        cause.getMessage(),
        "Add spring-boot-starter-security to the application (operator actions then need an"
            + " authenticated user holding the authority in "
            + OperatorRule.AUTHORITY_PROPERTY
            + "), or remove localmessage.endpoint.write-enabled to keep the endpoint read-only.",
        cause);
  }
}
