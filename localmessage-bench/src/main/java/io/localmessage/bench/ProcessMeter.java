package io.localmessage.bench;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.OperatingSystemMXBean;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * What one drain costs the bench process (this JVM; the io workload's HTTP endpoint runs in a
 * process of its own and is not counted): peak live platform threads, CPU seconds, peak heap used,
 * bytes allocated and peak open file descriptors.
 *
 * <ul>
 *   <li>threads: the JVM's own peak counter ({@link ThreadMXBean#getPeakThreadCount()}), reset
 *       before the system under test is built, read when the table is empty, so a thread that lived
 *       for a millisecond counts. Platform threads only: virtual threads are not in it.
 *   <li>CPU: {@code getProcessCpuTime()} from {@code start()} to the empty table (every thread of
 *       the process, the JIT and GC included).
 *   <li>heap: {@code System.gc()} before the reset, then the used heap sampled every {@link
 *       Drain#TICK_NANOS} while the drain is awaited; the largest sample. Mostly how far the young
 *       generation fills before a collection (and the collector sizes it as the heap grows), so
 *       read it with the allocation figure and the live heap: the largest heap in use right after a
 *       collection during the drain (or after one forced when the table is empty, the system still
 *       up, when none ran).
 *   <li>allocated: {@code com.sun.management.ThreadMXBean.getTotalThreadAllocatedBytes()} over the
 *       same window as the CPU (carrier threads carry what virtual threads allocate).
 *   <li>file descriptors: sampled every 100 ms (listing {@code /proc/self/fd} is not free); each
 *       HTTP/1.1 request in flight holds a connection.
 * </ul>
 */
final class ProcessMeter implements Drain.Meter {
  private static final long FD_TICK_NANOS = 100_000_000L;
  private static final Duration SETTLE_MAX = Duration.ofSeconds(15);
  private static final long SETTLE_FD_SLACK = 16;

  // the fewest threads and descriptors seen at a reset: what this process holds when idle
  private static int idleThreads = Integer.MAX_VALUE;
  private static long idleFds = Long.MAX_VALUE;

  private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
  private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
  private final OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();

  private int baselineThreads;
  private long cpuStart = -1;
  private long allocatedStart = -1;
  private long heapPeak;
  private long gcCount;
  private long liveHeap = -1;
  private long fdPeak = -1;
  private long nextFd;
  private int peakThreads;
  private double cpuSeconds = Double.NaN;
  private double allocatedBytes = Double.NaN;

  /** What the meter saw over one drain. */
  record Reading(
      int baselineThreads,
      int peakThreads,
      double cpuSeconds,
      long heapPeakBytes,
      long liveHeapBytes,
      double allocatedBytes,
      long fdPeak) {}

  /**
   * Waits (at most {@link #SETTLE_MAX}) until what the previous drain left behind is gone: an HTTP
   * client's selector thread and its keep-alive connections end only once the client is collected
   * (HttpDelivery.close() stops its executor, not its client), so a drain that started right away
   * would count them as its own.
   */
  private void settle() {
    long start = System.nanoTime();
    long deadline = start + SETTLE_MAX.toNanos();
    long nextGc = start; // the first check collects at once
    long changed = start;
    int lastThreads = threads.getThreadCount();
    long lastFds = openFds();
    while (System.nanoTime() - deadline < 0
        && (lastThreads > idleThreads || lastFds > idleFds + SETTLE_FD_SLACK)) {
      long now = System.nanoTime();
      // something that stays (a driver's cleaner thread, a cached pool) must not cost every drain
      // the whole wait: stable for 2 s after the 3 s an HTTP client's selector may sleep is settled
      if (now - start > 4_000_000_000L && now - changed > 2_000_000_000L) {
        break;
      }
      if (now - nextGc >= 0) {
        System.gc();
        nextGc = now + 1_000_000_000L;
      }
      LockSupport.parkNanos(100_000_000L);
      int t = threads.getThreadCount();
      long f = openFds();
      if (t != lastThreads || f != lastFds) {
        changed = System.nanoTime();
      }
      lastThreads = t;
      lastFds = f;
    }
    idleThreads = Math.min(idleThreads, threads.getThreadCount());
    idleFds = Math.min(idleFds, openFds());
  }

  @Override
  public void reset() {
    System.gc();
    settle();
    for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
      if (p.getType() == MemoryType.HEAP) {
        p.resetPeakUsage();
      }
    }
    threads.resetPeakThreadCount();
    baselineThreads = threads.getThreadCount();
    heapPeak = memory.getHeapMemoryUsage().getUsed();
    gcCount = gcCount();
    liveHeap = -1;
    fdPeak = openFds();
    nextFd = System.nanoTime() + FD_TICK_NANOS;
  }

  @Override
  public void started() {
    cpuStart = cpuTime();
    allocatedStart = allocated();
  }

  @Override
  public void tick() {
    heapPeak = Math.max(heapPeak, memory.getHeapMemoryUsage().getUsed());
    long gcs = gcCount();
    if (gcs != gcCount) {
      gcCount = gcs;
      liveHeap = Math.max(liveHeap, heapAfterLastGc());
    }
    long now = System.nanoTime();
    if (now - nextFd >= 0) {
      fdPeak = Math.max(fdPeak, openFds());
      nextFd = now + FD_TICK_NANOS;
    }
  }

  @Override
  public void drained() {
    long cpu = cpuTime();
    long alloc = allocated();
    peakThreads = threads.getPeakThreadCount();
    cpuSeconds = cpu < 0 || cpuStart < 0 ? Double.NaN : (cpu - cpuStart) / 1e9;
    allocatedBytes = alloc < 0 || allocatedStart < 0 ? Double.NaN : alloc - allocatedStart;
    tick();
    fdPeak = Math.max(fdPeak, openFds());
    if (liveHeap < 0) {
      // no collection during the drain: one now, the engine still up, outside the CPU window
      System.gc();
      liveHeap = memory.getHeapMemoryUsage().getUsed();
    }
  }

  Reading reading() {
    return new Reading(
        baselineThreads, peakThreads, cpuSeconds, heapPeak, liveHeap, allocatedBytes, fdPeak);
  }

  private static long gcCount() {
    long n = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      n += Math.max(0, gc.getCollectionCount());
    }
    return n;
  }

  /** The heap in use right after the latest collection of any collector (its live set). */
  private static long heapAfterLastGc() {
    long latestEnd = -1;
    long used = -1;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      if (!(gc instanceof com.sun.management.GarbageCollectorMXBean g)) {
        continue;
      }
      com.sun.management.GcInfo info = g.getLastGcInfo();
      if (info == null || info.getEndTime() < latestEnd) {
        continue;
      }
      long sum = 0;
      for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
        if (p.getType() == MemoryType.HEAP) {
          java.lang.management.MemoryUsage u = info.getMemoryUsageAfterGc().get(p.getName());
          sum += u == null ? 0 : u.getUsed();
        }
      }
      latestEnd = info.getEndTime();
      used = sum;
    }
    return used;
  }

  private long cpuTime() {
    return os instanceof com.sun.management.OperatingSystemMXBean s ? s.getProcessCpuTime() : -1;
  }

  /**
   * {@code getTotalThreadAllocatedBytes()}, looked up at run time: a newer JDK compiling for
   * release 17 does not see it in its release-17 API description, though every 17 has it.
   */
  private long allocated() {
    if (threads instanceof com.sun.management.ThreadMXBean s
        && s.isThreadAllocatedMemorySupported()
        && s.isThreadAllocatedMemoryEnabled()) {
      try {
        return (Long)
            com.sun.management.ThreadMXBean.class
                .getMethod("getTotalThreadAllocatedBytes")
                .invoke(s);
      } catch (ReflectiveOperationException | RuntimeException e) {
        return -1;
      }
    }
    return -1;
  }

  private long openFds() {
    return os instanceof com.sun.management.UnixOperatingSystemMXBean u
        ? u.getOpenFileDescriptorCount()
        : -1;
  }

  /** The open-file limit of this process (the JVM raises its soft limit to the hard one). */
  static long maxFds() {
    return ManagementFactory.getOperatingSystemMXBean()
            instanceof com.sun.management.UnixOperatingSystemMXBean u
        ? u.getMaxFileDescriptorCount()
        : -1;
  }
}
