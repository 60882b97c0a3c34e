package io.localmessage.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Collects one value per key and measured repetition; warm-up repetitions are run but not kept.
 * Ratios are taken pair by pair within the same repetition, never across repetitions.
 */
final class Recorder {
  private final Map<String, Map<Integer, Double>> values = new LinkedHashMap<>();
  private final Map<String, String> failures = new LinkedHashMap<>();
  private int rep;
  private boolean warmup;

  void beginRep(int rep, boolean warmup) {
    this.rep = rep;
    this.warmup = warmup;
  }

  boolean inWarmup() {
    return warmup;
  }

  void put(String key, double value) {
    if (!warmup) {
      values.computeIfAbsent(key, k -> new TreeMap<>()).put(rep, value);
    }
  }

  void fail(String key, Throwable error) {
    String message = error.getMessage() == null ? error.toString() : error.getMessage();
    failures.putIfAbsent(key, message.length() > 200 ? message.substring(0, 200) : message);
  }

  Map<String, String> failures() {
    return failures;
  }

  boolean has(String key) {
    return values.containsKey(key);
  }

  List<Double> values(String key) {
    Map<Integer, Double> m = values.get(key);
    return m == null ? List.of() : new ArrayList<>(m.values());
  }

  /** {@code num / den} for every repetition in which both were measured. */
  List<Double> ratios(String num, String den) {
    Map<Integer, Double> a = values.get(num);
    Map<Integer, Double> b = values.get(den);
    List<Double> out = new ArrayList<>();
    if (a == null || b == null) {
      return out;
    }
    for (Map.Entry<Integer, Double> e : a.entrySet()) {
      Double d = b.get(e.getKey());
      if (d != null && d != 0 && !d.isNaN() && !e.getValue().isNaN()) {
        out.add(e.getValue() / d);
      }
    }
    return out;
  }
}
