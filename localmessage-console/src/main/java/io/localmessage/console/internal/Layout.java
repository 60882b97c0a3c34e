package io.localmessage.console.internal;

import io.localmessage.console.internal.ConsoleAccess.CsrfField;
import io.localmessage.console.internal.ConsoleAccess.LoginForm;

/** The page shell, the navigation, notices and the action forms every page shares. */
final class Layout {
  private Layout() {}

  static Html open(View v, String title) {
    Html h = new Html();
    head(h, v.base(), title);
    h.raw("<body><header><a class=\"brand\"").attr("href", v.base()).raw(">localmessage</a><nav>");
    h.link(v.url(""), "Overview").link(v.url("/dead"), "Dead letters");
    h.raw("</nav><form method=\"get\"").attr("action", v.url("/search")).raw(">");
    h.raw(
        "<input type=\"search\" name=\"q\" placeholder=\"aggregate id, idem key or ticket id\""
            + " aria-label=\"search\"></form>");
    h.raw("<span class=\"who\">").text(v.operator());
    if (!v.mayAct()) {
      h.text(" (read-only)");
    }
    h.text(" · " + v.replica()).raw("</span>");
    h.raw("<form method=\"post\"").attr("action", v.url("/logout")).raw(">");
    csrf(h, v.csrf());
    h.raw("<button type=\"submit\">Log out</button></form></header><main>");
    return h;
  }

  static String close(Html h) {
    return h.raw("</main></body></html>").toString();
  }

  private static void head(Html h, String base, String title) {
    h.raw("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">")
        .raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
        .raw("<title>")
        .text(title)
        .raw(" · localmessage</title><link rel=\"stylesheet\"")
        .attr("href", base + "/console.css")
        .raw("><script defer")
        .attr("src", base + "/console.js")
        .raw("></script></head>");
  }

  static void csrf(Html h, CsrfField csrf) {
    if (csrf != null) {
      h.hidden(csrf.name(), csrf.value());
    }
  }

  /**
   * An action form: hidden fields, a required reason, a button. Shown only to operators who may
   * act; {@code confirm} asks the browser for a confirmation first (null: none).
   */
  static void actionForm(
      Html h,
      View v,
      String action,
      String[][] fields,
      String button,
      String confirm,
      String formId) {
    if (!v.mayAct()) {
      return;
    }
    h.raw("<form class=\"action\" method=\"post\"").attr("action", v.url("/actions/" + action));
    if (formId != null) {
      h.attr("id", formId);
    }
    if (confirm != null) {
      h.attr("data-confirm", confirm);
    }
    h.raw(">");
    csrf(h, v.csrf());
    for (String[] f : fields) {
      h.hidden(f[0], f[1]);
    }
    reasonAndButton(h, button, confirm != null);
    h.raw("</form>");
  }

  static void reasonAndButton(Html h, String button, boolean danger) {
    h.raw(
        "<input name=\"reason\" required maxlength=\"512\" placeholder=\"reason (goes to the"
            + " audit trail)\" aria-label=\"reason\">");
    h.raw("<button type=\"submit\"").raw(danger ? " class=\"danger\"" : "").raw(">");
    h.text(button).raw("</button>");
  }

  static void notice(Html h, String done, String n) {
    if (done == null) {
      return;
    }
    long count = parse(n);
    String text =
        switch (done) {
          case "requeued" -> "Requeued " + count + (count == 1 ? " ticket." : " tickets.");
          case "canceled" ->
              count == 1
                  ? "Ticket canceled."
                  : "Nothing canceled: the ticket is" + " no longer PENDING or DEAD.";
          case "paused" -> "Biz type paused on every replica.";
          case "resumed" -> "Biz type resumed.";
          default -> null;
        };
    if (text != null) {
      h.raw("<div class=\"notice\" role=\"status\">").text(text).raw("</div>");
    }
  }

  private static long parse(String n) {
    try {
      return n == null ? 0 : Long.parseLong(n);
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  static String login(String base, LoginForm form, CsrfField csrf, boolean error, boolean out) {
    Html h = new Html();
    head(h, base, "Log in");
    h.raw("<body><div class=\"login\"><h1>localmessage console</h1>");
    if (error) {
      h.raw("<div class=\"problem\" role=\"alert\">Wrong credentials.</div>");
    }
    if (out) {
      h.raw("<div class=\"notice\" role=\"status\">Logged out.</div>");
    }
    h.raw("<form method=\"post\"").attr("action", base + "/login").raw(">");
    csrf(h, csrf);
    h.raw("<label for=\"lm-user\">").text(form.userLabel()).raw("</label>");
    h.raw("<input id=\"lm-user\" autocomplete=\"username\" required").attr("name", form.user());
    h.raw(">");
    h.raw("<label for=\"lm-secret\">").text(form.secretLabel()).raw("</label>");
    h.raw("<input id=\"lm-secret\" type=\"password\" autocomplete=\"current-password\" required");
    h.attr("name", form.secret()).raw(">");
    h.raw("<button type=\"submit\">Log in</button></form></div></body></html>");
    return h.toString();
  }

  static String problem(View v, String title, String message) {
    Html h = v == null ? bare(title) : open(v, title);
    h.el("h1", title);
    h.raw("<div class=\"problem\" role=\"alert\">").text(message).raw("</div>");
    if (v != null) {
      h.link(v.base(), "Back to the overview");
    }
    return v == null ? h.raw("</body></html>").toString() : close(h);
  }

  private static Html bare(String title) {
    Html h = new Html();
    h.raw("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>")
        .text(title)
        .raw("</title></head><body>");
    return h;
  }
}
