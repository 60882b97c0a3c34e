package io.localmessage.internal.engine;

import java.lang.reflect.Method;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;

/**
 * Virtual threads on a JVM that has them (Java 21 or later), found at run time so the library keeps
 * its Java 17 baseline: one class file for both, no multi-release jar.
 */
final class VirtualThreads {
  private VirtualThreads() {}

  /** The Java feature release that made virtual threads final. */
  static final int SINCE = 21;

  /** Whether this JVM has virtual threads. */
  static boolean available() {
    return Runtime.version().feature() >= SINCE;
  }

  /** An executor that starts a named virtual thread per task: {@code prefix-1}, {@code -2}, ... */
  static ExecutorService perTaskExecutor(String prefix) {
    if (!available()) {
      throw new IllegalStateException(
          "virtual threads need Java " + SINCE + " or later; this JVM is " + Runtime.version());
    }
    try {
      Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
      Class<?> type = Class.forName("java.lang.Thread$Builder");
      builder = type.getMethod("name", String.class, long.class).invoke(builder, prefix + "-", 1L);
      ThreadFactory factory = (ThreadFactory) type.getMethod("factory").invoke(builder);
      Method perTask = Executors.class.getMethod("newThreadPerTaskExecutor", ThreadFactory.class);
      return (ExecutorService) perTask.invoke(null, factory);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot create virtual threads on " + Runtime.version(), e);
    }
  }
}
