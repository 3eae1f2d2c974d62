/*
** tests/planner/test_bind.c: binding through exec_prepare: unknown tables and columns are
** errors naming the name and its line and column; qualified names (table.col, alias.col,
** family.col, table.family.col) resolve; type checks (comparable operands, BOOLEAN
** conditions, arithmetic), literal coercion (a DOUBLE column compared with an integer
** compares numbers; a string compared with a DATE parses), constant folding errors,
** aggregate placement, UPSERT column lists, ORDER BY ordinals.
*/
#include "../exec/test_engine_util.h"

static tdb *setup(void) {
  tdb *t = tdb_open();
  q(t, "CREATE TABLE SENSOR (STATION VARCHAR NOT NULL, TS TIMESTAMP NOT NULL, "
       "READINGS.TEMP DOUBLE, READINGS.PM25 INTEGER, META.CITY VARCHAR, D DATE "
       "CONSTRAINT PK PRIMARY KEY (STATION, TS DESC))");
  q(t, "UPSERT INTO SENSOR VALUES ('Dongsi', TIMESTAMP '2016-01-01 10:00:00', 9.5, 120, "
       "'Beijing', DATE '2016-01-01')");
  q(t, "UPSERT INTO SENSOR VALUES ('Dongsi', TIMESTAMP '2016-01-01 11:00:00', 31.0, 80, "
       "'Beijing', DATE '2016-01-02')");
  return t;
}

static void unknown_names(void **state) {
  (void)state;
  tdb *t = setup();
  assert_string_equal(qerr(t, "SELECT TEMPX FROM SENSOR", EXEC_ERROR),
                      "unknown column \"TEMPX\" at line 1, column 8");
  assert_int_equal(t->err.offset, 7);
  assert_string_equal(qerr(t, "SELECT TEMP\nFROM SENSOR\nWHERE  nope > 1", EXEC_ERROR),
                      "unknown column \"NOPE\" at line 3, column 8");
  assert_string_equal(qerr(t, "SELECT * FROM NOSUCH", EXEC_ERROR),
                      "unknown table \"NOSUCH\" at line 1, column 15");
  assert_string_equal(qerr(t, "SELECT META.TEMP FROM SENSOR", EXEC_ERROR),
                      "unknown column \"META.TEMP\" at line 1, column 8");
  assert_string_equal(qerr(t, "SELECT X.TEMP FROM SENSOR S", EXEC_ERROR),
                      "unknown column \"X.TEMP\" at line 1, column 8");
  assert_string_equal(qerr(t, "UPSERT INTO SENSOR (STATION, TS, WIND) VALUES ('a', NULL, 1)",
                           EXEC_ERROR),
                      "unknown column \"WIND\" in table SENSOR at line 1, column 34");
  assert_non_null(strstr(qerr(t, "SELECT NOFUNC(TEMP) FROM SENSOR", EXEC_ERROR), "NOFUNC"));
  assert_non_null(strstr(qerr(t, "DELETE FROM SENSOR WHERE Q = 1", EXEC_ERROR), "\"Q\""));
  tdb_close(t);
}

static void qualified_names(void **state) {
  (void)state;
  tdb *t = setup();
  assert_string_equal(q(t, "SELECT S.TEMP, S.PM25, READINGS.TEMP, META.CITY, "
                           "S.META.CITY FROM SENSOR S WHERE S.STATION = 'Dongsi' "
                           "ORDER BY TS"),
                      "9.5|120|9.5|Beijing|Beijing\n31|80|31|Beijing|Beijing\n");
  assert_string_equal(q(t, "SELECT SENSOR.TEMP, SENSOR.META.CITY FROM SENSOR WHERE "
                           "SENSOR.STATION = 'Dongsi' ORDER BY TS"),
                      "9.5|Beijing\n31|Beijing\n");
  /* an alias hides the table's name, as in a join and in SQLite */
  assert_non_null(strstr(qerr(t, "SELECT SENSOR.TEMP FROM SENSOR S", EXEC_ERROR),
                         "unknown column \"SENSOR.TEMP\""));
  assert_string_equal(q(t, "SELECT COUNT(*) FROM SENSOR WHERE sensor.pm25 > 100"), "1\n");
  assert_string_equal(q(t, "SELECT \"CITY\" FROM SENSOR LIMIT 1"), "Beijing\n");
  tdb_close(t);
}

