/*
 * tests/hbase/java/RegionAdmin.java: the fault tests' hand on HBase's admin API (issue 18). It
 * splits and moves the regions of a Rowan table while a test reads it, and waits until HBase
 * is done. Compiled and started by tests/hbase/region-admin.sh; talks to HBase through
 * ZooKeeper (the first argument, HOST:PORT). Commands, one a line on stdin, each answered by
 * one line on stdout, "ok ..." or "error MESSAGE":
 *   table NS REGEX          the HBase table holding the Rowan kv table whose name matches
 *                           REGEX (Java regex, whole name) in NS's registry ROWAN_KV (row =
 *                           the kv name, cell r:h = the HBase table's qualifier); exactly one
 *                           must match
 *   regions NS REGEX        its regions: "ok N START,SERVER START,SERVER ..."
 *   split NS REGEX KEY      split the region holding KEY at KEY (a region that HBase finds
 *                           not splittable yet, the daughter of a split still holding
 *                           references, is compacted first); waits until a region starting
 *                           at KEY is online and the parent is gone
 *   move NS REGEX KEY       move the region holding KEY to another region server than the
 *                           one holding it; waits until the new server serves it
 *   quit
 * KEY is in HBase's Bytes.toBytesBinary form (printable bytes as they are, others \xNN).
 * It prints "ready" once connected. Not here: reading or writing rows (Rowan does), starting
 * HBase (scripts/hbase-up.sh).
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;

public final class RegionAdmin {
  private static final long WAIT_MS = 120_000;
  private final Connection conn;
  private final Admin admin;

  private RegionAdmin(Connection conn) throws Exception {
    this.conn = conn;
    this.admin = conn.getAdmin();
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 1 || !args[0].contains(":")) {
      System.err.println("usage: RegionAdmin ZK_HOST:PORT");
      System.exit(2);
    }
    String[] hp = args[0].split(":");
    Configuration conf = HBaseConfiguration.create();
    conf.set("hbase.zookeeper.quorum", hp[0]);
    conf.set("hbase.zookeeper.property.clientPort", hp[1]);
    try (Connection conn = ConnectionFactory.createConnection(conf)) {
      RegionAdmin ra = new RegionAdmin(conn);
      System.out.println("ready");
      System.out.flush();
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
      String line;
      while ((line = in.readLine()) != null) {
        String[] w = line.trim().split(" +");
        if (w.length == 0 || w[0].isEmpty()) continue;
        if (w[0].equals("quit")) break;
        String reply;
        try {
          reply = "ok " + ra.run(w);
        } catch (Exception e) {
          reply = "error " + String.valueOf(e).replace('\n', ' ');
        }
        System.out.println(reply);
        System.out.flush();
      }
    }
  }

  private String run(String[] w) throws Exception {
    if (w.length < 3) throw new IllegalArgumentException("expected COMMAND NS REGEX [KEY]");
    TableName tn = table(w[1], w[2]);
    switch (w[0]) {
      case "table":
        return tn.getNameAsString();
      case "regions":
        return regions(tn);
      case "split":
        if (w.length != 4) throw new IllegalArgumentException("split NS REGEX KEY");
        return split(tn, Bytes.toBytesBinary(w[3]));
      case "move":
        if (w.length != 4) throw new IllegalArgumentException("move NS REGEX KEY");
        return move(tn, Bytes.toBytesBinary(w[3]));
      default:
        throw new IllegalArgumentException("unknown command " + w[0]);
    }
  }

  /* The HBase table of the Rowan kv table whose name matches regex, from the registry. */
  private TableName table(String ns, String regex) throws Exception {
    Pattern p = Pattern.compile(regex);
    List<String> found = new ArrayList<>();
    try (Table reg = conn.getTable(TableName.valueOf(ns, "ROWAN_KV"));
        ResultScanner rs = reg.getScanner(new Scan())) {
      for (Result r : rs) {
        if (!p.matcher(Bytes.toString(r.getRow())).matches()) continue;
        byte[] h = r.getValue(Bytes.toBytes("r"), Bytes.toBytes("h"));
        if (h != null) found.add(Bytes.toString(h));
      }
    }
    if (found.size() != 1)
      throw new IllegalArgumentException(found.size() + " registry rows of " + ns + " match " + regex);
    return TableName.valueOf(ns, found.get(0));
  }

  private String regions(TableName tn) throws Exception {
    StringBuilder b = new StringBuilder();
    try (RegionLocator loc = conn.getRegionLocator(tn)) {
      List<HRegionLocation> all = loc.getAllRegionLocations();
      b.append(all.size());
      for (HRegionLocation l : all)
        b.append(' ').append(Bytes.toStringBinary(l.getRegion().getStartKey())).append(',')
            .append(l.getServerName());
    }
    return b.toString();
  }

  private HRegionLocation locate(TableName tn, byte[] key) throws Exception {
    try (RegionLocator loc = conn.getRegionLocator(tn)) {
      return loc.getRegionLocation(key, true);
    }
  }

  private static void pause() throws InterruptedException {
    Thread.sleep(200);
  }

  private String split(TableName tn, byte[] key) throws Exception {
    RegionInfo parent = locate(tn, key).getRegion();
    if (Bytes.equals(parent.getStartKey(), key))
      throw new IllegalArgumentException("a region already starts at " + Bytes.toStringBinary(key));
    long end = System.currentTimeMillis() + WAIT_MS;
    for (boolean compacted = false;;) {
      try {
        admin.splitRegionAsync(parent.getRegionName(), key).get(WAIT_MS, TimeUnit.MILLISECONDS);
        break;
      } catch (Exception e) {
        /* a daughter of an earlier split still holds references to its parent's files:
         * compact it (HBase does so soon by itself) and try again */
        if (!String.valueOf(e).contains("NOT splittable") || System.currentTimeMillis() > end)
          throw e;
        if (!compacted) admin.majorCompactRegion(parent.getRegionName());
        compacted = true;
        pause();
      }
    }
    for (;;) {
      boolean parentGone = true, daughter = false;
      for (RegionInfo r : admin.getRegions(tn)) {
        if (Arrays.equals(r.getRegionName(), parent.getRegionName()) && !r.isSplit()) parentGone = false;
        if (Bytes.equals(r.getStartKey(), key)) daughter = true;
      }
      HRegionLocation now = locate(tn, key);
      if (parentGone && daughter && Bytes.equals(now.getRegion().getStartKey(), key))
        return regions(tn);
      if (System.currentTimeMillis() > end) throw new IllegalStateException("split not done in time");
      pause();
    }
  }

  private String move(TableName tn, byte[] key) throws Exception {
    HRegionLocation from = locate(tn, key);
    ServerName to = null;
    for (ServerName s : admin.getRegionServers())
      if (!s.equals(from.getServerName())) to = s;
    if (to == null) throw new IllegalStateException("no other region server than " + from.getServerName());
    admin.move(from.getRegion().getEncodedNameAsBytes(), to);
    long end = System.currentTimeMillis() + WAIT_MS;
    for (;;) {
      HRegionLocation now = locate(tn, key);
      if (now.getServerName().equals(to)) return from.getServerName() + " -> " + to;
      if (System.currentTimeMillis() > end) throw new IllegalStateException("move not done in time");
      pause();
    }
  }
}
