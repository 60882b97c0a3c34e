package io.localmessage;

import static org.assertj.core.api.Assertions.assertThat;

import io.localmessage.internal.HeadersCodec;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HeadersCodecTest {

  @Test
  void roundTripsAwkwardStrings() {
    Map<String, String> h = new LinkedHashMap<>();
    h.put("content-type", "application/json");
    h.put("q\"uote", "back\\slash\nnew line\ttab \u0001 ctrl é 中文");
    h.put("empty", "");
    String json = HeadersCodec.encode(h);
    assertThat(HeadersCodec.decode(json)).containsExactlyEntriesOf(h);
  }

  @Test
  void emptyAndNullDecodeToAnEmptyMap() {
    assertThat(HeadersCodec.encode(Map.of())).isEqualTo("{}");
    assertThat(HeadersCodec.decode(null)).isEmpty();
    assertThat(HeadersCodec.decode(" {} ".strip())).isEmpty();
  }
}
