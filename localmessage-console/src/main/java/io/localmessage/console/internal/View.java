package io.localmessage.console.internal;

import io.localmessage.console.internal.ConsoleAccess.CsrfField;

/**
 * What every page needs to know about the request: the console's base URL (context path included),
 * who is looking, whether they may act, and the CSRF field their forms must carry.
 */
record View(String base, String operator, boolean mayAct, CsrfField csrf, String replica) {

  String url(String rest) {
    return base + rest;
  }
}
