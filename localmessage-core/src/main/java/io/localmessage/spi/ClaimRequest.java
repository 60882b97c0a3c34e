package io.localmessage.spi;

import java.util.List;

/**
 * One claim: for each type at most {@link TypeLimit#limit()} due messages, leased to {@code owner}
 * for {@code leaseMillis} by the database clock. {@code onlyIds}, when not null, restricts the
 * claim to those messages (the after-commit fast path).
 */
public record ClaimRequest(
    List<TypeLimit> types, long leaseMillis, String owner, List<Long> onlyIds) {

  /**
   * How many messages of {@code bizType} may be claimed; {@code ordered} keeps each aggregate in
   * order. {@code maxAttempts} is the attempt cap of the handling replica: a message saved without
   * one (its {@code max_attempts} is 0, "not resolved yet") takes it at this claim.
   */
  public record TypeLimit(String bizType, int limit, boolean ordered, int maxAttempts) {
    /** Checks that {@code maxAttempts} is at least 1. */
    public TypeLimit {
      if (maxAttempts < 1) {
        throw new IllegalArgumentException("maxAttempts must be at least 1, was " + maxAttempts);
      }
    }
  }
}
