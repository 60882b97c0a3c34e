package io.localmessage.console.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class HtmlTest {

  @Test
  void escapesEverythingThatCanOpenMarkupOrLeaveAnAttribute() {
    assertThat(Html.esc("<a href=\"x\" onclick='y'>&amp;</a>"))
        .isEqualTo("&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;");
    assertThat(Html.esc("plain text")).isEqualTo("plain text");
    assertThat(Html.esc(null)).isEmpty();
    assertThat(Html.esc("a\u0000b\u001bc\nd\te")).isEqualTo("a\uFFFDb\uFFFDc\nd\te");
  }

  @Test
  void buildsElementsAndAttributesEscaped() {
    Html h = new Html();
    h.el("td class=\"n\"", "<1>").attr("title", "\"q\"").link("/x?a=1&b=<2>", "<go>");
    assertThat(h.toString())
        .isEqualTo(
            "<td class=\"n\">&lt;1&gt;</td> title=\"&quot;q&quot;\""
                + "<a href=\"/x?a=1&amp;b=&lt;2&gt;\">&lt;go&gt;</a>");
  }

  @Test
  void encodesQueryValues() {
    assertThat(Html.q("a b&c=d/é")).isEqualTo("a+b%26c%3Dd%2F%C3%A9");
  }

  @Test
  void agesAndTimesReadByPeople() {
    assertThat(Html.age(Duration.ZERO)).isEqualTo("–");
    assertThat(Html.age(Duration.ofSeconds(45))).isEqualTo("45s");
    assertThat(Html.age(Duration.ofSeconds(192))).isEqualTo("3m 12s");
    assertThat(Html.age(Duration.ofMinutes(125))).isEqualTo("2h 5m");
    assertThat(Html.age(Duration.ofHours(99))).isEqualTo("4d 3h");
    assertThat(Html.time(Instant.parse("2025-03-04T05:06:07.890Z")))
        .isEqualTo("2025-03-04 05:06:07Z");
    assertThat(Html.time(null)).isEqualTo("–");
  }
}
