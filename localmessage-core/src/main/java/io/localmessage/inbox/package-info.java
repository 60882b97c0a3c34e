/**
 * Consumer-side deduplication: {@link io.localmessage.inbox.Inbox} records a delivered message's id
 * in the same transaction as its effect, so a redelivery is skipped.
 */
package io.localmessage.inbox;
