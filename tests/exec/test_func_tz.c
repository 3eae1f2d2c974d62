/*
** tests/exec/test_func_tz.c: the time zone functions taken from Apache Phoenix's list (issue
** 20): CONVERT_TZ and TIMEZONE_OFFSET with Phoenix's semantics (both offsets at the instant
** read as UTC), TO_TIME, and the zone argument of TO_TIMESTAMP, TO_DATE and TO_TIME (local
** time read in the zone: gaps moved on, overlaps the earlier instant); NULLs, unknown zones,
** fixed offsets, parameters, a refused index key; and exec/tz.h's reader of the system's tz
** database against glibc's own (localtime_r under setenv("TZ"), single-threaded here) at
** seeded random instants from 1900 to 2150 in zones of both hemispheres, half-hour and
** quarter-hour offsets, zones without daylight time and the far future (the TZif footer's
** rule). Needs the tzdata package (scripts/deps.sh installs it).
*/
#include <time.h>

#include "exec/tz.h"
#include "test_engine_util.h"
#include "testutil.h"

static void convert_tz(void **state) {
  (void)state;
  tdb *t = tdb_open();
  /* Phoenix's example zone, winter and summer; a DATE is its midnight */
  assert_string_equal(q(t, "SELECT CONVERT_TZ(TIMESTAMP '2016-01-01 12:00:00', 'UTC', "
                           "'Europe/Prague'), CONVERT_TZ(TIMESTAMP '2016-07-01 12:00:00', 'UTC', "
                           "'Europe/Prague'), CONVERT_TZ(DATE '2016-07-01', 'Europe/Prague', "
                           "'UTC')"),
                      "2016-01-01 13:00:00|2016-07-01 14:00:00|2016-06-30 22:00:00\n");
  /* fixed offsets, fractions kept */
  assert_string_equal(q(t, "SELECT CONVERT_TZ(TIMESTAMP '2016-01-01 12:00:00.123456', '+05:30', "
                           "'-0100'), CONVERT_TZ(TIMESTAMP '2016-01-01 00:00:00', '+00', 'UTC')"),
                      "2016-01-01 05:30:00.123456|2016-01-01 00:00:00\n");
  /* Phoenix's formula near a change: both offsets at 01:30 read as UTC (after Prague's
     01:00 UTC change to +2), so 23:30 the day before; MySQL's would give 00:30 */
  assert_string_equal(q(t, "SELECT CONVERT_TZ(TIMESTAMP '2016-03-27 01:30:00', 'Europe/Prague', "
                           "'UTC')"), "2016-03-26 23:30:00\n");
  assert_string_equal(q(t, "SELECT CONVERT_TZ(NULL, 'UTC', 'UTC'), CONVERT_TZ(TIMESTAMP "
                           "'2016-01-01 00:00:00', NULL, 'UTC')"), "NULL|NULL\n");
  assert_non_null(strstr(qerr(t, "SELECT CONVERT_TZ(TIMESTAMP '2016-01-01 00:00:00', 'UTC', "
                                 "'Europe/Pragu')", EXEC_ERROR),
                         "CONVERT_TZ: unknown time zone 'Europe/Pragu'"));
  assert_non_null(strstr(qerr(t, "SELECT CONVERT_TZ(TIMESTAMP '2016-01-01 00:00:00', 'UTC', "
                                 "'../../etc/passwd')", EXEC_ERROR), "unknown time zone"));
  assert_non_null(strstr(qerr(t, "SELECT CONVERT_TZ(1, 'UTC', 'UTC')", EXEC_ERROR),
                         "CONVERT_TZ does not accept"));
  assert_non_null(strstr(qerr(t, "SELECT CONVERT_TZ(TIMESTAMP '9999-12-31 23:00:00', 'UTC', "
                                 "'Asia/Tokyo')", EXEC_CONSTRAINT), "out of range"));
  /* parameters take their hinted types */
  cat_value p[3] = {cat_v_int(CAT_T_TIMESTAMP, 1451649600000000LL), /* 2016-01-01 12:00 */
                    cat_v_str(CAT_T_VARCHAR, (const uint8_t *)"UTC", 3),
                    cat_v_str(CAT_T_VARCHAR, (const uint8_t *)"Asia/Kolkata", 12)};
  assert_int_equal(tdb_runp(t, "SELECT CONVERT_TZ(?, ?, ?)", 3, p), EXEC_DONE);
  assert_string_equal(t->out, "2016-01-01 17:30:00\n");
  tdb_close(t);
}

