/**
 * The public API of localmessage: {@link io.localmessage.LocalMessages}, built by {@link
 * io.localmessage.LocalMessagesBuilder}, and the types it takes and returns.
 *
 * <p>A <em>message</em> is a row of the message table ({@code local_message} by default): the
 * durable intent of one side effect, saved in the business transaction and delivered to the handler
 * of its biz type until it is done, dead or cancelled. The tables, their columns and the meter
 * names keep their names across versions; see {@link io.localmessage.Schema}.
 *
 * <p>Operators use {@link io.localmessage.admin}; consumers deduplicate with {@link
 * io.localmessage.inbox}; what integrators implement (listeners, redactors, dialects) is in {@link
 * io.localmessage.spi}. Packages named {@code internal} are not API: they change without notice.
 */
package io.localmessage;
