/*
** python/src/rowandb/_rowan.c: the C part of the rowandb Python module, a thin layer over
** include/rowan.h. It holds a database handle (Db) and prepared statements (Stmt), binds
** Python values as parameters, steps statements with the GIL released (so another thread
** can call Db.interrupt), turns result rows into tuples of Python values in one call per
** row (rowan_column_values), runs a statement over many parameter sets, and feeds the bulk
** load (rowan_bulk_add_values) from an iterable of rows.
**
** It does not implement PEP 249 itself: connections, cursors, transactions, description,
** the exception hierarchy and the optional numpy/pandas fetches are in __init__.py, which
** hands this module its exception classes (set_error_classes) so that errors are raised
** with the right class, Rowan's code, its name and the message.
**
** Types (docs/TYPES.md): BOOLEAN -> bool; the other integers -> int; FLOAT/DOUBLE -> float;
** DECIMAL -> decimal.Decimal; CHAR/VARCHAR -> str; VARBINARY -> bytes; DATE -> datetime.date;
** TIME -> datetime.time; TIMESTAMP -> naive datetime.datetime (microseconds kept: read as
** text, since the C getters give milliseconds); NULL -> None. Parameters the other way:
** None, bool, int, float, str, bytes-like, Decimal, date, time and datetime (an aware one
** converted to UTC, as TIMESTAMP has no time zone).
*/
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <datetime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rowan.h"

static PyObject *err_classes; /* dict: ROWAN_* code -> exception class (set_error_classes) */
static PyObject *err_default; /* class for a code not in the dict */
static PyObject *decimal_cls; /* decimal.Decimal */
static PyObject *integrity_cls; /* ROWAN_CONSTRAINT for a NOT NULL or a repeated key */

/* Raise the exception of `code` with the connection's message; attributes code, errname
** and offset (the byte offset in the SQL, -1 when none). Always returns NULL. */
static PyObject *raise_code(rowan_db *db, int code, const char *msg) {
  PyObject *key = PyLong_FromLong(code), *cls = NULL;
  if (!key) return NULL;
  if (err_classes) cls = PyDict_GetItemWithError(err_classes, key);
  Py_DECREF(key);
  if (!cls && PyErr_Occurred()) return NULL;
  if (!cls) cls = err_default ? err_default : PyExc_RuntimeError;
  if (!msg) msg = db ? rowan_errmsg(db) : rowan_errstr(code);
  /* PEP 249 splits what ROWAN_CONSTRAINT covers: a value that does not fit its column is
     a DataError (the class registered for the code); a NULL in a NOT NULL column, a
     missing primary key value or a key repeated where it must not be an IntegrityError */
  if (code == ROWAN_CONSTRAINT && integrity_cls &&
      (strstr(msg, "NULL") || strstr(msg, "repeat") || strstr(msg, "unique") ||
       strstr(msg, "primary key")))
    cls = integrity_cls;
  PyObject *exc = PyObject_CallFunction(cls, "s", msg);
  if (!exc) return NULL;
  PyObject *c = PyLong_FromLong(code);
  PyObject *n = PyUnicode_FromString(rowan_errstr(code));
  PyObject *o = PyLong_FromLong(db ? rowan_error_offset(db) : -1);
  if (c && n && o) {
    PyObject_SetAttrString(exc, "code", c);
    PyObject_SetAttrString(exc, "errname", n);
    PyObject_SetAttrString(exc, "offset", o);
  }
  Py_XDECREF(c);
  Py_XDECREF(n);
  Py_XDECREF(o);
  PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
  Py_DECREF(exc);
  return NULL;
}

/* ---- Db ---------------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  rowan_db *db;
  int nstmts; /* open Stmt objects: close waits for them to be finalized */
} DbObject;

typedef struct {
  PyObject_HEAD
  DbObject *dbo;     /* strong reference: the statement keeps its handle alive */
  rowan_stmt *st;
  int ncol;
  int nparam;
  int row;           /* the last step returned ROWAN_ROW */
  char *kind;        /* per column: 'b' BOOLEAN, 'd' DECIMAL, 'D' DATE, 'T' TIME, 0 other */
  rowan_value *vals; /* ncol values of the current row */
} StmtObject;

static PyTypeObject DbType, StmtType;

static int db_open_check(DbObject *self) {
  if (self->db) return 1;
  raise_code(NULL, ROWAN_MISUSE, "the connection is closed");
  return 0;
}

