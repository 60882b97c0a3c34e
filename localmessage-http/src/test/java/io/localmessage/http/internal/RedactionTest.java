package io.localmessage.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class RedactionTest {
  private static String excerpt(String body, int max, String... secrets) {
    return Redaction.excerpt(body.getBytes(StandardCharsets.UTF_8), false, max, List.of(secrets));
  }

  @Test
  void masksConfiguredSecretsAndCommonShapes() {
    String e =
        excerpt(
            "{\"password\":\"hunter2\",\"access_token\":\"abc.def\",\"msg\":\"Bearer eyJhbGciOi\","
                + " \"api-key\": \"k-123\", \"card\":\"4111 1111 1111 1111\", \"x\":\"my-static-value\"}",
            512,
            "my-static-value");
    assertThat(e)
        .doesNotContain("hunter2", "abc.def", "eyJhbGciOi", "k-123", "4111", "my-static-value")
        .contains("\"password\":\"****\"", "Bearer ****");
  }

  @Test
  void formFieldsAreMaskedToo() {
    assertThat(excerpt("error=bad&token=t0k3n&client_secret=zz", 100))
        .isEqualTo("error=bad&token=\"****\"&client_secret=\"****\"");
  }

  @Test
  void oneLineCappedAndMarkedWhenCut() {
    assertThat(excerpt("line one\r\n\tline two", 100)).isEqualTo("line one line two");
    assertThat(excerpt("x".repeat(300), 256)).hasSize(259).endsWith("...");
    assertThat(Redaction.excerpt("short".getBytes(StandardCharsets.UTF_8), true, 256, List.of()))
        .isEqualTo("short...");
    assertThat(excerpt("anything", 0)).isEmpty();
    assertThat(excerpt("", 256)).isEmpty();
  }

  @Test
  void shortSecretsAreNotMaskedEverywhere() {
    // a 3-character "secret" would mask half the text; such values are not treated as secrets
    assertThat(excerpt("the cat sat", 100, "at")).isEqualTo("the cat sat");
  }

  @Test
  void safeUrlDropsUserInfoQueryAndFragment() {
    assertThat(Redaction.safeUrl(URI.create("https://user:pw@api.example:8443/v1/x?key=k#f")))
        .isEqualTo("https://api.example:8443/v1/x");
  }
}
