/*
 * bench/hbase/PhoenixBench.java: Apache Phoenix's side of the Rowan-vs-Phoenix figures on one
 * HBase (bench/hbase/run.sh runs it; by hand, not in CI). One JVM, one JDBC connection:
 *
 *   java ... PhoenixBench ZK load SENSOR_CSV STATIONS_CSV BATCH
 *       drops and creates SENSOR (the tour's schema, examples/sensor/schema.sql) and STATIONS,
 *       loads the CSV files made by bench/hbase/prep.sh with prepared UPSERTs, executeBatch
 *       and commit every BATCH rows (Phoenix's documented way to load from a JDBC client)
 *   java ... PhoenixBench ZK query LOOKUPS RANGES SEED
 *       the reads: point lookups, latest 100, one station-day, the filtered count, the daily
 *       average of July 2016 and the join with STATIONS, the same SQL as the Rowan side
 *       (bench/hbase/rowan_bench.c) with the same keys from the same seed
 *
 * Both tables are made with UPDATE_CACHE_FREQUENCY=900000: with Phoenix's default (ALWAYS)
 * every execution of a prepared statement first asks SYSTEM.CATALOG for the table.
 *
 * Each figure is one line on stdout: FIGURE,VALUE,UNIT,CHECK (VALUE a median within this
 * run; CHECK a sum over the answers that both engines must give alike). It does not start
 * HBase nor compare engines (run.sh does).
 */
import java.io.BufferedReader;
import java.io.FileReader;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

public class PhoenixBench {
  static final String[] STATIONS = {"Aotizhongxin", "Changping", "Dingling", "Dongsi",
      "Guanyuan", "Gucheng", "Huairou", "Nongzhanguan", "Shunyi", "Tiantan", "Wanliu",
      "Wanshouxigong"};
  static final long FIRST_HOUR_MS = 1362096000000L; /* 2013-03-01 00:00 */
  static final int HOURS = 35064;
  static long rng;

  /* the same generator as rowan_bench.c: 64-bit LCG, the high 31 bits */
  static int next(int n) {
    rng = rng * 6364136223846793005L + 1442695040888963407L;
    return (int) ((rng >>> 33) % n);
  }

  static double median(List<Double> v) {
    Collections.sort(v);
    int n = v.size();
    return n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
  }

  static void out(String fig, double v, String unit, String check) {
    System.out.printf("%s,%.1f,%s,%s%n", fig, v, unit, check);
  }

  static Double num(String s) {
    return s.isEmpty() || s.equals("NA") ? null : Double.valueOf(s);
  }

  static void setD(PreparedStatement p, int i, String s) throws Exception {
    Double d = num(s);
    if (d == null) p.setNull(i, Types.DOUBLE);
    else p.setDouble(i, d);
  }

  static void load(Connection c, String sensorCsv, String stationsCsv, int batch) throws Exception {
    try (Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS SENSOR");
      s.execute("DROP TABLE IF EXISTS STATIONS");
      s.execute("CREATE TABLE SENSOR (STATION VARCHAR NOT NULL, TS TIMESTAMP NOT NULL,"
          + " READINGS.PM25 DOUBLE, READINGS.PM10 DOUBLE, READINGS.SO2 DOUBLE,"
          + " READINGS.NO2 DOUBLE, READINGS.CO DOUBLE, READINGS.O3 DOUBLE, READINGS.TEMP DOUBLE,"
          + " READINGS.PRES DOUBLE, READINGS.DEWP DOUBLE, READINGS.RAIN DOUBLE,"
          + " READINGS.WD VARCHAR(3), READINGS.WSPM DOUBLE, META.LONGITUDE DOUBLE,"
          + " META.LATITUDE DOUBLE, META.TYPE VARCHAR,"
          + " CONSTRAINT PK PRIMARY KEY (STATION, TS DESC)) UPDATE_CACHE_FREQUENCY=900000");
      s.execute("CREATE TABLE STATIONS (STATION VARCHAR NOT NULL PRIMARY KEY,"
          + " LONGITUDE DOUBLE, LATITUDE DOUBLE, TYPE VARCHAR) UPDATE_CACHE_FREQUENCY=900000");
    }
    c.setAutoCommit(false);
    long t0 = System.nanoTime();
    long rows = 0;
    try (PreparedStatement p = c.prepareStatement("UPSERT INTO SENSOR (STATION, TS, PM25, PM10,"
             + " SO2, NO2, CO, O3, TEMP, PRES, DEWP, RAIN, WD, WSPM)"
             + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
         BufferedReader r = new BufferedReader(new FileReader(sensorCsv), 1 << 20)) {
      String line = r.readLine(); /* header */
      int pending = 0;
      while ((line = r.readLine()) != null) {
        String[] f = line.split(",", -1);
        if (f.length != 14) throw new IllegalArgumentException(sensorCsv + ": bad line: " + line);
        p.setString(1, f[0]);
        p.setTimestamp(2, Timestamp.valueOf(f[1]));
        for (int i = 2; i < 12; i++) setD(p, i + 1, f[i]);
        if (f[12].isEmpty() || f[12].equals("NA")) p.setNull(13, Types.VARCHAR);
        else p.setString(13, f[12]);
        setD(p, 14, f[13]);
        p.addBatch();
        rows++;
        if (++pending == batch) {
          p.executeBatch();
          c.commit();
          pending = 0;
        }
      }
      p.executeBatch();
      c.commit();
    }
    double s = (System.nanoTime() - t0) / 1e9;
    out("load_rows_per_s", rows / s, "rows/s", Long.toString(rows));
    try (PreparedStatement p = c.prepareStatement(
             "UPSERT INTO STATIONS VALUES (?, ?, ?, ?)");
         BufferedReader r = new BufferedReader(new FileReader(stationsCsv))) {
      String line = r.readLine();
      while ((line = r.readLine()) != null) {
        String[] f = line.split(",", -1);
        p.setString(1, f[0]);
        setD(p, 2, f[1]);
        setD(p, 3, f[2]);
        p.setString(4, f[3]);
        p.executeUpdate();
      }
      c.commit();
    }
  }

  /* Run a prepared query, reading every column of every row; returns the rows and adds
   * a sum of the numeric columns (nulls as 0) to sum[0]. */
  static long drain(PreparedStatement p, double[] sum) throws Exception {
    long n = 0;
    try (ResultSet rs = p.executeQuery()) {
      int nc = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        n++;
        for (int i = 1; i <= nc; i++) {
          Object o = rs.getObject(i);
          if (o instanceof Number) sum[0] += ((Number) o).doubleValue();
        }
      }
    }
    return n;
  }

