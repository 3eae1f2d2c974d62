/*
 * bench/hbase/Compact.java: settle the tables of the Rowan-vs-Phoenix bench before its reads
 * (bench/hbase/run.sh runs it between the loads and the reads; by hand, not in CI). For every
 * HBase table whose full name (NAMESPACE:QUALIFIER, or QUALIFIER in the default namespace)
 * matches one of the Java regular expressions given, it flushes the memstores to files, asks
 * for a major compaction, then waits until HBase reports no compaction running on any of
 * them (polling Admin.getCompactionState every 0.5 s, after a first wait for the request to
 * be picked up) and until no region of them is in transition. So both engines read tables of
 * one compacted file per region and family, not tables still being flushed and rewritten
 * right after their loads.
 *
 *   java ... Compact ZK_HOST:PORT REGEX...
 *
 * Prints one line per table (its name and regions) and the seconds it waited, to stdout.
 * Exits 1 when no table matches or the wait passes 600 s. It does not split, move or balance
 * regions, and it touches no table the expressions do not name.
 */
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.CompactionState;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;

public final class Compact {
  private static final long WAIT_MS = 600_000;

  public static void main(String[] a) throws Exception {
    if (a.length < 2 || !a[0].contains(":")) {
      System.err.println("usage: Compact ZK_HOST:PORT REGEX...");
      System.exit(2);
    }
    String[] hp = a[0].split(":");
    Configuration conf = HBaseConfiguration.create();
    conf.set("hbase.zookeeper.quorum", hp[0]);
    conf.set("hbase.zookeeper.property.clientPort", hp[1]);
    long t0 = System.nanoTime();
    try (Connection conn = ConnectionFactory.createConnection(conf);
        Admin admin = conn.getAdmin()) {
      List<TableName> tabs = new ArrayList<>();
      for (TableName tn : admin.listTableNames()) {
        for (int i = 1; i < a.length; i++) {
          if (Pattern.compile(a[i]).matcher(tn.getNameAsString()).matches()) {
            tabs.add(tn);
            break;
          }
        }
      }
      if (tabs.isEmpty()) {
        System.err.println("Compact: no table matches");
        System.exit(1);
      }
      for (TableName tn : tabs) {
        admin.flush(tn);
        admin.majorCompact(tn);
        System.out.println("compact " + tn.getNameAsString() + " regions "
            + admin.getRegions(tn).size());
      }
      Thread.sleep(2000); /* the requests are queued on the region servers first */
      long end = System.currentTimeMillis() + WAIT_MS;
      for (;;) {
        boolean busy = admin.getClusterMetrics().getRegionStatesInTransition().size() > 0;
        for (TableName tn : tabs) {
          if (busy) break;
          busy = admin.getCompactionState(tn) != CompactionState.NONE;
        }
        if (!busy) break;
        if (System.currentTimeMillis() > end) {
          System.err.println("Compact: still compacting after " + WAIT_MS / 1000 + " s");
          System.exit(1);
        }
        Thread.sleep(500);
      }
    }
    System.out.printf("compacted in %.1f s%n", (System.nanoTime() - t0) / 1e9);
  }
}