static void Db_dealloc(DbObject *self) {
  if (self->db) rowan_close(self->db);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Db_close(DbObject *self, PyObject *unused) {
  (void)unused;
  if (!self->db) Py_RETURN_NONE;
  int rc = rowan_close(self->db);
  if (rc == ROWAN_MISUSE) return raise_code(self->db, rc, NULL); /* a statement is open */
  self->db = NULL;
  if (rc) return raise_code(NULL, rc, "closing the database failed (the log keeps every commit)");
  Py_RETURN_NONE;
}

static PyObject *Db_exec(DbObject *self, PyObject *args) {
  const char *sql;
  if (!PyArg_ParseTuple(args, "s", &sql) || !db_open_check(self)) return NULL;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = rowan_exec(self->db, sql, NULL, NULL);
  Py_END_ALLOW_THREADS
  if (rc) return raise_code(self->db, rc, NULL);
  Py_RETURN_NONE;
}

static PyObject *Db_changes(DbObject *self, PyObject *unused) {
  (void)unused;
  if (!db_open_check(self)) return NULL;
  return PyLong_FromLongLong(rowan_changes(self->db));
}

/* set_as_of(ms): rowan_set_as_of (Phoenix's CurrentSCN); 0 = the present. */
static PyObject *Db_set_as_of(DbObject *self, PyObject *args) {
  long long ms;
  if (!PyArg_ParseTuple(args, "L", &ms) || !db_open_check(self)) return NULL;
  int rc = rowan_set_as_of(self->db, (int64_t)ms);
  if (rc) return raise_code(self->db, rc, NULL);
  Py_RETURN_NONE;
}

/* families(table) -> [dict]: rowan_table_families (no block index walked). */
static PyObject *Db_families(DbObject *self, PyObject *args) {
  const char *table;
  if (!PyArg_ParseTuple(args, "s", &table) || !db_open_check(self)) return NULL;
  rowan_layout *l = NULL;
  int rc = rowan_table_families(self->db, table, &l);
  if (rc) return raise_code(self->db, rc, NULL);
  PyObject *out = PyList_New(0);
  for (int i = 0; out && i < l->n_families; i++) {
    const rowan_layout_family *f = &l->families[i];
    PyObject *d = Py_BuildValue(
        "{s:s,s:K,s:K,s:K,s:K,s:K,s:K,s:K}", "name", f->name, "memstore_bytes",
        (unsigned long long)f->memstore_bytes, "memstore_cells",
        (unsigned long long)f->memstore_cells, "store_files", (unsigned long long)f->store_files,
        "blocks", (unsigned long long)f->blocks, "bytes", (unsigned long long)f->bytes,
        "index_bytes", (unsigned long long)f->index_bytes, "paged_files",
        (unsigned long long)f->paged_files);
    if (!d || PyList_Append(out, d)) Py_CLEAR(out);
    Py_XDECREF(d);
  }
  rowan_layout_free(l);
  return out;
}

/* regions(table) -> [dict]: the regions of rowan_table_families, in key order, each
** {"start_key": bytes or None (the first region), "start_key_text": str}. */
static PyObject *Db_regions(DbObject *self, PyObject *args) {
  const char *table;
  if (!PyArg_ParseTuple(args, "s", &table) || !db_open_check(self)) return NULL;
  rowan_layout *l = NULL;
  int rc = rowan_table_families(self->db, table, &l);
  if (rc) return raise_code(self->db, rc, NULL);
  PyObject *out = PyList_New(0);
  for (int i = 0; out && i < l->n_regions; i++) {
    const rowan_layout_region *r = &l->regions[i];
    PyObject *key = r->start_key ? PyBytes_FromStringAndSize(r->start_key, r->start_key_len)
                                 : Py_NewRef(Py_None);
    PyObject *d = key ? Py_BuildValue("{s:O,s:s}", "start_key", key, "start_key_text",
                                      r->start_key_text) : NULL;
    Py_XDECREF(key);
    if (!d || PyList_Append(out, d)) Py_CLEAR(out);
    Py_XDECREF(d);
  }
  rowan_layout_free(l);
  return out;
}

/* Callable from any thread: only stores to the connection's atomic flag. */
static PyObject *Db_interrupt(DbObject *self, PyObject *unused) {
  (void)unused;
  if (self->db) rowan_interrupt(self->db);
  Py_RETURN_NONE;
}

/* prepare(sql) -> (Stmt or None, tail): tail is the text after the first statement. */
static PyObject *Db_prepare(DbObject *self, PyObject *args) {
  const char *sql;
  Py_ssize_t n;
  if (!PyArg_ParseTuple(args, "s#", &sql, &n) || !db_open_check(self)) return NULL;
  if (n > INT32_MAX) return raise_code(NULL, ROWAN_TOOBIG, "SQL text over 2 GiB");
  rowan_stmt *st = NULL;
  const char *tail = NULL;
  int rc = rowan_prepare(self->db, sql, (int)n, &st, &tail);
  if (rc) return raise_code(self->db, rc, NULL);
  PyObject *rest = PyUnicode_FromStringAndSize(tail ? tail : sql + n, tail ? sql + n - tail : 0);
  if (!rest) {
    rowan_finalize(st);
    return NULL;
  }
  if (!st) return Py_BuildValue("(ON)", Py_None, rest);
  StmtObject *so = PyObject_New(StmtObject, &StmtType);
  if (!so) {
    rowan_finalize(st);
    Py_DECREF(rest);
    return NULL;
  }
  so->st = st;
  so->dbo = self;
  Py_INCREF(self);
  self->nstmts++;
  so->row = 0;
  so->ncol = rowan_column_count(st);
  so->nparam = rowan_bind_parameter_count(st);
  so->kind = PyMem_Calloc((size_t)so->ncol + 1, 1);
  so->vals = PyMem_Calloc((size_t)so->ncol + 1, sizeof(rowan_value));
  if (!so->kind || !so->vals) {
    Py_DECREF(so);
    Py_DECREF(rest);
    return PyErr_NoMemory();
  }
  for (int i = 0; i < so->ncol; i++) {
    const char *t = rowan_column_decltype(st, i);
    if (!t) continue;
    if (!strcmp(t, "BOOLEAN")) so->kind[i] = 'b';
    else if (!strncmp(t, "DECIMAL", 7)) so->kind[i] = 'd';
    else if (!strcmp(t, "DATE")) so->kind[i] = 'D';
    else if (!strcmp(t, "TIME")) so->kind[i] = 'T';
  }
  return Py_BuildValue("(NN)", (PyObject *)so, rest);
}

/* ---- parameters ------------------------------------------------------------------- */

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = (unsigned)(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int *y, int *m, int *d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = (unsigned)(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = (int)(doy - (153 * mp + 2) / 5 + 1);
  *m = (int)(mp < 10 ? mp + 3 : mp - 9);
  *y = (int)(yoe + era * 400 + (*m <= 2));
}

/* Bind value v to parameter i (1-based). 0 on success; -1 with an exception set. */
static int bind_one(StmtObject *so, int i, PyObject *v) {
  rowan_stmt *st = so->st;
  int rc;
  char buf[64];
  if (v == Py_None) {
    rc = rowan_bind_null(st, i);
  } else if (PyBool_Check(v)) {
    /* a text literal: BOOLEAN takes TRUE/FALSE, and refuses an integer */
    rc = rowan_bind_text(st, i, v == Py_True ? "TRUE" : "FALSE", -1);
  } else if (PyLong_CheckExact(v) || PyLong_Check(v)) {
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow) {
      /* past BIGINT: as text, so a DECIMAL column can take it and others say why not */
      PyObject *s = PyObject_Str(v);
      if (!s) return -1;
      Py_ssize_t n;
      const char *p = PyUnicode_AsUTF8AndSize(s, &n);
      rc = p ? rowan_bind_text(st, i, p, (int)n) : -1;
      Py_DECREF(s);
      if (rc < 0) return -1;
    } else {
      if (x == -1 && PyErr_Occurred()) return -1;
      rc = rowan_bind_int64(st, i, x);
    }
  } else if (PyFloat_Check(v)) {
    rc = rowan_bind_double(st, i, PyFloat_AS_DOUBLE(v));
  } else if (PyUnicode_Check(v)) {
    Py_ssize_t n;
    const char *p = PyUnicode_AsUTF8AndSize(v, &n);
    if (!p) return -1;
    if (n > INT32_MAX) {
      raise_code(NULL, ROWAN_TOOBIG, "a text parameter over 2 GiB");
      return -1;
    }
    rc = rowan_bind_text(st, i, p, (int)n);
  } else if (PyBytes_Check(v)) {
    rc = rowan_bind_blob(st, i, PyBytes_AS_STRING(v), (int)PyBytes_GET_SIZE(v));
  } else if (PyDateTime_Check(v)) {
    PyObject *u = NULL;
    if (((PyDateTime_DateTime *)v)->hastzinfo && ((PyDateTime_DateTime *)v)->tzinfo != Py_None) {
      /* aware: to UTC, then naive (TIMESTAMP has no time zone) */
      PyObject *utc = PyDateTime_TimeZone_UTC;
      u = PyObject_CallMethod(v, "astimezone", "O", utc);
      if (!u) return -1;
      v = u;
    }
    snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d.%06d", PyDateTime_GET_YEAR(v),
             PyDateTime_GET_MONTH(v), PyDateTime_GET_DAY(v), PyDateTime_DATE_GET_HOUR(v),
             PyDateTime_DATE_GET_MINUTE(v), PyDateTime_DATE_GET_SECOND(v),
             PyDateTime_DATE_GET_MICROSECOND(v));
    Py_XDECREF(u);
    rc = rowan_bind_text(st, i, buf, -1);
  } else if (PyDate_Check(v)) {
    snprintf(buf, sizeof buf, "%04d-%02d-%02d", PyDateTime_GET_YEAR(v), PyDateTime_GET_MONTH(v),
             PyDateTime_GET_DAY(v));
    rc = rowan_bind_text(st, i, buf, -1);
  } else if (PyTime_Check(v)) {
    snprintf(buf, sizeof buf, "%02d:%02d:%02d.%06d", PyDateTime_TIME_GET_HOUR(v),
             PyDateTime_TIME_GET_MINUTE(v), PyDateTime_TIME_GET_SECOND(v),
             PyDateTime_TIME_GET_MICROSECOND(v));
    rc = rowan_bind_text(st, i, buf, -1);
  } else if (decimal_cls && PyObject_TypeCheck(v, (PyTypeObject *)decimal_cls)) {
    PyObject *s = PyObject_CallMethod(v, "__format__", "s", "f"); /* no exponent */
    if (!s) return -1;
    Py_ssize_t n;
    const char *p = PyUnicode_AsUTF8AndSize(s, &n);
    rc = p ? rowan_bind_text(st, i, p, (int)n) : -1;
    Py_DECREF(s);
    if (rc < 0) return -1;
  } else if (PyObject_CheckBuffer(v)) {
    Py_buffer b;
    if (PyObject_GetBuffer(v, &b, PyBUF_SIMPLE) < 0) return -1;
    rc = rowan_bind_blob(st, i, b.buf, (int)b.len);
    PyBuffer_Release(&b);
  } else {
    snprintf(buf, sizeof buf, "parameter %d: type %.30s is not supported", i,
             Py_TYPE(v)->tp_name);
    raise_code(NULL, ROWAN_MISUSE, buf);
    return -1;
  }
  if (rc) {
    raise_code(so->dbo->db, rc, NULL);
    return -1;
  }
  return 0;
}

