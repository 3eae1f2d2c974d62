/*
** examples/embed.c: using librowan from a C program (include/rowan.h only).
**
** What it shows: open (or create) a database; create the sensor table (PRIMARY KEY
** (STATION, TS DESC): one station's readings are contiguous and newest first; the readings
** live in the READINGS column family); upsert two days of hourly readings for three stations
** through one prepared statement inside BEGIN ... COMMIT (one atomic batch); read one
** station's latest readings with a bound parameter; print the EXPLAIN of that query (a
** range scan over the station's rows, no sort). Every call's result code is checked.
**
** Build against an installed librowan:
**   cc embed.c $(pkg-config --cflags --libs rowan) -o embed && ./embed /tmp/sensordb
** What it does not: handle concurrency (one connection, one thread) or import files (see
** the shell's .import).
*/
#include <stdio.h>
#include <stdlib.h>

#include "rowan.h"

/* Print the connection's error for what failed and return 1. */
static int fail(rowan_db *db, const char *what) {
  fprintf(stderr, "%s: %s (%s)\n", what, rowan_errmsg(db), rowan_errstr(rowan_errcode(db)));
  return 1;
}

/* Load 48 hourly readings for each of three stations in one transaction. */
static int load(rowan_db *db) {
  static const char *const stations[] = {"Aotizhongxin", "Dongsi", "Tiantan"};
  const int64_t start_ms = 1488326400000; /* 2017-03-01 00:00:00 (Beijing local time) */
  rowan_stmt *up = NULL;
  if (rowan_exec(db, "BEGIN", NULL, NULL) != ROWAN_OK) return fail(db, "BEGIN");
  if (rowan_prepare(db,
                    "UPSERT INTO SENSOR (STATION, TS, PM25, TEMP, PRES) VALUES (?, ?, ?, ?, ?)",
                    -1, &up, NULL) != ROWAN_OK)
    return fail(db, "prepare UPSERT");
  for (int s = 0; s < 3; s++) {
    for (int h = 0; h < 48; h++) {
      int rc = rowan_bind_text(up, 1, stations[s], -1);
      if (rc == ROWAN_OK) rc = rowan_bind_timestamp(up, 2, start_ms + (int64_t)h * 3600000);
      if (rc == ROWAN_OK) rc = rowan_bind_double(up, 3, 40.0 + (h * 7 + s * 13) % 90);
      if (rc == ROWAN_OK) rc = rowan_bind_double(up, 4, -2.0 + (h % 24) * 0.5 + s);
      if (rc == ROWAN_OK) rc = rowan_bind_double(up, 5, 1010.0 + (h % 12) * 0.25);
      if (rc != ROWAN_OK) { rowan_finalize(up); return fail(db, "bind"); }
      if (rowan_step(up) != ROWAN_DONE) { rowan_finalize(up); return fail(db, "UPSERT"); }
      rowan_reset(up);
    }
  }
  rowan_finalize(up);
  if (rowan_exec(db, "COMMIT", NULL, NULL) != ROWAN_OK) return fail(db, "COMMIT");
  return 0;
}

/* Run sql with ? bound to station and print each row's columns separated by tabs. */
static int query(rowan_db *db, const char *sql, const char *station) {
  rowan_stmt *st = NULL;
  if (rowan_prepare(db, sql, -1, &st, NULL) != ROWAN_OK) return fail(db, "prepare");
  if (rowan_bind_text(st, 1, station, -1) != ROWAN_OK) {
    rowan_finalize(st);
    return fail(db, "bind");
  }
  int rc;
  while ((rc = rowan_step(st)) == ROWAN_ROW) {
    for (int i = 0; i < rowan_column_count(st); i++) {
      const char *v = rowan_column_text(st, i);
      printf("%s%s", i ? "\t" : "", v ? v : "NULL");
    }
    printf("\n");
  }
  rowan_finalize(st);
  return rc == ROWAN_DONE ? 0 : fail(db, "step");
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "sensor.db";
  rowan_options opts;
  rowan_options_init(&opts); /* create if missing, WAL sync full */
  rowan_db *db = NULL;
  if (rowan_open(dir, &opts, &db) != ROWAN_OK) {
    int r = fail(db, "open");
    rowan_close(db);
    return r;
  }
  const char *ddl =
      "CREATE TABLE IF NOT EXISTS SENSOR (\n"
      "  STATION VARCHAR NOT NULL,\n"
      "  TS TIMESTAMP NOT NULL,\n"
      "  READINGS.PM25 DOUBLE,\n"
      "  READINGS.TEMP DOUBLE,\n"
      "  READINGS.PRES DOUBLE,\n"
      "  CONSTRAINT PK PRIMARY KEY (STATION, TS DESC))";
  int rc = rowan_exec(db, ddl, NULL, NULL) != ROWAN_OK ? fail(db, "CREATE TABLE") : 0;
  if (rc == 0) rc = load(db);
  const char *latest = "SELECT TS, PM25, TEMP FROM SENSOR WHERE STATION = ? LIMIT 5";
  if (rc == 0) {
    printf("latest readings of Dongsi:\nTS\tPM25\tTEMP\n");
    rc = query(db, latest, "Dongsi");
  }
  if (rc == 0) {
    printf("\nEXPLAIN %s\n", latest);
    rc = query(db, "EXPLAIN SELECT TS, PM25, TEMP FROM SENSOR WHERE STATION = ? LIMIT 5",
               "Dongsi");
  }
  if (rowan_close(db) != ROWAN_OK) rc = fail(db, "close");
  return rc;
}
