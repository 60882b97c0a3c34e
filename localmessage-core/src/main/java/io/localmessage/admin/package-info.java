/**
 * Operator actions and queries: pause and resume a biz type, cancel and requeue messages, backlog
 * statistics, dead letters, searches and the audit trail. Reached through {@link
 * io.localmessage.LocalMessages#admin()}; the web console, the actuator endpoint and the command
 * line all go through it.
 */
package io.localmessage.admin;