/* Bind a sequence (or None: no parameters). */
static int bind_all(StmtObject *so, PyObject *params) {
  if (params == Py_None || params == NULL) {
    if (so->nparam == 0) return 0;
    char m[96];
    snprintf(m, sizeof m, "the statement has %d parameters, none were given", so->nparam);
    raise_code(NULL, ROWAN_RANGE, m);
    return -1;
  }
  PyObject *seq = PySequence_Fast(params, "parameters must be a sequence (qmark style)");
  if (!seq) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n != so->nparam) {
    char m[96];
    snprintf(m, sizeof m, "the statement has %d parameters, %zd were given", so->nparam, n);
    raise_code(NULL, ROWAN_RANGE, m);
    Py_DECREF(seq);
    return -1;
  }
  PyObject **items = PySequence_Fast_ITEMS(seq);
  for (Py_ssize_t i = 0; i < n; i++)
    if (bind_one(so, (int)i + 1, items[i]) < 0) {
      Py_DECREF(seq);
      return -1;
    }
  Py_DECREF(seq);
  return 0;
}

/* ---- results ---------------------------------------------------------------------- */

static int stmt_live(StmtObject *so) {
  if (so->st && so->dbo->db) return 1;
  raise_code(NULL, ROWAN_MISUSE, "the statement is finalized or its connection closed");
  return 0;
}

