package io.localmessage;

import io.localmessage.internal.engine.Ticker;

/** The builder's package-private test seams, for test code in other packages. */
public final class TestSeams {
  /**
   * The system property naming where engines built by the test kit start their ticker: {@code max}
   * (5 s below {@link Long#MAX_VALUE}, so each engine's clock wraps 5 s after it is built), {@code
   * min} (a minute above {@link Long#MIN_VALUE}), or a number. Unset or empty: the system clock.
   */
  public static final String TICKER_START = "lm.test.tickerStart";

  private TestSeams() {}

  /** {@code builder} with its engine's interval clock reading {@code start} now. */
  public static LocalMessagesBuilder tickerAt(LocalMessagesBuilder builder, long start) {
    return builder.ticker(Ticker.startingAt(start));
  }

  /**
   * {@code builder} with the ticker start {@link #TICKER_START} names, or as it is when the
   * property is unset.
   */
  public static LocalMessagesBuilder tickerFromProperty(LocalMessagesBuilder builder) {
    String start = System.getProperty(TICKER_START, "").trim();
    return switch (start) {
      case "" -> builder;
      case "max" -> tickerAt(builder, Long.MAX_VALUE - 5_000_000_000L);
      case "min" -> tickerAt(builder, Long.MIN_VALUE + 60_000_000_000L);
      default -> tickerAt(builder, Long.parseLong(start));
    };
  }
}
