package io.localmessage.http.internal;

/**
 * The first bytes of a response body and how many bytes were seen in all. Not API.
 *
 * @param prefix at most the capture limit, from the start of the body
 * @param totalBytes bytes seen before the body ended or reading stopped
 * @param complete false when reading stopped at the discard limit
 */
public record CapturedBody(byte[] prefix, long totalBytes, boolean complete) {
  public static final CapturedBody EMPTY = new CapturedBody(new byte[0], 0, true);
}
