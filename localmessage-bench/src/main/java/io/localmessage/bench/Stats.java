package io.localmessage.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Min, median and max of a few repetitions; percentiles of a latency sample. */
record Stats(double min, double median, double max, int runs) {

  static Stats of(List<Double> values) {
    if (values.isEmpty()) {
      return new Stats(Double.NaN, Double.NaN, Double.NaN, 0);
    }
    List<Double> v = new ArrayList<>(values);
    Collections.sort(v);
    int n = v.size();
    double median = n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
    return new Stats(v.get(0), median, v.get(n - 1), n);
  }

  /** The {@code q} quantile (0..1) of a sorted array, nearest rank. */
  static double percentile(double[] sorted, double q) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    int rank = (int) Math.ceil(q * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
  }
}
