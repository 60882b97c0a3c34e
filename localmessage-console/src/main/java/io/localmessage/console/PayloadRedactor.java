package io.localmessage.console;

import io.localmessage.admin.MessageView;

/**
 * Decides what the console may show of a message's payload: mask card numbers, tokens, personal
 * data. Declare one bean; without it payloads are shown as they are (within the preview cap).
 *
 * <p>It sees the whole payload as text (UTF-8, or a hex dump of the first bytes when the payload is
 * not valid UTF-8) <em>before</em> the preview is cut to {@code
 * localmessage.console.payload-preview-bytes}, so a secret cannot escape it by being split at the
 * cap. Return {@code null} to hide the payload of this message. It runs on request threads and must
 * not throw: a throwing redactor hides the payload.
 */
@FunctionalInterface
public interface PayloadRedactor {

  /** Shows payloads unchanged. */
  PayloadRedactor NONE = (message, text) -> text;

  /** Shows no payload at all. */
  PayloadRedactor HIDE_ALL = (message, text) -> null;

  /**
   * @param message the message whose payload this is (biz type, headers such as content-type)
   * @param text the payload as text
   * @return the text to show, or {@code null} to show none
   */
  String redact(MessageView message, String text);
}
