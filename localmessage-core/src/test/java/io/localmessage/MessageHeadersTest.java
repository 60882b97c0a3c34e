package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;

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
}
