package io.localmessage.spi;

import java.util.List;

/**
 * One claim: for each type at most {@link TypeLimit#limit()} due tickets, leased to {@code owner}
 * for {@code leaseMillis} by the database clock. {@code onlyIds}, when not null, restricts the
 * claim to those tickets (the after-commit fast path).
 */
public record ClaimRequest(
    List<TypeLimit> types, long leaseMillis, String owner, List<Long> onlyIds) {

  /** How many tickets of {@code bizType} may be claimed; {@code ordered} applies invariant 7. */
  public record TypeLimit(String bizType, int limit, boolean ordered) {}
}