static void timezone_offset(void **state) {
  (void)state;
  tdb *t = tdb_open();
  /* Phoenix's example; both hemispheres; half and three-quarter hours; the far future (the
     file's footer rule); a zone without daylight time; fixed offsets */
  assert_string_equal(q(t, "SELECT TIMEZONE_OFFSET('Indian/Cocos', TIMESTAMP '2016-01-01 00:00:00'), "
                           "TIMEZONE_OFFSET('America/New_York', DATE '2016-01-15'), "
                           "TIMEZONE_OFFSET('America/New_York', DATE '2016-07-01'), "
                           "TIMEZONE_OFFSET('Australia/Sydney', DATE '2090-01-01'), "
                           "TIMEZONE_OFFSET('Australia/Sydney', DATE '2090-07-01'), "
                           "TIMEZONE_OFFSET('Europe/Prague', DATE '2090-07-01'), "
                           "TIMEZONE_OFFSET('America/St_Johns', DATE '2016-01-01'), "
                           "TIMEZONE_OFFSET('Asia/Kathmandu', DATE '2030-01-01'), "
                           "TIMEZONE_OFFSET('UTC', DATE '2016-01-01'), "
                           "TIMEZONE_OFFSET('-03:30', DATE '2016-01-01')"),
                      "390|-300|-240|660|600|120|-210|345|0|-210\n");
  /* the minute the change happens: 2016-03-27 01:00 UTC in Prague */
  assert_string_equal(q(t, "SELECT TIMEZONE_OFFSET('Europe/Prague', TIMESTAMP '2016-03-27 00:59:59'), "
                           "TIMEZONE_OFFSET('Europe/Prague', TIMESTAMP '2016-03-27 01:00:00')"),
                      "60|120\n");
  assert_string_equal(q(t, "SELECT TIMEZONE_OFFSET(NULL, DATE '2016-01-01'), "
                           "TIMEZONE_OFFSET('UTC', NULL)"), "NULL|NULL\n");
  assert_non_null(strstr(qerr(t, "SELECT TIMEZONE_OFFSET('Mars/Olympus', DATE '2016-01-01')",
                              EXEC_ERROR), "TIMEZONE_OFFSET: unknown time zone 'Mars/Olympus'"));
  assert_non_null(strstr(qerr(t, "SELECT TIMEZONE_OFFSET('+19:00', DATE '2016-01-01')",
                              EXEC_ERROR), "unknown time zone '+19:00'"));
  assert_non_null(strstr(qerr(t, "SELECT TIMEZONE_OFFSET(DATE '2016-01-01', 'UTC')",
                              EXEC_ERROR), "TIMEZONE_OFFSET does not accept"));
  tdb_close(t);
}

static void to_time_and_zones(void **state) {
  (void)state;
  tdb *t = tdb_open();
  assert_string_equal(q(t, "SELECT TO_TIME('10:30:15'), TO_TIME('10:30'), TO_TIME('2016-01-01 "
                           "10:30:15.25'), TO_TIME('7.30 PM', 'h.mm a'), TO_TIME(NULL)"),
                      "10:30:15|10:30:00|10:30:15.250|19:30:00|NULL\n");
  assert_non_null(strstr(qerr(t, "SELECT TO_TIME('25:00')", EXEC_ERROR), "TIMESTAMP"));
  /* the zone: local time there, the value in UTC */
  assert_string_equal(q(t, "SELECT TO_TIMESTAMP('2016-07-01 12:00', 'yyyy-MM-dd HH:mm', "
                           "'America/New_York'), TO_TIMESTAMP('2016-01-01 12:00', 'yyyy-MM-dd "
                           "HH:mm', 'America/New_York'), TO_DATE('2016-07-01 23:30', 'yyyy-MM-dd "
                           "HH:mm', 'America/New_York'), TO_TIME('10:30', 'HH:mm', "
                           "'Europe/Prague'), TO_TIMESTAMP('2016-01-01 12:00', 'yyyy-MM-dd HH:mm', "
                           "'+05:30')"),
                      "2016-07-01 16:00:00|2016-01-01 17:00:00|2016-07-02|09:30:00|"
                      "2016-01-01 06:30:00\n");
  /* a gap (02:30 does not exist on 2016-03-13 in New York): moved on by the hour; an overlap
     (01:30 twice on 2016-11-06): the earlier instant (EDT) */
  assert_string_equal(q(t, "SELECT TO_TIMESTAMP('2016-03-13 02:30', 'yyyy-MM-dd HH:mm', "
                           "'America/New_York'), TO_TIMESTAMP('2016-11-06 01:30', 'yyyy-MM-dd "
                           "HH:mm', 'America/New_York')"),
                      "2016-03-13 07:30:00|2016-11-06 05:30:00\n");
  assert_non_null(strstr(qerr(t, "SELECT TO_DATE('2016-01-01', 'yyyy-MM-dd', 'Nowhere')",
                              EXEC_ERROR), "TO_DATE: unknown time zone 'Nowhere'"));
  assert_non_null(strstr(qerr(t, "SELECT TO_NUMBER('1', '0', 'UTC')", EXEC_ERROR),
                         "TO_NUMBER takes 1 to 2 arguments"));
  /* not in an index key: the tz database may change under it */
  q(t, "CREATE TABLE E (K INTEGER PRIMARY KEY, TS TIMESTAMP)");
  assert_non_null(strstr(qerr(t, "CREATE INDEX EI ON E (CONVERT_TZ(TS, 'UTC', 'Europe/Prague'))",
                              EXEC_ERROR), "not deterministic"));
  q(t, "CREATE INDEX EJ ON E (TO_TIMESTAMP('2016-01-01', 'yyyy-MM-dd'))");
  tdb_close(t);
}