static void types(void **state) {
  (void)state;
  tdb *t = setup();
  /* numbers compare as numbers across types */
  assert_string_equal(q(t, "SELECT COUNT(*) FROM SENSOR WHERE TEMP > 30"), "1\n");
  assert_string_equal(q(t, "SELECT COUNT(*) FROM SENSOR WHERE TEMP > 9.25"), "2\n");
  assert_string_equal(q(t, "SELECT COUNT(*) FROM SENSOR WHERE PM25 > 99.5"), "1\n");
  assert_string_equal(q(t, "SELECT COUNT(*) FROM SENSOR WHERE PM25 = 80.0"), "1\n");
  /* strings compared with dates and timestamps are parsed as such */
  assert_string_equal(q(t, "SELECT COUNT(*) FROM SENSOR WHERE D = '2016-01-02'"), "1\n");
  assert_string_equal(q(t, "SELECT COUNT(*) FROM SENSOR WHERE TS >= '2016-01-01 10:30'"), "1\n");
  assert_non_null(strstr(qerr(t, "SELECT * FROM SENSOR WHERE D = 'yesterday'", EXEC_ERROR),
                         "at line 1, column 32"));
  /* the reason is given in the column's terms, not those of the wider type parsed */
  assert_string_equal(qerr(t, "SELECT * FROM SENSOR WHERE PM25 = 'abc'", EXEC_ERROR),
                      "cannot compare INTEGER with 'abc': not a number at line 1, column 35");
  assert_string_equal(qerr(t, "SELECT * FROM SENSOR WHERE D = 'yesterday'", EXEC_ERROR),
                      "cannot compare DATE with 'yesterday': not a date or timestamp"
                      " at line 1, column 32");
  assert_non_null(strstr(qerr(t, "SELECT * FROM SENSOR WHERE TEMP = '1x'", EXEC_ERROR),
                         "cannot compare DOUBLE with '1x': "));
  assert_string_equal(qerr(t, "SELECT * FROM SENSOR WHERE TEMP = TRUE", EXEC_ERROR),
                      "cannot compare DOUBLE with BOOLEAN at line 1, column 28");
  assert_non_null(strstr(qerr(t, "SELECT * FROM SENSOR WHERE CITY > 5", EXEC_ERROR),
                         "cannot compare"));
  assert_non_null(strstr(qerr(t, "SELECT * FROM SENSOR WHERE TEMP", EXEC_ERROR),
                         "WHERE needs a BOOLEAN"));
  assert_non_null(strstr(qerr(t, "SELECT CITY + 1 FROM SENSOR", EXEC_ERROR), "CITY") ||
                  strstr(t->err.msg, "VARCHAR"));
  assert_non_null(strstr(qerr(t, "SELECT * FROM SENSOR WHERE TEMP > 1 AND PM25", EXEC_ERROR),
                         "AND needs BOOLEAN"));
  /* constant folding reports errors at prepare, with the code the evaluation gives */
  assert_non_null(strstr(qerr(t, "SELECT 1 / 0", EXEC_CONSTRAINT), "division by zero"));
  assert_non_null(strstr(qerr(t, "SELECT 9223372036854775807 + 1", EXEC_CONSTRAINT), "overflow"));
  assert_string_equal(q(t, "SELECT 7 / 2, 7 % 3, -7 / 2, 1.5 * 2, 2 * 0.5e0"), "3|1|-3|3.0|1\n");
  assert_string_equal(q(t, "SELECT CAST('12' AS INTEGER) + 1, CAST(3.7 AS INTEGER)"), "13|4\n");
  tdb_close(t);
}