/* Step once. 1: a row; 0: done; -1: error (raised; the statement is reset). */
static int step(StmtObject *so) {
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = rowan_step(so->st);
  Py_END_ALLOW_THREADS
  if (rc == ROWAN_ROW) return so->row = 1;
  so->row = 0;
  if (rc == ROWAN_DONE) return 0;
  raise_code(so->dbo->db, rc, NULL);
  rowan_reset(so->st);
  return -1;
}

/* "HH:MM:SS[.ffffff]" or "YYYY-MM-DD HH:MM:SS[.ffffff]" pieces. */
static int parse_hms(const char *p, int n, int *h, int *mi, int *s, int *us) {
  if (n < 8 || p[2] != ':' || p[5] != ':') return -1;
  *h = (p[0] - '0') * 10 + (p[1] - '0');
  *mi = (p[3] - '0') * 10 + (p[4] - '0');
  *s = (p[6] - '0') * 10 + (p[7] - '0');
  *us = 0;
  if (n > 9 && p[8] == '.') {
    int k = 0, f = 0;
    for (int j = 9; j < n && k < 6; j++, k++) f = f * 10 + (p[j] - '0');
    for (; k < 6; k++) f *= 10;
    *us = f;
  }
  return 0;
}

static PyObject *value_obj(StmtObject *so, int i, const rowan_value *v) {
  switch (v->type) {
  case ROWAN_NULL:
    Py_RETURN_NONE;
  case ROWAN_INTEGER:
    if (so->kind[i] == 'b') return PyBool_FromLong(v->i != 0);
    return PyLong_FromLongLong(v->i);
  case ROWAN_FLOAT:
    return PyFloat_FromDouble(v->d);
  case ROWAN_BLOB:
    return PyBytes_FromStringAndSize(v->p, v->bytes);
  case ROWAN_TIMESTAMP: {
    const char *t = rowan_column_text(so->st, i);
    int64_t ms = v->i, days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
    int y, m, d, h, mi, s, us;
    civil_from_days(days, &y, &m, &d);
    const char *sp = t ? strchr(t, ' ') : NULL;
    if (!sp || parse_hms(sp + 1, (int)strlen(sp + 1), &h, &mi, &s, &us) < 0) {
      int64_t r = ms - days * 86400000;
      h = (int)(r / 3600000);
      mi = (int)(r / 60000 % 60);
      s = (int)(r / 1000 % 60);
      us = (int)(r % 1000) * 1000;
    }
    return PyDateTimeAPI->DateTime_FromDateAndTime(y, m, d, h, mi, s, us, Py_None,
                                                   PyDateTimeAPI->DateTimeType);
  }
  case ROWAN_TEXT:
    if (so->kind[i] == 'D') {
      int64_t ms = v->i, days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
      int y, m, d;
      civil_from_days(days, &y, &m, &d);
      return PyDate_FromDate(y, m, d);
    }
    if (so->kind[i] == 'T' && v->p) {
      int h, mi, s, us;
      if (parse_hms(v->p, v->bytes, &h, &mi, &s, &us) == 0) return PyTime_FromTime(h, mi, s, us);
    }
    if (!v->p) return PyErr_NoMemory();
    if (so->kind[i] == 'd' && decimal_cls) {
      PyObject *s = PyUnicode_FromStringAndSize(v->p, v->bytes);
      if (!s) return NULL;
      PyObject *r = PyObject_CallOneArg(decimal_cls, s);
      Py_DECREF(s);
      return r;
    }
    return PyUnicode_DecodeUTF8(v->p, v->bytes, "replace");
  default:
    Py_RETURN_NONE;
  }
}

