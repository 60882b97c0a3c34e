package io.localmessage.kafka;

import io.localmessage.Message;

/**
 * Chooses the topic of a message. The default is the message's {@link Message#destination()}. A
 * resolver that returns {@code null} or a blank name, or throws, sends the message DEAD with the
 * reason: no retry can fix a missing topic name.
 */
@FunctionalInterface
public interface TopicResolver {
  String topicFor(Message message);

  /** The message's destination column. */
  TopicResolver DESTINATION = Message::destination;
}
