/**
 * Test support for applications that use localmessage. Add {@code localmessage-test} in test scope.
 *
 * <ul>
 *   <li>{@link io.localmessage.test.Drain}: run the due messages now, synchronously, without a
 *       started engine;
 *   <li>{@link io.localmessage.test.SavedMessages}: what a piece of work saved, for assertions;
 *   <li>{@link io.localmessage.test.Crash}: stop an engine as {@code kill -9} would, to test what
 *       another replica does after a crash;
 *   <li>{@link io.localmessage.test.LocalMessagesExtension}: a JUnit 5 extension with a database
 *       (H2 in memory, or a real PostgreSQL started in-process) and engines that are closed after
 *       each test;
 *   <li>{@link io.localmessage.test.kafka.TestBroker}: a real Kafka broker in the test's JVM.
 * </ul>
 */
package io.localmessage.test;
