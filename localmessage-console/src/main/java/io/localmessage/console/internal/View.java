package io.localmessage.console.internal;

import io.localmessage.console.internal.ConsoleAccess.CsrfField;
import jakarta.servlet.http.HttpServletRequest;

/**
 * What every page needs to know about the request: the console's base URL (context path included),
 * who is looking, whether they may act, and the CSRF field their forms must carry.
 */
record View(String base, String operator, boolean mayAct, CsrfField csrf, String replica) {

  static View of(
      HttpServletRequest http, String path, String operator, ConsoleAccess access, String replica) {
    return new View(
        http.getContextPath() + path, operator, access.mayAct(http), access.csrf(http), replica);
  }

  String url(String rest) {
    return base + rest;
  }
}
