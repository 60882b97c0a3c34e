/**
 * The public API of localmessage: {@link io.localmessage.LocalMessages} and the types it takes and
 * returns. Integrators implement what is in {@code io.localmessage.spi}; everything in {@code
 * io.localmessage.internal} is not API.
 */
package io.localmessage;