/* The current row as a tuple. */
static PyObject *row_tuple(StmtObject *so) {
  int rc = rowan_column_values(so->st, 0, so->ncol, so->vals);
  if (rc && rc != ROWAN_NOMEM) return raise_code(so->dbo->db, rc, NULL);
  PyObject *t = PyTuple_New(so->ncol);
  if (!t) return NULL;
  for (int i = 0; i < so->ncol; i++) {
    PyObject *o = value_obj(so, i, &so->vals[i]);
    if (!o) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SET_ITEM(t, i, o);
  }
  return t;
}

static void Stmt_dealloc(StmtObject *self) {
  if (self->st) rowan_finalize(self->st);
  if (self->dbo) {
    self->dbo->nstmts--;
    Py_DECREF(self->dbo);
  }
  PyMem_Free(self->kind);
  PyMem_Free(self->vals);
  PyObject_Free(self);
}

static PyObject *Stmt_finalize(StmtObject *self, PyObject *unused) {
  (void)unused;
  if (self->st) rowan_finalize(self->st);
  self->st = NULL;
  self->row = 0;
  Py_RETURN_NONE;
}

/* execute(params) -> True when a first row is ready (a query), False when done. */
static PyObject *Stmt_execute(StmtObject *self, PyObject *params) {
  if (!stmt_live(self)) return NULL;
  rowan_reset(self->st);
  self->row = 0;
  if (bind_all(self, params) < 0) return NULL;
  int r = step(self);
  if (r < 0) return NULL;
  return PyBool_FromLong(r);
}

/* fetch(n) -> list of up to n rows (n < 0: all): the current row first, then steps. */
static PyObject *Stmt_fetch(StmtObject *self, PyObject *arg) {
  Py_ssize_t n = PyLong_AsSsize_t(arg);
  if (n == -1 && PyErr_Occurred()) return NULL;
  PyObject *out = PyList_New(0);
  if (!out) return NULL;
  if (!self->st || !self->row) return out;
  if (!stmt_live(self)) {
    Py_DECREF(out);
    return NULL;
  }
  for (Py_ssize_t got = 0; self->row && (n < 0 || got < n); got++) {
    PyObject *t = row_tuple(self);
    if (!t || PyList_Append(out, t) < 0) {
      Py_XDECREF(t);
      Py_DECREF(out);
      return NULL;
    }
    Py_DECREF(t);
    if (step(self) < 0) {
      Py_DECREF(out);
      return NULL;
    }
  }
  return out;
}

/* columns() -> [(name, decltype or None, class of the current row's value)] */
static PyObject *Stmt_columns(StmtObject *self, PyObject *unused) {
  (void)unused;
  if (!stmt_live(self)) return NULL;
  PyObject *l = PyList_New(self->ncol);
  if (!l) return NULL;
  for (int i = 0; i < self->ncol; i++) {
    const char *t = rowan_column_decltype(self->st, i);
    PyObject *e = Py_BuildValue("(sz)", rowan_column_name(self->st, i), t);
    if (!e) {
      Py_DECREF(l);
      return NULL;
    }
    PyList_SET_ITEM(l, i, e);
  }
  return l;
}

