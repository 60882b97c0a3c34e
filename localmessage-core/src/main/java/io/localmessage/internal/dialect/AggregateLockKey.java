package io.localmessage.internal.dialect;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * A stable 64-bit key for the save lock of one aggregate: the first 8 bytes of the SHA-256 of the
 * table's name (without a schema prefix, lower case, so replicas that spell it differently agree),
 * the biz type and the aggregate id (UTF-8, each followed by a zero byte). Stable across JVMs and
 * versions, so replicas of different releases take the same lock; a cryptographic hash, so
 * aggregate ids chosen by outsiders cannot be made to collide on purpose.
 */
final class AggregateLockKey {
  private AggregateLockKey() {}

  static long of(String table, String bizType, String aggregateId) {
    MessageDigest sha;
    try {
      sha = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java runtime has SHA-256", e);
    }
    String bare = table.substring(table.lastIndexOf('.') + 1).toLowerCase(java.util.Locale.ROOT);
    for (String part : new String[] {bare, bizType, aggregateId}) {
      sha.update(part.getBytes(StandardCharsets.UTF_8));
      sha.update((byte) 0);
    }
    byte[] d = sha.digest();
    long key = 0;
    for (int i = 0; i < 8; i++) {
      key = (key << 8) | (d[i] & 0xff);
    }
    return key;
  }
}
