// tests/hbase/phoenix/PhoenixRunner.java: the Phoenix side of the differential harness
// (tests/hbase/phoenix/phoenix_diff.py, issue 18). One JVM, one Phoenix JDBC connection at a
// time, for a whole run: it reads statements from stdin, one a line (the harness folds a
// statement's line breaks into spaces), runs each with autocommit on, and prints its outcome
// in the canonical form that tests/hbase/phoenix/rowan_runner.c prints for Rowan:
//
//   #S                      a statement begins
//   v1 TAB v2 ...           one line per result row; each value tagged with its class:
//                           N (NULL), i:INTEGER, f:NUMBER (plain decimal), s:TEXT (backslash,
//                           tab and line break escaped as \\ \t \n), t:MS (ms since the epoch
//                           of a DATE, TIME or TIMESTAMP), b:0/1 (BOOLEAN), x:HEX (binary)
//   #OK n                   done: n rows (a query) or n rows changed
//   #ERR code message       refused: Phoenix's error code and the first line of its message
//
// A line "#CONNECT SCHEMA" opens a new connection whose unqualified names resolve in that
// schema (Phoenix's `schema` connection property: the harness keeps each source's tables
// apart from other runs), closing the previous one. "#DROPSCHEMA SCHEMA" drops that schema's
// views, tables (their indexes with them) and sequences, as SYSTEM.CATALOG and
// SYSTEM."SEQUENCE" list them (the harness's clean-up). Arguments: the ZooKeeper quorum
// (HOST:PORT). Not here: generating statements, comparing answers.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

public final class PhoenixRunner {
  private PhoenixRunner() {}

  static String esc(String s) {
    StringBuilder b = new StringBuilder(s.length() + 8);
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\') b.append("\\\\");
      else if (c == '\t') b.append("\\t");
      else if (c == '\n') b.append("\\n");
      else if (c == '\r') b.append("\\r");
      else b.append(c);
    }
    return b.toString();
  }

  // The value by the Java class Phoenix gives it (getObject), not by the column's declared
  // type: Phoenix declares some expressions with another type than their values have.
  static String value(ResultSet rs, int i) throws SQLException {
    Object o = rs.getObject(i);
    if (o == null) return "N";
    if (o instanceof Long || o instanceof Integer || o instanceof Short || o instanceof Byte) {
      return "i:" + ((Number) o).longValue();
    }
    if (o instanceof BigDecimal) return "f:" + ((BigDecimal) o).toPlainString();
    if (o instanceof Double || o instanceof Float) return "f:" + Double.toString(((Number) o).doubleValue());
    if (o instanceof Boolean) return ((Boolean) o) ? "b:1" : "b:0";
    if (o instanceof java.util.Date) return "t:" + ((java.util.Date) o).getTime();
    if (o instanceof byte[]) {
      StringBuilder h = new StringBuilder("x:");
      for (byte x : (byte[]) o) h.append(String.format("%02x", x & 0xff));
      return h.toString();
    }
    return "s:" + esc(String.valueOf(rs.getString(i)));
  }

  static Connection connect(String zk, String schema) throws SQLException {
    Properties p = new Properties();
    // few retries: a write HBase refuses (a family a view named that the table lacks) fails
    // in seconds instead of minutes of backoff; the first connection's values hold for all
    p.setProperty("hbase.client.retries.number", "3");
    p.setProperty("hbase.client.pause", "200");
    p.setProperty("hbase.rpc.timeout", "60000");
    p.setProperty("hbase.client.operation.timeout", "90000");
    p.setProperty("phoenix.query.timeoutMs", "120000");
    if (schema != null && !schema.isEmpty()) p.setProperty("schema", schema);
    Connection c = DriverManager.getConnection("jdbc:phoenix:" + zk, p);
    c.setAutoCommit(true);
    return c;
  }

  // Drops what SYSTEM.CATALOG and SYSTEM."SEQUENCE" list in schema s: views first, then
  // tables; returns how many it dropped (failures are counted out and go on).
  static int dropSchema(Connection c, String s) throws SQLException {
    java.util.List<String> views = new java.util.ArrayList<>();
    java.util.List<String> tables = new java.util.ArrayList<>();
    java.util.List<String> seqs = new java.util.ArrayList<>();
    try (java.sql.PreparedStatement ps = c.prepareStatement(
        "SELECT DISTINCT TABLE_NAME, TABLE_TYPE FROM SYSTEM.CATALOG WHERE TABLE_SCHEM = ?"
        + " AND TABLE_TYPE IN ('u', 'v')")) {
      ps.setString(1, s);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ("v".equals(rs.getString(2)) ? views : tables).add(rs.getString(1));
        }
      }
    }
    try (java.sql.PreparedStatement ps = c.prepareStatement(
        "SELECT SEQUENCE_NAME FROM SYSTEM.\"SEQUENCE\" WHERE SEQUENCE_SCHEMA = ?")) {
      ps.setString(1, s);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) seqs.add(rs.getString(1));
      }
    }
    int n = 0;
    for (int pass = 0; pass < 2; pass++) {
      for (String t : pass == 0 ? views : tables) {
        try (Statement st = c.createStatement()) {
          st.execute("DROP " + (pass == 0 ? "VIEW" : "TABLE") + " IF EXISTS \"" + s + "\".\""
                     + t + "\"" + (pass == 1 ? " CASCADE" : ""));
          n++;
        } catch (SQLException e) {
          // a view dropped with its table, or a table already gone: nothing left to drop
        }
      }
    }
    for (String q : seqs) {
      try (Statement st = c.createStatement()) {
        st.execute("DROP SEQUENCE IF EXISTS \"" + s + "\".\"" + q + "\"");
        n++;
      } catch (SQLException e) {
        // already gone
      }
    }
    return n;
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: PhoenixRunner ZK_HOST:PORT < statements");
      System.exit(2);
    }
    String zk = args[0];
    PrintStream out = new PrintStream(System.out, false, "UTF-8");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    Connection conn = connect(zk, null);
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isEmpty()) continue;
      if (line.startsWith("#CONNECT")) {
        conn.close();
        conn = connect(zk, line.substring(8).trim());
        out.println("#CONNECTED");
        out.flush();
        continue;
      }
      if (line.startsWith("#DROPSCHEMA")) {
        out.println("#DROPPED " + dropSchema(conn, line.substring(11).trim()));
        out.flush();
        continue;
      }
      out.println("#S");
      try (Statement st = conn.createStatement()) {
        boolean isQuery = st.execute(line);
        if (isQuery) {
          long n = 0;
          try (ResultSet rs = st.getResultSet()) {
            int cols = rs.getMetaData().getColumnCount();
            StringBuilder b = new StringBuilder();
            while (rs.next()) {
              b.setLength(0);
              for (int i = 1; i <= cols; i++) {
                if (i > 1) b.append('\t');
                b.append(value(rs, i));
              }
              out.println(b);
              n++;
            }
          }
          out.println("#OK " + n);
        } else {
          out.println("#OK " + Math.max(0, st.getUpdateCount()));
        }
      } catch (SQLException | RuntimeException e) {
        int code = e instanceof SQLException ? ((SQLException) e).getErrorCode() : -1;
        String m = String.valueOf(e.getMessage());
        int nl = m.indexOf('\n');
        if (nl >= 0) m = m.substring(0, nl);
        out.println("#ERR " + code + " " + e.getClass().getSimpleName() + ": " + esc(m));
      }
      out.flush();
    }
    conn.close();
    out.flush();
  }
}