/* run_many(iterable of parameter sequences) -> rows changed in all. Each set is bound and
** run to its end (result rows, if any, are dropped). */
static PyObject *Stmt_run_many(StmtObject *self, PyObject *it_src) {
  if (!stmt_live(self)) return NULL;
  PyObject *it = PyObject_GetIter(it_src);
  if (!it) return NULL;
  long long total = 0;
  PyObject *params;
  while ((params = PyIter_Next(it))) {
    rowan_reset(self->st);
    int r = bind_all(self, params);
    Py_DECREF(params);
    while (r == 0 && (r = step(self)) == 1) r = 0;
    if (r < 0) {
      Py_DECREF(it);
      return NULL;
    }
    total += rowan_changes(self->dbo->db);
  }
  Py_DECREF(it);
  if (PyErr_Occurred()) return NULL;
  return PyLong_FromLongLong(total);
}

static PyObject *Stmt_get_nparam(StmtObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(self->nparam);
}

static PyObject *Stmt_get_ncol(StmtObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(self->ncol);
}

/* ---- bulk load -------------------------------------------------------------------- */

/* v as the typed value rowan_bulk_add_values reads (converted there to the column's type
** as a bound parameter would be): numbers as numbers, strings and bytes by pointer, the
** rest as their literal text (in buf, or in *hold, a string object kept until the row is
** added). 0, or -1 with an exception set. */
static int bulk_value(PyObject *v, rowan_value *out, PyObject **hold, char *buf, size_t cap) {
  *hold = NULL;
  memset(out, 0, sizeof *out);
  out->type = ROWAN_TEXT;
  if (v == Py_None) {
    out->type = ROWAN_NULL;
    return 0;
  }
  if (PyFloat_Check(v)) {
    out->type = ROWAN_FLOAT;
    out->d = PyFloat_AS_DOUBLE(v);
    return 0;
  }
  if (PyUnicode_Check(v)) {
    Py_ssize_t len;
    out->p = PyUnicode_AsUTF8AndSize(v, &len);
    out->bytes = (int)len;
    return out->p ? 0 : -1;
  }
  if (PyBool_Check(v)) {
    out->p = v == Py_True ? "TRUE" : "FALSE";
    out->bytes = (int)strlen(out->p);
    return 0;
  }
  if (PyLong_Check(v)) {
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (!overflow) {
      if (x == -1 && PyErr_Occurred()) return -1;
      out->type = ROWAN_INTEGER;
      out->i = x;
      return 0;
    }
  } else if (PyBytes_Check(v)) {
    out->type = ROWAN_BLOB;
    out->p = PyBytes_AS_STRING(v);
    out->bytes = (int)PyBytes_GET_SIZE(v);
    return 0;
  } else if (PyDateTime_Check(v) && !(((PyDateTime_DateTime *)v)->hastzinfo &&
                                      ((PyDateTime_DateTime *)v)->tzinfo != Py_None)) {
    int us = PyDateTime_DATE_GET_MICROSECOND(v);
    if (us % 1000 == 0) { /* whole milliseconds: the number itself */
      int64_t days = days_from_civil(PyDateTime_GET_YEAR(v), (unsigned)PyDateTime_GET_MONTH(v),
                                     (unsigned)PyDateTime_GET_DAY(v));
      out->type = ROWAN_TIMESTAMP;
      out->i = days * 86400000 + PyDateTime_DATE_GET_HOUR(v) * 3600000LL +
               PyDateTime_DATE_GET_MINUTE(v) * 60000LL + PyDateTime_DATE_GET_SECOND(v) * 1000LL +
               us / 1000;
      return 0;
    }
    out->bytes = snprintf(buf, cap, "%04d-%02d-%02d %02d:%02d:%02d.%06d", PyDateTime_GET_YEAR(v),
                          PyDateTime_GET_MONTH(v), PyDateTime_GET_DAY(v),
                          PyDateTime_DATE_GET_HOUR(v), PyDateTime_DATE_GET_MINUTE(v),
                          PyDateTime_DATE_GET_SECOND(v), us);
    out->p = buf;
    return 0;
  } else if (PyByteArray_Check(v) || PyMemoryView_Check(v)) {
    PyObject *b = PyBytes_FromObject(v);
    if (!b) return -1;
    *hold = b;
    out->type = ROWAN_BLOB;
    out->p = PyBytes_AS_STRING(b);
    out->bytes = (int)PyBytes_GET_SIZE(b);
    return 0;
  }
  /* Decimal, date, time, an aware datetime, an int past BIGINT: their literal text */
  PyObject *s;
  if (PyDateTime_Check(v)) {
    PyObject *u = PyObject_CallMethod(v, "astimezone", "O", PyDateTime_TimeZone_UTC);
    if (!u) return -1;
    s = PyObject_CallMethod(u, "strftime", "s", "%Y-%m-%d %H:%M:%S.%f");
    Py_DECREF(u);
  } else if (decimal_cls && PyObject_TypeCheck(v, (PyTypeObject *)decimal_cls)) {
    s = PyObject_CallMethod(v, "__format__", "s", "f");
  } else if (PyDate_Check(v) || PyTime_Check(v) || PyLong_Check(v)) {
    s = PyObject_Str(v);
  } else {
    snprintf(buf, cap, "type %.40s is not supported", Py_TYPE(v)->tp_name);
    raise_code(NULL, ROWAN_MISUSE, buf);
    return -1;
  }
  if (!s) return -1;
  Py_ssize_t len;
  out->p = PyUnicode_AsUTF8AndSize(s, &len);
  out->bytes = (int)len;
  *hold = s;
  return out->p ? 0 : -1;
}

