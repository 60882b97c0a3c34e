/**
 * Internals of the HTTP module: Retry-After parsing, the bounded response body reader, body excerpt
 * redaction and the standard response classification. Not API: anything here may change without
 * notice.
 */
package io.localmessage.http.internal;
