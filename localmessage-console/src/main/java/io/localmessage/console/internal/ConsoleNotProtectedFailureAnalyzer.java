package io.localmessage.console.internal;

import io.localmessage.console.ConsoleProperties;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Turns a refused console startup into Boot's "APPLICATION FAILED TO START" advice. */
public final class ConsoleNotProtectedFailureAnalyzer
    extends AbstractFailureAnalyzer<ConsoleNotProtectedException> {

  @Override
  protected FailureAnalysis analyze(Throwable root, ConsoleNotProtectedException cause) {
    return new FailureAnalysis(
        cause.getMessage(),
        "Add spring-boot-starter-security to the application (the console then requires an"
            + " authenticated user, and the authority in localmessage.console.action-authority"
            + " for actions), or set localmessage.console.token to a random secret of at least "
            + ConsoleProperties.MIN_TOKEN_LENGTH
            + " characters, or set localmessage.console.enabled=false.",
        cause);
  }
}