/* bulk_load(table, columns, rows) -> rows loaded. All of them or none (the load commits at
** the end); a row Rowan refuses raises with its message and nothing is committed. None,
** before any row is read, when rowan_bulk_begin refuses the load (ROWAN_ERROR: a table with
** an index holding rows, a key column not named...; ROWAN_MISUSE: inside a transaction):
** the caller then runs its UPSERT row by row. */
static PyObject *Db_bulk_load(DbObject *self, PyObject *args) {
  const char *table;
  PyObject *cols, *rows;
  if (!PyArg_ParseTuple(args, "sOO", &table, &cols, &rows) || !db_open_check(self)) return NULL;
  PyObject *cseq = PySequence_Fast(cols, "columns must be a sequence of names");
  if (!cseq) return NULL;
  int nc = (int)PySequence_Fast_GET_SIZE(cseq);
  const char **names = PyMem_Calloc((size_t)nc + 1, sizeof *names);
  rowan_value *vals = PyMem_Calloc((size_t)nc + 1, sizeof *vals);
  PyObject **holds = PyMem_Calloc((size_t)nc + 1, sizeof *holds);
  char (*bufs)[64] = PyMem_Calloc((size_t)nc + 1, 64);
  PyObject *it = NULL, *ret = NULL;
  rowan_bulk *bulk = NULL;
  long long count = 0;
  if (!names || !vals || !holds || !bufs) {
    PyErr_NoMemory();
    goto out;
  }
  for (int i = 0; i < nc; i++)
    if (!(names[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(cseq, i)))) goto out;
  int rc = rowan_bulk_begin(self->db, table, nc, names, &bulk);
  if (rc == ROWAN_ERROR || rc == ROWAN_MISUSE) { /* not a load this path takes: no row read */
    ret = Py_NewRef(Py_None);
    goto out;
  }
  if (rc) {
    raise_code(self->db, rc, NULL);
    goto out;
  }
  if (!(it = PyObject_GetIter(rows))) goto out;
  PyObject *row;
  while ((row = PyIter_Next(it))) {
    PyObject *rs = PySequence_Fast(row, "each row must be a sequence");
    Py_DECREF(row);
    if (!rs) goto out;
    if (PySequence_Fast_GET_SIZE(rs) != nc) {
      char m[128];
      snprintf(m, sizeof m, "row %lld has %zd values, %d columns were named", count + 1,
               PySequence_Fast_GET_SIZE(rs), nc);
      raise_code(NULL, ROWAN_RANGE, m);
      Py_DECREF(rs);
      goto out;
    }
    int bad = 0;
    for (int i = 0; i < nc && !bad; i++)
      bad = bulk_value(PySequence_Fast_GET_ITEM(rs, i), &vals[i], &holds[i], bufs[i], 64) < 0;
    if (!bad) {
      rc = rowan_bulk_add_values(bulk, vals);
      if (rc) {
        raise_code(self->db, rc, NULL);
        bad = 1;
      }
    }
    for (int i = 0; i < nc; i++) Py_CLEAR(holds[i]);
    Py_DECREF(rs);
    if (bad) goto out;
    count++;
  }
  if (PyErr_Occurred()) goto out;
  rowan_bulk *b = bulk;
  bulk = NULL;
  Py_BEGIN_ALLOW_THREADS
  rc = rowan_bulk_commit(b);
  Py_END_ALLOW_THREADS
  if (rc) {
    raise_code(self->db, rc, NULL);
    goto out;
  }
  ret = PyLong_FromLongLong(count);
out:
  if (bulk) rowan_bulk_abort(bulk);
  Py_XDECREF(it);
  Py_DECREF(cseq);
  PyMem_Free(names);
  PyMem_Free(vals);
  PyMem_Free(holds);
  PyMem_Free(bufs);
  return ret;
}

/* ---- module ----------------------------------------------------------------------- */

static PyMethodDef Db_methods[] = {
    {"close", (PyCFunction)Db_close, METH_NOARGS, "close the database (statements first)"},
    {"exec", (PyCFunction)Db_exec, METH_VARARGS, "run SQL text for its effect"},
    {"prepare", (PyCFunction)Db_prepare, METH_VARARGS, "prepare(sql) -> (Stmt or None, tail)"},
    {"changes", (PyCFunction)Db_changes, METH_NOARGS, "rows changed by the last write"},
    {"interrupt", (PyCFunction)Db_interrupt, METH_NOARGS, "interrupt (any thread)"},
    {"set_as_of", (PyCFunction)Db_set_as_of, METH_VARARGS, "set_as_of(ms): read the past"},
    {"bulk_load", (PyCFunction)Db_bulk_load, METH_VARARGS, "bulk_load(table, cols, rows)"},
    {"families", (PyCFunction)Db_families, METH_VARARGS, "families(table) -> [dict]"},
    {"regions", (PyCFunction)Db_regions, METH_VARARGS, "regions(table) -> [dict]"},
    {NULL, NULL, 0, NULL}};

