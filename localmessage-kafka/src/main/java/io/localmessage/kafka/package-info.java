/**
 * Kafka for localmessage: {@link io.localmessage.kafka.KafkaRelay} publishes EVENT messages (the
 * outbox relay, at least once, keyed by aggregate), {@link
 * io.localmessage.kafka.KafkaInboxConsumer} applies records at most once in effect through the
 * inbox. Everything in {@code io.localmessage.kafka.internal} is not API.
 */
package io.localmessage.kafka;
