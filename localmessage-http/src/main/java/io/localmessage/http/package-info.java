/**
 * HTTP delivery of messages and idempotent receiving.
 *
 * <p>Sender: {@link io.localmessage.http.HttpDelivery} is a handler that POSTs (or PUTs) a
 * message's payload with {@code Idempotency-Key: <idem_key>} and turns the response into the
 * message's outcome through a replaceable {@link io.localmessage.http.ResponseClassifier}.
 *
 * <p>Receiver: {@link io.localmessage.http.IdempotentReceiver} applies a request's effect once per
 * idempotency key through the inbox, in the caller's transaction; {@link
 * io.localmessage.http.IdempotentEndpoint} is a ready {@code com.sun.net.httpserver} handler built
 * on it.
 *
 * <p>Delivery is at least once; the effect is once because the receiver records the key in the same
 * transaction as the effect.
 */
package io.localmessage.http;