  static void query(Connection c, int lookups, int ranges, long seed) throws Exception {
    rng = seed;
    double[] sum = {0};
    List<Double> t = new ArrayList<>();
    long rows = 0;
    try (PreparedStatement p = c.prepareStatement(
             "SELECT * FROM SENSOR WHERE STATION = ? AND TS = ?")) {
      for (int i = 0; i < lookups; i++) {
        p.setString(1, STATIONS[next(12)]);
        p.setTimestamp(2, new Timestamp(FIRST_HOUR_MS + 3600000L * next(HOURS)));
        long t0 = System.nanoTime();
        rows += drain(p, sum);
        t.add((System.nanoTime() - t0) / 1e3);
      }
    }
    out("lookup_p50", median(t), "us", rows + ":" + Math.round(sum[0]));
    t.clear(); rows = 0; sum[0] = 0;
    try (PreparedStatement p = c.prepareStatement(
             "SELECT * FROM SENSOR WHERE STATION = ? ORDER BY TS DESC LIMIT 100")) {
      for (int i = 0; i < ranges; i++) {
        p.setString(1, STATIONS[next(12)]);
        long t0 = System.nanoTime();
        rows += drain(p, sum);
        t.add((System.nanoTime() - t0) / 1e3);
      }
    }
    out("latest100_p50", median(t), "us", rows + ":" + Math.round(sum[0]));
    t.clear(); rows = 0; sum[0] = 0;
    try (PreparedStatement p = c.prepareStatement(
             "SELECT * FROM SENSOR WHERE STATION = ? AND TS >= ? AND TS < ?")) {
      for (int i = 0; i < ranges; i++) {
        p.setString(1, STATIONS[next(12)]);
        long day = FIRST_HOUR_MS + 86400000L * next(HOURS / 24);
        p.setTimestamp(2, new Timestamp(day));
        p.setTimestamp(3, new Timestamp(day + 86400000L));
        long t0 = System.nanoTime();
        rows += drain(p, sum);
        t.add((System.nanoTime() - t0) / 1e3);
      }
    }
    out("day_p50", median(t), "us", rows + ":" + Math.round(sum[0]));
    whole(c, "filtered_count", "SELECT COUNT(*) FROM SENSOR WHERE TEMP > 30", 3, 0, 0);
    whole(c, "daily_avg_month", "SELECT STATION, TRUNC(TS, 'DAY'), AVG(TEMP) FROM SENSOR"
        + " WHERE TS >= ? AND TS < ? GROUP BY STATION, TRUNC(TS, 'DAY')", 1,
        1467331200000L, 1470009600000L); /* July 2016 */
    whole(c, "join_month", "SELECT S.STATION, COUNT(*), AVG(R.PM25) FROM SENSOR R JOIN STATIONS S"
        + " ON R.STATION = S.STATION WHERE S.TYPE = '城区' AND R.TS >= ? AND R.TS < ?"
        + " GROUP BY S.STATION ORDER BY S.STATION", 5,
        1451606400000L, 1454284800000L); /* January 2016 */
  }

  /* A whole query (no per-call keys) run reps times: milliseconds, median. lo/hi: two
   * timestamp parameters when hi > 0. */
  static void whole(Connection c, String fig, String sql, int reps, long lo, long hi)
      throws Exception {
    List<Double> t = new ArrayList<>();
    double[] sum = {0};
    long rows = 0;
    try (PreparedStatement p = c.prepareStatement(sql)) {
      for (int i = 0; i < reps; i++) {
        if (hi > 0) {
          p.setTimestamp(1, new Timestamp(lo));
          p.setTimestamp(2, new Timestamp(hi));
        }
        sum[0] = 0;
        long t0 = System.nanoTime();
        rows = drain(p, sum);
        t.add((System.nanoTime() - t0) / 1e6);
      }
    }
    out(fig, median(t), "ms", rows + ":" + Math.round(sum[0]));
  }

  public static void main(String[] a) throws Exception {
    try (Connection c = DriverManager.getConnection("jdbc:phoenix:" + a[0])) {
      if (a[1].equals("load")) load(c, a[2], a[3], Integer.parseInt(a[4]));
      else query(c, Integer.parseInt(a[2]), Integer.parseInt(a[3]), Long.parseLong(a[4]));
    }
  }
}
