package io.localmessage.spring.internal;

/** The endpoint's write operations were switched on with nothing to secure them. */
public final class EndpointNotProtectedException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  public EndpointNotProtectedException(String message) {
    super(message);
  }
}
