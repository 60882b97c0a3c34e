package io.localmessage.http.internal;

import java.io.ByteArrayOutputStream;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

/**
 * Keeps the first {@code captureBytes} of a body and drops the rest, so an error page of any size
 * costs a bounded amount of memory. The rest is read (and dropped) up to {@code discardLimit} so
 * the connection can be reused; a body longer than that is cut off, which closes the connection.
 * Not API.
 */
public final class CappedBodySubscriber implements HttpResponse.BodySubscriber<CapturedBody> {
  private final int captureBytes;
  private final long discardLimit;
  private final ByteArrayOutputStream captured;
  private final CompletableFuture<CapturedBody> result = new CompletableFuture<>();
  private Flow.Subscription subscription;
  private long total;

  public CappedBodySubscriber(int captureBytes, long discardLimit) {
    this.captureBytes = captureBytes;
    this.discardLimit = discardLimit;
    this.captured = new ByteArrayOutputStream(Math.min(captureBytes, 1024));
  }

  @Override
  public CompletionStage<CapturedBody> getBody() {
    return result;
  }

  @Override
  public void onSubscribe(Flow.Subscription s) {
    this.subscription = s;
    s.request(Long.MAX_VALUE);
  }

  @Override
  public void onNext(List<ByteBuffer> items) {
    if (result.isDone()) {
      return;
    }
    for (ByteBuffer b : items) {
      int n = b.remaining();
      total += n;
      int room = captureBytes - captured.size();
      if (room > 0) {
        byte[] chunk = new byte[Math.min(room, n)];
        b.get(chunk);
        captured.write(chunk, 0, chunk.length);
      }
    }
    if (total > discardLimit) {
      subscription.cancel();
      result.complete(new CapturedBody(captured.toByteArray(), total, false));
    }
  }

  @Override
  public void onError(Throwable t) {
    result.completeExceptionally(t);
  }

  @Override
  public void onComplete() {
    result.complete(new CapturedBody(captured.toByteArray(), total, true));
  }
}
