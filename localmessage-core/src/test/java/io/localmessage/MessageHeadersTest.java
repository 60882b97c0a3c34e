package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MessageHeadersTest {

  @Test
  void roundTripsAwkwardStrings() {
    Map<String, String> h = new LinkedHashMap<>();
    h.put("content-type", "application/json");
    h.put("q\"uote", "back\\slash\nnew line\ttab \u0001 ctrl é 中文");
    h.put("empty", "");
    String json = MessageHeaders.encode(h);
    assertThat(MessageHeaders.decode(json)).containsExactlyEntriesOf(h);
  }

  @Test
  void emptyAndNullDecodeToAnEmptyMap() {
    assertThat(MessageHeaders.encode(Map.of())).isEqualTo("{}");
    assertThat(MessageHeaders.decode(null)).isEmpty();
    assertThat(MessageHeaders.decode(" {} ".strip())).isEmpty();
  }

  @Test
  void controlCharactersAreEscapedAsUnicodeAndSpaceIsKeptAsIs() {
    assertThat(MessageHeaders.encode(Map.of("k", "\u0000\u001f \u007f")))
        .isEqualTo("{\"k\":\"\\u0000\\u001f \u007f\"}");
    assertThat(MessageHeaders.encode(Map.of("k", "a\"b\\c\rd")))
        .isEqualTo("{\"k\":\"a\\\"b\\\\c\\rd\"}");
  }

  @Test
  void decodingToleratesWhitespaceAndEveryEscapeEncodeCanWrite() {
    assertThat(MessageHeaders.decode(" \n{ \"a\" :\t\"x\\u0041\\b\\f\\/\" ,\n \"b\":\"\" } "))
        .containsExactly(Map.entry("a", "xA\b\f/"), Map.entry("b", ""));
    assertThat(MessageHeaders.decode("{ }")).isEmpty();
    assertThat(MessageHeaders.decode("   ")).isEmpty();
  }

  @Test
  void malformedHeadersAreRejectedNamingWhereAndShownAsOneEntryInAView() {
    assertThatThrownBy(() -> MessageHeaders.decode("{\"a\":\"b\";\"c\":\"d\"}"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("malformed headers JSON at 9: {\"a\":\"b\";\"c\":\"d\"}");
    assertThatThrownBy(() -> MessageHeaders.decode("[\"a\"]"))
        .hasMessage("expected '{' at 0: [\"a\"]");
    assertThatThrownBy(() -> MessageHeaders.decode("{\"a\" \"b\"}"))
        .hasMessage("expected ':' at 5: {\"a\" \"b\"}");
    assertThatThrownBy(() -> MessageHeaders.decode("{\"a\":\"b"))
        .hasMessage("truncated headers JSON: {\"a\":\"b");
    assertThatThrownBy(() -> MessageHeaders.decode("{  "))
        .hasMessage("truncated headers JSON: {  ");
    assertThat(MessageHeaders.decodeForView("{\"a\":1}"))
        .containsExactly(
            Map.entry(
                "(unreadable)", "malformed headers, not decoded: expected '\"' at 5: {\"a\":1}"));
    assertThat(MessageHeaders.decodeForView("{\"a\":\"1\"}")).containsExactly(Map.entry("a", "1"));
  }

  @Test
  void decodedHeadersCannotBeChangedByTheReader() {
    Map<String, String> h = MessageHeaders.decode("{\"a\":\"1\"}");
    assertThatThrownBy(() -> h.put("b", "2")).isInstanceOf(UnsupportedOperationException.class);
    Map<String, String> empty = MessageHeaders.decode("{ }");
    assertThatThrownBy(() -> empty.put("b", "2")).isInstanceOf(UnsupportedOperationException.class);
  }
}