static void aggregates_and_order(void **state) {
  (void)state;
  tdb *t = setup();
  assert_non_null(strstr(qerr(t, "SELECT * FROM SENSOR WHERE MAX(TEMP) > 1", EXEC_ERROR),
                         "not allowed in WHERE"));
  assert_non_null(strstr(qerr(t, "SELECT COUNT(*) FROM SENSOR GROUP BY COUNT(*)", EXEC_ERROR),
                         "not allowed in GROUP BY"));
  assert_non_null(strstr(qerr(t, "SELECT MAX(MIN(TEMP)) FROM SENSOR", EXEC_ERROR), "nested"));
  assert_string_equal(qerr(t, "SELECT STATION, TEMP FROM SENSOR GROUP BY STATION", EXEC_ERROR),
                      "column \"TEMP\" must appear in GROUP BY or be used in an aggregate at "
                      "line 1, column 17");
  assert_non_null(strstr(qerr(t, "SELECT SUM(CITY) FROM SENSOR", EXEC_ERROR), "SUM"));
  assert_non_null(strstr(qerr(t, "SELECT TEMP FROM SENSOR ORDER BY 3", EXEC_ERROR),
                         "ORDER BY position 3"));
  assert_non_null(strstr(qerr(t, "SELECT TEMP FROM SENSOR HAVING TEMP > 1", EXEC_ERROR),
                         "HAVING"));
  assert_non_null(strstr(qerr(t, "SELECT DISTINCT CITY FROM SENSOR ORDER BY TEMP", EXEC_ERROR),
                         "DISTINCT"));
  assert_non_null(strstr(qerr(t, "SELECT TEMP FROM SENSOR LIMIT 'x'", EXEC_ERROR), "LIMIT"));
  /* group expressions may be used inside expressions of the select list */
  assert_string_equal(q(t, "SELECT UPPER(STATION), COUNT(*) * 10 FROM SENSOR GROUP BY "
                           "STATION"),
                      "DONGSI|20\n");
  assert_string_equal(q(t, "SELECT PM25 / 10 AS P, COUNT(*) FROM SENSOR GROUP BY PM25 / 10 "
                           "ORDER BY P"),
                      "8|1\n12|1\n");
  /* GROUP BY a select-list position or alias */
  assert_string_equal(q(t, "SELECT PM25 / 10 AS P, COUNT(*) FROM SENSOR GROUP BY P ORDER BY 1"),
                      "8|1\n12|1\n");
  assert_string_equal(q(t, "SELECT CITY, COUNT(*) FROM SENSOR GROUP BY 1"), "Beijing|2\n");
  assert_non_null(strstr(qerr(t, "SELECT CITY, COUNT(*) FROM SENSOR GROUP BY 2", EXEC_ERROR),
                         "aggregate is not allowed in GROUP BY"));
  assert_non_null(strstr(qerr(t, "SELECT CITY FROM SENSOR GROUP BY 5", EXEC_ERROR),
                         "GROUP BY position 5"));
  tdb_close(t);
}

static void upsert_binding(void **state) {
  (void)state;
  tdb *t = setup();
  assert_non_null(strstr(qerr(t, "UPSERT INTO SENSOR (STATION, TEMP) VALUES ('x', 1)",
                              EXEC_CONSTRAINT), "\"TS\""));
  assert_non_null(strstr(qerr(t, "UPSERT INTO SENSOR (STATION, TS) VALUES ('x')", EXEC_ERROR),
                         "1 value for 2 columns"));
  assert_non_null(strstr(qerr(t, "UPSERT INTO SENSOR (STATION, TS, STATION) VALUES (1, 2, 3)",
                              EXEC_ERROR), "twice"));
  assert_non_null(strstr(qerr(t, "UPSERT INTO SENSOR (STATION, TS) VALUES (TEMP, 1)",
                              EXEC_ERROR), "unknown column \"TEMP\""));
  assert_non_null(strstr(qerr(t, "UPSERT INTO SENSOR (STATION, TS) SELECT STATION FROM SENSOR",
                              EXEC_ERROR), "1 column for 2"));
  /* an out-of-range value is a constraint error naming the column */
  assert_non_null(strstr(qerr(t, "UPSERT INTO SENSOR (STATION, TS, PM25) VALUES ('x', "
                              "TIMESTAMP '2016-01-01 00:00:00', 99999999999)", EXEC_CONSTRAINT),
                         "PM25"));
  tdb_close(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(unknown_names), cmocka_unit_test(qualified_names),
      cmocka_unit_test(types),         cmocka_unit_test(aggregates_and_order),
      cmocka_unit_test(upsert_binding),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