/* exec/tz.h against glibc's localtime_r on the same files. */
static void against_glibc(void **state) {
  (void)state;
  static const char *const zones[] = {
      "Europe/Prague",   "America/New_York", "Australia/Sydney", "Asia/Kolkata",
      "America/St_Johns", "Asia/Kathmandu",  "Pacific/Chatham",  "America/Santiago",
      "Africa/Casablanca", "Europe/Dublin",  "Asia/Tokyo",       "UTC",
      "America/Sao_Paulo", "Pacific/Apia",   "Antarctica/Troll", "Etc/GMT+5"};
  uint64_t seed = tu_seed("func_tz_against_glibc"), rs = seed;
  int n = (int)tu_scaled(3000, 300);
  char *old = getenv("TZ") ? strdup(getenv("TZ")) : NULL;
  for (size_t z = 0; z < sizeof zones / sizeof zones[0]; z++) {
    const exec_tz *tz;
    char msg[300];
    if (exec_tz_find(zones[z], strlen(zones[z]), &tz, msg, sizeof msg) != 0)
      fail_msg("%s: %s", zones[z], msg);
    setenv("TZ", zones[z], 1);
    tzset();
    for (int i = 0; i < n; i++) {
      /* 1900 .. 2150, with more weight near daylight-saving changes of recent years */
      int64_t t = i % 3 ? -2208988800LL + (int64_t)tu_below(&rs, 7889231490ULL)
                        : 1262304000LL + (int64_t)tu_below(&rs, 946080000ULL);
      time_t tt = (time_t)t;
      struct tm tm;
      assert_non_null(localtime_r(&tt, &tm));
      int32_t mine = exec_tz_offset(tz, t);
      if (mine != tm.tm_gmtoff)
        fail_msg("%s at %lld (seed %llu): Rowan %d s, glibc %ld s", zones[z], (long long)t,
                 (unsigned long long)seed, mine, (long)tm.tm_gmtoff);
      /* local -> UTC: where the local time exists once, back to the same instant */
      int64_t local = t + mine;
      int64_t back = exec_tz_local_to_utc(tz, local);
      if (exec_tz_offset(tz, back) + back != local && exec_tz_offset(tz, t - 7200) == mine &&
          exec_tz_offset(tz, t + 7200) == mine)
        fail_msg("%s: local %lld came back as %lld", zones[z], (long long)local, (long long)back);
    }
  }
  if (old) setenv("TZ", old, 1);
  else unsetenv("TZ");
  tzset();
  free(old);
}

/* No database: the message says what to install. */
static void no_database(void **state) {
  (void)state;
  setenv("TZDIR", "/nonexistent-tzdir", 1);
  const exec_tz *tz;
  char msg[300];
  assert_int_equal(exec_tz_find("Pacific/Fiji", 12, &tz, msg, sizeof msg), -1);
  assert_non_null(strstr(msg, "install the tzdata package, or set TZDIR"));
  assert_int_equal(exec_tz_find("+02:00", 6, &tz, msg, sizeof msg), 0); /* needs no file */
  assert_int_equal(exec_tz_offset(tz, 0), 7200);
  unsetenv("TZDIR");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(convert_tz),   cmocka_unit_test(timezone_offset),
      cmocka_unit_test(to_time_and_zones), cmocka_unit_test(against_glibc),
      cmocka_unit_test(no_database),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
