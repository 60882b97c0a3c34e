package io.localmessage.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;

/** Parses {@code 30d}, {@code 12h}, {@code 15m}, {@code 90s} or ISO-8601 {@code PT1H}. */
final class Durations implements ITypeConverter<Duration> {
  private static final Pattern SHORT = Pattern.compile("(\\d+)([smhd])");

  @Override
  public Duration convert(String value) {
    Matcher m = SHORT.matcher(value.trim());
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      return switch (m.group(2)) {
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        case "h" -> Duration.ofHours(n);
        default -> Duration.ofDays(n);
      };
    }
    try {
      return Duration.parse(value.trim());
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          "'" + value + "' is not a duration: use 30d, 12h, 15m, 90s or ISO-8601 like PT1H");
    }
  }
}
