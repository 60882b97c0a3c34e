package io.localmessage.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.localmessage.LocalMessages;
import io.localmessage.MessageStatus;
import io.localmessage.NewMessage;
import io.localmessage.console.app.ConsoleApp;
import io.localmessage.testing.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * An operator's round trip in a real headless Chromium: log in, read the backlog, open a dead
 * letter, requeue it with a reason, watch it succeed, find the audit entry; then requeue the rest
 * through the selection. Saves a screenshot of the overview with the dead letters ({@code
 * target/console.png}, and the path in {@code -Dlm.console.screenshot} when given).
 */
class ConsoleBrowserTest {
  private static final String[] COLUMNS = {"pending", "due-now", "in-flight", "dead"};

  @Test
  void operatorRequeuesADeadLetterAndSeesItSucceed() throws Exception {
    try (TestDatabase db = TestDatabase.create(TestDatabase.Kind.POSTGRESQL);
        ConfigurableApplicationContext app = ConsoleApp.start(db);
        Browser browser = new Browser(1200, 300)) {
      LocalMessages lm = app.getBean(LocalMessages.class);
      DataSource sql = db.dataSource(2);
      String root = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
      List<Long> payments = seed(lm);
      WebDriver d = browser.driver;
      WebDriverWait wait = new WebDriverWait(d, Duration.ofSeconds(15));

      // log in through the console's form
      d.get(root + "/localmessage");
      wait.until(ExpectedConditions.urlContains("/localmessage/login"));
      page(browser, "login");
      d.findElement(By.id("lm-user")).sendKeys(ConsoleApp.ADMIN);
      d.findElement(By.id("lm-secret")).sendKeys(ConsoleApp.ADMIN_PASSWORD);
      d.findElement(By.cssSelector("form button[type=submit]")).click();
      wait.until(ExpectedConditions.presenceOfElementLocated(By.id("overview")));

      // the backlog as the database has it
      for (String type : List.of("payment.capture", "mail.send", "report.build")) {
        WebElement row = d.findElement(By.cssSelector("#overview tr[data-type='" + type + "']"));
        long[] expected = backlog(sql, type);
        for (int i = 0; i < COLUMNS.length; i++) {
          assertThat(row.findElement(By.cssSelector("td[data-col='" + COLUMNS[i] + "']")).getText())
              .as(type + " " + COLUMNS[i])
              .isEqualTo(Long.toString(expected[i]));
        }
      }
      assertThat(cell(d, "report.build", "pending")).isEqualTo("4");
      assertThat(cell(d, "report.build", "due-now")).isEqualTo("3");
      assertThat(cell(d, "report.build", "state")).isEqualTo("paused");
      assertThat(cell(d, "payment.capture", "dead")).isEqualTo("3");
      assertThat(cell(d, "payment.capture", "failed")).isEqualTo("3");
      assertThat(cell(d, "mail.send", "ok")).isEqualTo("2");
      assertThat(cell(d, "payment.capture", "oldest-dead")).isNotEqualTo("–");
      screenshot(browser.screenshot());

      // open the dead letters of the payment type, then the first one
      d.findElement(
              By.cssSelector("#overview tr[data-type='payment.capture'] td[data-col='dead'] a"))
          .click();
      wait.until(ExpectedConditions.presenceOfElementLocated(By.id("dead")));
      assertThat(d.findElements(By.cssSelector("#dead tbody tr"))).hasSize(3);
      WebElement first =
          d.findElement(By.cssSelector("#dead tr[data-id='" + payments.get(0) + "']"));
      assertThat(first.getText())
          .contains("gateway said: card declined (code 05)")
          .contains("1/10");
      first.findElement(By.tagName("summary")).click();
      assertThat(first.findElement(By.cssSelector("pre.payload")).getText())
          .contains("\"card\":\"****1111\"")
          .doesNotContain("4111111111111111");
      page(browser, "dead");
      first.findElement(By.linkText(Long.toString(payments.get(0)))).click();
      wait.until(ExpectedConditions.textToBe(By.id("status"), "DEAD"));
      assertThat(d.findElement(By.id("last-error")).getText())
          .contains("gateway said: card declined (code 05)");

      // the gateway is fixed: requeue with a reason and watch it succeed
      ConsoleApp.heal.set(true);
      WebElement form = d.findElement(By.id("requeue-form"));
      form.findElement(By.name("reason")).sendKeys("gateway fixed, INC-4711");
      form.findElement(By.cssSelector("button[type=submit]")).click();
      wait.until(
          ExpectedConditions.textToBePresentInElementLocated(
              By.className("notice"), "Requeued 1 ticket."));
      new WebDriverWait(d, Duration.ofSeconds(20))
          .until(
              x -> {
                x.navigate().refresh();
                return x.findElement(By.id("status")).getText().equals("SUCCEEDED");
              });
      assertThat(lm.admin().get(payments.get(0)).orElseThrow().status())
          .isEqualTo(MessageStatus.SUCCEEDED);
      List<WebElement> audit = d.findElements(By.cssSelector("#audit tbody tr"));
      assertThat(audit).hasSize(1);
      assertThat(audit.get(0).getText())
          .contains("REQUEUE")
          .contains(ConsoleApp.ADMIN)
          .contains("gateway fixed, INC-4711");
      page(browser, "ticket");

      // the other two through the selection (select-all is the console's script)
      d.get(root + "/localmessage/dead?type=payment.capture");
      wait.until(ExpectedConditions.presenceOfElementLocated(By.id("dead")));
      assertThat(d.findElements(By.cssSelector("#dead tbody tr"))).hasSize(2);
      d.findElement(By.id("select-all")).click();
      assertThat(d.findElements(By.cssSelector("#dead input[name=id]:checked"))).hasSize(2);
      WebElement selected = d.findElement(By.id("requeue-selected"));
      selected.findElement(By.name("reason")).sendKeys("same incident");
      selected.findElement(By.cssSelector("button[type=submit]")).click();
      wait.until(
          ExpectedConditions.textToBePresentInElementLocated(
              By.className("notice"), "Requeued 2 tickets."));
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () ->
                  Sql.count(
                          sql,
                          "SELECT COUNT(*) FROM local_message WHERE biz_type = 'payment.capture'"
                              + " AND status = 1")
                      == 3);
      assertThat(
              Sql.count(
                  sql,
                  "SELECT COUNT(*) FROM local_message_audit WHERE action = 'REQUEUE'"
                      + " AND operator = ? AND reason = 'same incident'",
                  ConsoleApp.ADMIN))
          .isEqualTo(2);

      // search by aggregate id finds the order's tickets
      d.get(root + "/localmessage");
      WebElement search = d.findElement(By.name("q"));
      search.sendKeys("order-2");
      search.submit();
      wait.until(ExpectedConditions.presenceOfElementLocated(By.id("by-aggregate")));
      assertThat(d.findElements(By.cssSelector("#by-aggregate tbody tr"))).hasSize(2);
      page(browser, "search");
      d.get(root + "/localmessage/type?name=report.build");
      wait.until(ExpectedConditions.presenceOfElementLocated(By.id("resume-form")));
      page(browser, "type");

      d.get(root + "/localmessage");
      wait.until(ExpectedConditions.presenceOfElementLocated(By.id("overview")));
      assertThat(cell(d, "payment.capture", "dead")).isEqualTo("0");
      assertThat(cell(d, "payment.capture", "ok")).isEqualTo("3");
    }
  }

  private static String cell(WebDriver d, String type, String col) {
    return d.findElement(
            By.cssSelector("#overview tr[data-type='" + type + "'] [data-col='" + col + "']"))
        .getText();
  }

  /** pending, due now, in flight, dead: straight from the table. */
  private static long[] backlog(DataSource sql, String type) {
    return new long[] {
      Sql.count(sql, "SELECT COUNT(*) FROM local_message WHERE biz_type = ? AND status = 0", type),
      Sql.count(
          sql,
          "SELECT COUNT(*) FROM local_message WHERE biz_type = ? AND status = 0"
              + " AND next_retry_at <= now()",
          type),
      Sql.count(
          sql,
          "SELECT COUNT(*) FROM local_message WHERE biz_type = ? AND status = 0"
              + " AND lease_owner IS NOT NULL AND next_retry_at > now()",
          type),
      Sql.count(sql, "SELECT COUNT(*) FROM local_message WHERE biz_type = ? AND status = 2", type)
    };
  }

  /**
   * Three payments that the gateway declines (dead), two mails delivered, four reports waiting in a
   * paused type with no handler here (one of them not due for an hour).
   */
  private static List<Long> seed(LocalMessages lm) {
    lm.admin().pause("report.build", "setup", "reports wait for the month-end close");
    List<Long> payments = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      int n = i;
      payments.add(
          lm.inTransaction(
                  c ->
                      lm.save(
                          c,
                          NewMessage.action("payment.capture", "pay-" + n)
                              .aggregateId("order-" + n)
                              .header("content-type", "application/json")
                              .payload(
                                  ("{\"order\":\"order-"
                                          + n
                                          + "\",\"card\":\"4111111111111111\","
                                          + "\"amount\":"
                                          + (n * 1250)
                                          + "}")
                                      .getBytes(StandardCharsets.UTF_8))
                              .build()))
              .id());
    }
    for (int i = 1; i <= 2; i++) {
      int n = i;
      lm.inTransaction(
          c ->
              lm.save(
                  c,
                  NewMessage.action("mail.send", "receipt-" + n)
                      .aggregateId("order-" + n)
                      .payload("Thank you for order " + n)
                      .build()));
    }
    for (int i = 1; i <= 4; i++) {
      int n = i;
      lm.inTransaction(
          c -> {
            NewMessage.Builder b = NewMessage.action("report.build", "report-" + n);
            if (n == 4) {
              b.delay(Duration.ofHours(1));
            }
            return lm.save(c, b.build());
          });
    }
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                payments.stream()
                        .allMatch(
                            id -> lm.admin().get(id).orElseThrow().status() == MessageStatus.DEAD)
                    && lm.admin().stats().stream()
                        .anyMatch(s -> s.bizType().equals("mail.send") && s.succeeded() == 2));
    return payments;
  }

  /** Every page visited, for people reviewing a change: {@code target/console-<name>.png}. */
  private static void page(Browser browser, String name) throws Exception {
    Files.write(Path.of("target", "console-" + name + ".png"), browser.screenshot());
  }

  private static void screenshot(byte[] png) throws Exception {
    Path target = Path.of("target", "console.png");
    Files.createDirectories(target.getParent());
    Files.write(target, png);
    String extra = System.getProperty("lm.console.screenshot");
    if (extra != null && !extra.isBlank()) {
      Path p = Path.of(extra);
      if (p.getParent() != null) {
        Files.createDirectories(p.getParent());
      }
      Files.write(p, png);
    }
  }
}
