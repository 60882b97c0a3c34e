package io.localmessage.http.internal;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Parses an HTTP {@code Retry-After} value (RFC 9110 section 10.2.3): delta-seconds, or an
 * HTTP-date in any of the three formats a recipient must accept (IMF-fixdate, obsolete RFC 850,
 * asctime). Not API.
 */
public final class RetryAfterHeader {
  private static final DateTimeFormatter RFC_850 =
      new DateTimeFormatterBuilder()
          .parseCaseInsensitive()
          .appendPattern("EEEE, dd-MMM-")
          // two-digit years: RFC 9110 says a year more than 50 years ahead means the past century
          .appendValueReduced(ChronoField.YEAR, 2, 2, LocalDate.now().minusYears(49))
          .appendPattern(" HH:mm:ss zzz")
          .toFormatter(Locale.US);

  private static final DateTimeFormatter ASCTIME =
      new DateTimeFormatterBuilder()
          .parseCaseInsensitive()
          .appendPattern("EEE MMM ppd HH:mm:ss yyyy")
          .toFormatter(Locale.US)
          .withZone(java.time.ZoneOffset.UTC);

  private static final List<DateTimeFormatter> DATE_FORMATS =
      List.of(DateTimeFormatter.RFC_1123_DATE_TIME, RFC_850, ASCTIME);

  /** Longest delta-seconds value taken literally; anything longer is clamped to this. */
  private static final long MAX_SECONDS = 100L * 365 * 24 * 3600;

  private RetryAfterHeader() {}

  /**
   * The delay the value asks for, measured from {@code now}; negative when the date is in the past.
   * Empty when the value is missing or in no known form.
   */
  public static Optional<Duration> parse(String value, Instant now) {
    if (value == null) {
      return Optional.empty();
    }
    String v = value.trim();
    if (v.isEmpty()) {
      return Optional.empty();
    }
    if (v.chars().allMatch(c -> c >= '0' && c <= '9')) {
      long seconds = v.length() > 12 ? MAX_SECONDS : Math.min(Long.parseLong(v), MAX_SECONDS);
      return Optional.of(Duration.ofSeconds(seconds));
    }
    for (DateTimeFormatter f : DATE_FORMATS) {
      try {
        Instant at = ZonedDateTime.parse(v, f).toInstant();
        return Optional.of(Duration.between(now, at));
      } catch (DateTimeParseException e) {
        // try the next form
      }
    }
    return Optional.empty();
  }
}
