/**
 * What integrators implement: {@link io.localmessage.spi.EngineListener} (metrics, tracing), {@link
 * io.localmessage.spi.ErrorRedactor} (what an error may say when stored) and {@link
 * io.localmessage.spi.Dialect} (a database the library does not support yet), with the records a
 * dialect reads and writes.
 */
package io.localmessage.spi;
