package io.localmessage.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.localmessage.testing.TestDatabase;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The HTTP receiver as a door from outside: it has no operators (the application authenticates its
 * senders), so the matrix here is hostile input in the one field a sender controls besides the
 * body, the {@code Idempotency-Key}. Every refused key answers 400 (a 500 would make the sender
 * retry forever) and writes nothing. Subclassed per database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractReceiverSecurityTest {
  private TestDatabase db;
  private PointsService points;
  private LocalHttpServer server;

  protected abstract TestDatabase createDatabase();

  @BeforeAll
  void start() {
    db = createDatabase();
    points = new PointsService(db, db.dataSource(4));
    server = LocalHttpServer.start(2);
    server.context("/points", points.endpoint());
  }

  @AfterAll
  void stop() {
    server.close();
    db.close();
  }

  /**
   * Sends the request byte for byte: {@code java.net.http} refuses to put control characters into a
   * header, an attacker's client does not.
   */
  private String rawPost(String key, String body) throws Exception {
    URI uri = server.uri("/points");
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    String head =
        "POST /points HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nIdempotency-Key: "
            + key
            + "\r\nContent-Length: "
            + b.length
            + "\r\n\r\n";
    try (Socket s = new Socket(uri.getHost(), uri.getPort())) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(head.getBytes(StandardCharsets.ISO_8859_1));
      out.write(b);
      out.flush();
      InputStream in = s.getInputStream();
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      in.transferTo(all);
      return all.toString(StandardCharsets.UTF_8);
    }
  }

  private static int status(String response) {
    return Integer.parseInt(response.substring(9, 12));
  }

  @Test
  void aNulInTheKeyIsA400AndWritesNothing() throws Exception {
    long before = points.inboxRows();
    int runs = points.workRuns.get();
    String r = rawPost("nul-\u0000-key", PointsService.body(7001, 1));
    assertThat(status(r)).as(r).isEqualTo(400);
    assertThat(r).contains("Idempotency-Key");
    assertThat(points.inboxRows()).isEqualTo(before);
    assertThat(points.workRuns.get()).isEqualTo(runs);
  }

  @Test
  void controlCharactersInTheKeyAreA400() throws Exception {
    long before = points.inboxRows();
    for (String key :
        new String[] {"esc-\u001b[31m-red", "bell-\u0007-in-the-middle", "del-\u007f"}) {
      String r = rawPost(key, PointsService.body(7002, 1));
      assertThat(status(r)).as(key).isEqualTo(400);
    }
    assertThat(points.inboxRows()).isEqualTo(before);
  }

  @Test
  void theProgrammaticReceiverRefusesTheSameKeysBeforeAnySql() throws Exception {
    for (String key : new String[] {"a\u0000b", "line\nforged", "esc\u001b[2J", "lone\ud800"}) {
      try (Connection c = points.ds.getConnection()) {
        c.setAutoCommit(false);
        assertThatThrownBy(
                () ->
                    points.receiver.receive(
                        c, key, PointsService.CONSUMER, conn -> points.award(conn, new byte[0])))
            .as(key)
            .isInstanceOf(InvalidIdempotencyKeyException.class);
        c.rollback();
      }
    }
  }

  @Test
  void ordinaryKeysStillWork() throws Exception {
    String r = rawPost("order-7003:ünïcode", PointsService.body(7003, 2));
    assertThat(status(r)).as(r).isEqualTo(200);
    assertThat(rawPost("order-7003:ünïcode", PointsService.body(7003, 2))).contains("duplicate");
  }
}
