package io.localmessage.console;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.stream.Stream;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Debian's headless Chromium driven through its chromedriver (installed by {@code .ci/run}). The
 * background-networking switches keep Chromium from calling out: this machine's network is closed
 * and such connections would be refused.
 */
final class Browser implements AutoCloseable {
  static final String CHROMIUM = "/usr/bin/chromium";
  static final String CHROMEDRIVER = "/usr/bin/chromedriver";

  final ChromeDriver driver;
  private final ChromeDriverService service;
  private final Path profile;
  private final int width;

  Browser(int width, int height) {
    this.width = width;
    try {
      profile = Files.createTempDirectory("lm-chromium-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM);
    options.addArguments(
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--user-data-dir=" + profile,
        "--window-size=" + width + "," + height);
    service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(new File(CHROMEDRIVER))
            .usingAnyFreePort()
            .withTimeout(Duration.ofSeconds(30))
            .build();
    driver = new ChromeDriver(service, options);
    driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
  }

  /** A PNG of the whole page: the window is fitted to the page's height first (at most 2000). */
  byte[] screenshot() {
    Number content = (Number) driver.executeScript("return document.documentElement.scrollHeight");
    Number chrome = (Number) driver.executeScript("return window.outerHeight - window.innerHeight");
    int height = Math.min(2000, content.intValue() + Math.max(0, chrome.intValue()));
    driver.manage().window().setSize(new Dimension(width, height));
    return driver.getScreenshotAs(OutputType.BYTES);
  }

  @Override
  public void close() {
    try {
      driver.quit();
    } finally {
      service.stop();
      try (Stream<Path> files = Files.walk(profile)) {
        files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
      } catch (IOException e) {
        // a temp profile left behind is harmless
      }
    }
  }
}