static PyMethodDef Stmt_methods[] = {
    {"execute", (PyCFunction)Stmt_execute, METH_O, "bind, run to the first row"},
    {"fetch", (PyCFunction)Stmt_fetch, METH_O, "fetch(n) -> list of rows"},
    {"columns", (PyCFunction)Stmt_columns, METH_NOARGS, "[(name, decltype)]"},
    {"run_many", (PyCFunction)Stmt_run_many, METH_O, "run once per parameter set"},
    {"finalize", (PyCFunction)Stmt_finalize, METH_NOARGS, "free the statement"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Stmt_getset[] = {
    {"param_count", (getter)Stmt_get_nparam, NULL, "parameters", NULL},
    {"column_count", (getter)Stmt_get_ncol, NULL, "result columns", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject DbType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rowandb._rowan.Db",
    .tp_basicsize = sizeof(DbObject),
    .tp_dealloc = (destructor)Db_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_methods = Db_methods,
};

static PyTypeObject StmtType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rowandb._rowan.Stmt",
    .tp_basicsize = sizeof(StmtObject),
    .tp_dealloc = (destructor)Stmt_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_methods = Stmt_methods,
    .tp_getset = Stmt_getset,
};

/* open(path, read_only, create, sync_mode, cache_bytes, join_memory_bytes,
** index_memory_bytes (-1: no bound)) -> Db */
static PyObject *mod_open(PyObject *m, PyObject *args) {
  (void)m;
  const char *path;
  int ro = 0, create = 1, sync = ROWAN_SYNC_FULL;
  Py_ssize_t cache = 0, join_memory = 0, index_memory = 0;
  if (!PyArg_ParseTuple(args, "s|ppinnn", &path, &ro, &create, &sync, &cache, &join_memory,
                        &index_memory))
    return NULL;
  rowan_options o;
  rowan_options_init(&o);
  o.read_only = ro;
  o.create_if_missing = create;
  o.sync_mode = sync;
  o.block_cache_size = cache > 0 ? (size_t)cache : 0;
  o.join_memory = join_memory > 0 ? (size_t)join_memory : 0;
  o.index_memory = index_memory < 0 ? SIZE_MAX : (size_t)index_memory;
  rowan_db *db = NULL;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = rowan_open(path, &o, &db);
  Py_END_ALLOW_THREADS
  if (rc) {
    raise_code(db, rc, db ? NULL : rowan_errstr(rc));
    if (db) rowan_close(db);
    return NULL;
  }
  DbObject *d = PyObject_New(DbObject, &DbType);
  if (!d) {
    rowan_close(db);
    return NULL;
  }
  d->db = db;
  d->nstmts = 0;
  return (PyObject *)d;
}

static PyObject *mod_set_error_classes(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *d, *def, *dec, *integ;
  if (!PyArg_ParseTuple(args, "O!OOO", &PyDict_Type, &d, &def, &dec, &integ)) return NULL;
  Py_XSETREF(integrity_cls, Py_NewRef(integ));
  Py_XSETREF(err_classes, Py_NewRef(d));
  Py_XSETREF(err_default, Py_NewRef(def));
  Py_XSETREF(decimal_cls, Py_NewRef(dec));
  Py_RETURN_NONE;
}

static PyObject *mod_libversion(PyObject *m, PyObject *unused) {
  (void)m;
  (void)unused;
  return PyUnicode_FromString(rowan_libversion());
}

static PyMethodDef mod_methods[] = {
    {"open", mod_open, METH_VARARGS, "open(path, read_only, create, sync, cache) -> Db"},
    {"set_error_classes", mod_set_error_classes, METH_VARARGS, "internal"},
    {"libversion", mod_libversion, METH_NOARGS, "librowan's version"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_rowan",
                                    "C part of rowandb (see __init__.py)", -1, mod_methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__rowan(void) {
  PyDateTime_IMPORT;
  if (!PyDateTimeAPI) return NULL;
  if (PyType_Ready(&DbType) < 0 || PyType_Ready(&StmtType) < 0) return NULL;
  PyObject *m = PyModule_Create(&moddef);
  if (!m) return NULL;
  PyModule_AddIntConstant(m, "SYNC_FULL", ROWAN_SYNC_FULL);
  PyModule_AddIntConstant(m, "SYNC_NORMAL", ROWAN_SYNC_NORMAL);
  PyModule_AddIntConstant(m, "SYNC_OFF", ROWAN_SYNC_OFF);
  return m;
}
