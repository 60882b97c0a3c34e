package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What {@link Texts} makes of texts the database would refuse or that are too long. */
class TextsTest {
  @Test
  void aStorableTextWithinTheLimitIsReturnedAsItIs() {
    String text = "plain \uD83D\uDE00 text";
    assertThat(Texts.sanitize(text, 100)).isSameAs(text);
    assertThat(Texts.sanitize(null, 10)).isNull();
    assertThat(Texts.sanitize("", 10)).isEmpty();
  }

  @Test
  void nulIsRemovedAndLoneSurrogatesAreReplacedWhereverTheyStand() {
    assertThat(Texts.sanitize("a\u0000b\u0000", 100)).isEqualTo("ab");
    assertThat(Texts.sanitize("\u0000", 100)).isEmpty();
    assertThat(Texts.sanitize("x\uD83Dy", 100)).as("a high one alone").isEqualTo("x\uFFFDy");
    assertThat(Texts.sanitize("x\uDE00y", 100)).as("a low one alone").isEqualTo("x\uFFFDy");
    assertThat(Texts.sanitize("x\uD83D", 100)).as("a high one at the end").isEqualTo("x\uFFFD");
    assertThat(Texts.sanitize("\uDE00\uD83D", 100))
        .as("a pair in the wrong order")
        .isEqualTo("\uFFFD\uFFFD");
    assertThat(Texts.sanitize("\u0000\uD83D\uDE00z\uDE00", 100))
        .as("a pair after a replacement is copied whole")
        .isEqualTo("\uD83D\uDE00z\uFFFD");
  }

  @Test
  void aTextIsCutAtTheLimitWithAnEllipsisNeverInsideAPair() {
    assertThat(Texts.sanitize("abcdef", 6)).isEqualTo("abcdef");
    assertThat(Texts.sanitize("abcdefg", 6)).isEqualTo("abc...");
    assertThat(Texts.sanitize("ab\uD83D\uDE00efg", 6))
        .as("the cut would split the pair: it goes before it")
        .isEqualTo("ab...");
    assertThat(Texts.sanitize("a\uD83D\uDE00defg", 6)).isEqualTo("a\uD83D\uDE00...");
    assertThat(Texts.sanitize("abcdefg", 3)).isEqualTo("...");
    assertThat(Texts.sanitize("abcdefg", 2)).isEqualTo("...");
    assertThat(Texts.sanitize("a\u0000bcde", 5)).as("measured after cleaning").isEqualTo("abcde");
  }

  @Test
  void unstorableNamesWhatIsWrongAndWhere() {
    assertThat(Texts.unstorable("fine \uD83D\uDE00")).isNull();
    assertThat(Texts.unstorable("")).isNull();
    assertThat(Texts.unstorable("ab\u0000")).isEqualTo("contains the character U+0000 at index 2");
    assertThat(Texts.unstorable("a\uD83Db")).isEqualTo("contains a lone surrogate at index 1");
    assertThat(Texts.unstorable("ab\uD83D")).isEqualTo("contains a lone surrogate at index 2");
    assertThat(Texts.unstorable("\uD83D\uDE00\uDE00"))
        .isEqualTo("contains a lone surrogate at index 2");
  }
}
