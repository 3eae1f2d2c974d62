/*
** cli/shell.c: the `rowan` shell's input loop and statement runner.
**
** What it does: reads input (a terminal through libedit with prompts and history, a file,
** stdin, or one command-line argument), tells dot commands from SQL (a line starting with
** '.' between statements), gathers SQL lines until a statement ends with ';' outside quotes
** and comments, runs each statement with rowan_prepare / rowan_step (the tail pointer
** separates statements), and prints after each: the rows (output.c), an error with the
** statement line and a caret under the error position, the timer (.timer), the scan
** metrics (.stats) and the teaching note (dot_schema.c).
**
** What it does not: format rows (output.c), run dot commands (dot.c), parse the command
** line (main.c). The SQL scanner here only finds statement ends; the engine parses.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#ifndef CLI_NO_LIBEDIT
#include <editline/readline.h>
#else
/* Without libedit: plain prompts on stdout and lines from stdin, no history. */
static char *readline(const char *prompt) {
  char *line = NULL;
  size_t cap = 0;
  fputs(prompt, stdout);
  fflush(stdout);
  ssize_t n = getline(&line, &cap, stdin);
  if (n < 0) { free(line); return NULL; }
  if (n > 0 && line[n - 1] == '\n') line[n - 1] = 0;
  return line;
}
static void add_history(const char *line) { (void)line; }
static int read_history(const char *path) { (void)path; return 0; }
static int write_history(const char *path) { (void)path; return 0; }
static void stifle_history(int n) { (void)n; }
#endif

#include "cli/plot.h"
#include "cli/shell.h"

void cli_shell_init(cli_shell *sh, rowan_db *db, const char *dbdir) {
  memset(sh, 0, sizeof *sh);
  sh->db = db;
  sh->dbdir = dbdir;
  sh->out = stdout;
  sh->mode = CLI_MODE_TABLE;
  sh->headers = -1;
  sh->hints = true;
  sh->exit_code = -1;
}

void cli_shell_reset_output(cli_shell *sh) {
  if (sh->out_is_file && sh->out) fclose(sh->out);
  sh->out = stdout;
  sh->out_is_file = false;
}

/* ---- the statement-end scanner ---------------------------------------------------------- */

/* Skip a comment or quoted token starting at sql[i] (i < len); returns the index after it,
** or i when sql[i] starts none of them. An unterminated one runs to len. */
static size_t skip_quoted(const char *sql, size_t len, size_t i) {
  char c = sql[i];
  if (c == '\'' || c == '"') {
    size_t j = i + 1;
    while (j < len) {
      if (sql[j] == c) {
        if (j + 1 < len && sql[j + 1] == c) { j += 2; continue; } /* '' or "" escape */
        return j + 1;
      }
      j++;
    }
    return len;
  }
  if (c == '-' && i + 1 < len && sql[i + 1] == '-') {
    size_t j = i + 2;
    while (j < len && sql[j] != '\n') j++;
    return j;
  }
  if (c == '/' && i + 1 < len && sql[i + 1] == '*') {
    size_t j = i + 2;
    while (j + 1 < len && !(sql[j] == '*' && sql[j + 1] == '/')) j++;
    return j + 1 < len ? j + 2 : len;
  }
  return i;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

size_t cli_sql_skip_space(const char *sql, size_t len) {
  size_t i = 0;
  while (i < len) {
    if (is_space(sql[i])) { i++; continue; }
    bool comment = (sql[i] == '-' || sql[i] == '/');
    size_t j = comment ? skip_quoted(sql, len, i) : i;
    if (j == i) break;
    i = j;
  }
  return i;
}

/* True when sql[0..len) holds nothing but whitespace and complete comments: an open block
** comment ("/" "*" without its end) is text still to come, so its lines are neither blank nor
** dot commands. */
static bool only_space(const char *sql, size_t len) {
  size_t i = cli_sql_skip_space(sql, len);
  if (i < len) return false;
  /* skip_space ran to the end: check that no block comment is left open */
  size_t j = 0;
  while (j < len) {
    if (is_space(sql[j])) {
      j++;
      continue;
    }
    bool block = sql[j] == '/';
    size_t k = skip_quoted(sql, len, j);
    if (block && (k < j + 4 || sql[k - 2] != '*' || sql[k - 1] != '/')) return false;
    j = k > j ? k : j + 1;
  }
  return true;
}

bool cli_sql_complete(const char *sql, size_t len) {
  bool last_semi = false;
  size_t i = 0;
  while (i < len) {
    char c = sql[i];
    if (is_space(c)) { i++; continue; }
    size_t j = skip_quoted(sql, len, i);
    if (j != i) {
      if (c == '\'' || c == '"') last_semi = false; /* a literal is a token; a comment is not */
      i = j;
      continue;
    }
    last_semi = (c == ';');
    i++;
  }
  return last_semi;
}

size_t cli_sql_statement_end(const char *sql, size_t len) {
  size_t i = 0;
  while (i < len) {
    size_t j = skip_quoted(sql, len, i);
    if (j != i) { i = j; continue; }
    if (sql[i] == ';') return i + 1;
    i++;
  }
  return len;
}

/* True when the statement's first word is `word` (case-insensitive). */
static bool starts_with_word(const char *sql, size_t len, const char *word) {
  size_t n = strlen(word);
  if (len < n || strncasecmp(sql, word, n) != 0) return false;
  if (len == n) return true;
  char c = sql[n];
  return !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
}

/* ---- errors ---------------------------------------------------------------------------------- */

void cli_error_where(const cli_shell *sh, int line, int col, char *buf, size_t cap) {
  if (cap == 0) return;
  buf[0] = 0;
  if (!sh->src_name || line <= 0 || sh->interactive) return;
  if (col > 0)
    snprintf(buf, cap, "%s:%d:%d: ", sh->src_name, line, col);
  else
    snprintf(buf, cap, "%s:%d: ", sh->src_name, line);
}

int cli_errorf(const cli_shell *sh, const char *fmt, ...) {
  char where[600];
  cli_error_where(sh, sh->src_line, 0, where, sizeof where);
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "Error: %s", where);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return 1;
}

/* Characters (UTF-8 lead bytes) in s[0..n): the engine's column unit. */
static int utf8_chars(const char *s, size_t n) {
  int c = 0;
  for (size_t i = 0; i < n; i++)
    if (((unsigned char)s[i] & 0xC0) != 0x80) c++;
  return c;
}

/* Print the error of the last call on the connection for the statement at sql[0..len): the
** message, then the line of the statement holding the error offset with a caret under it.
** base_line: the input line where sql starts (0 when there is no input file); col0: the
** characters before sql on that line (the statement need not start a line). In a script the
** message starts with FILE:LINE:COL: of the error in the file, and the engine's own
** " at line L, column C" (counted from the statement's start) is left out of it. */
static void report_error(cli_shell *sh, const char *sql, size_t len, int base_line, int col0) {
  const char *msg = rowan_errmsg(sh->db);
  int off = rowan_error_offset(sh->db);
  if (off < 0 || (size_t)off > len) off = -1;
  char where[600];
  cli_error_where(sh, base_line, 0, where, sizeof where);
  if (where[0] && off >= 0) {
    /* The error's line and column in the statement (as the engine counts them), and in
    ** the input. */
    int sl = 1;
    size_t bol = 0;
    for (size_t i = 0; i < (size_t)off; i++)
      if (sql[i] == '\n') {
        sl++;
        bol = i + 1;
      }
    int sc = 1 + utf8_chars(sql + bol, (size_t)off - bol);
    int fc = sc + (sl == 1 ? col0 : 0);
    cli_error_where(sh, base_line + sl - 1, fc, where, sizeof where);
    char pos[64];
    snprintf(pos, sizeof pos, " at line %d, column %d", sl, sc);
    const char *at = strstr(msg, pos);
    if (at) {
      size_t pl = strlen(pos);
      fprintf(stderr, "Error: %s%.*s%s\n", where, (int)(at - msg), msg, at + pl);
    } else {
      fprintf(stderr, "Error: %s%s\n", where, msg);
    }
  } else {
    fprintf(stderr, "Error: %s%s\n", where, msg);
  }
  if (off < 0) return;
  size_t ls = (size_t)off;
  while (ls > 0 && sql[ls - 1] != '\n') ls--;
  size_t le = (size_t)off;
  while (le < len && sql[le] != '\n' && sql[le] != '\r') le++;
  fprintf(stderr, "  %.*s\n  ", (int)(le - ls), sql + ls);
  /* Pad to the error's display column: tabs kept as tabs, other text by its width. */
  size_t seg = ls;
  for (size_t i = ls; i <= (size_t)off; i++) {
    if (i == (size_t)off || sql[i] == '\t') {
      for (size_t w = cli_text_width(sql + seg, i - seg); w > 0; w--) fputc(' ', stderr);
      if (i < (size_t)off) fputc('\t', stderr);
      seg = i + 1;
    }
  }
  fputs("^\n", stderr);
  /* "name" is a column in SQL (and Phoenix): a string in double quotes is a common slip. */
  if ((size_t)off < len && sql[off] == '"' && strstr(msg, "unknown column")) {
    size_t e = (size_t)off + 1;
    while (e < len && sql[e] != '"' && sql[e] != '\n') e++;
    fprintf(stderr, "  (double quotes name a column; a string takes single quotes: '%.*s')\n",
            (int)(e - (size_t)off - 1), sql + off + 1);
  }
}

/* ---- running statements -------------------------------------------------------------------- */

static double now_sec(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* True when the statement text has the keyword WHERE outside quotes and comments. */
static bool has_where(const char *sql, size_t len) {
  size_t i = 0;
  while (i < len) {
    size_t j = skip_quoted(sql, len, i);
    if (j != i) { i = j; continue; }
    bool word_start = i == 0 || !((sql[i - 1] >= 'A' && sql[i - 1] <= 'Z') ||
                                  (sql[i - 1] >= 'a' && sql[i - 1] <= 'z') ||
                                  (sql[i - 1] >= '0' && sql[i - 1] <= '9') || sql[i - 1] == '_');
    if (word_start && starts_with_word(sql + i, len - i, "WHERE")) return true;
    i++;
  }
  return false;
}

/* The .stats lines. The metrics count the scans' rows (a COUNT(*) scan returns every row
** it counts); rows and changed say what the statement itself gave: its result rows, or the
** rows it changed when it has no result columns. */
static void print_stats(cli_shell *sh, const rowan_metrics *m, uint64_t rows, bool changed) {
  fprintf(sh->out,
          "Stats: scan rows examined %llu, filtered %llu, returned %llu; statement %s %llu "
          "row%s; key ranges %llu\n",
          (unsigned long long)m->rows_examined, (unsigned long long)m->rows_filtered,
          (unsigned long long)m->rows_returned, changed ? "changed" : "returned",
          (unsigned long long)rows, rows == 1 ? "" : "s", (unsigned long long)m->ranges_sought);
  for (int i = 0; i < m->n_families && i < 16; i++) {
    const rowan_family_metrics *f = &m->families[i];
    fprintf(sh->out, "  %s: cells %llu, blocks %llu (%llu cached), bytes %llu\n", f->family,
            (unsigned long long)f->cells_examined, (unsigned long long)f->blocks_read,
            (unsigned long long)f->blocks_cache_hit, (unsigned long long)f->bytes_read);
  }
}

/* Run one prepared statement whose text is sql[0..len); returns 0 or 1 (failed). */
static int run_stmt(cli_shell *sh, rowan_stmt *st, const char *sql, size_t len, int base_line,
                    int col0, double t0) {
  bool explain = starts_with_word(sql, len, "EXPLAIN");
  uint64_t rows = 0;
  int rc;
  bool has_result = rowan_column_count(st) > 0; /* else rows counts the rows it changed */
  if (has_result && sh->plot_path) { /* .plot FILE: this query's rows are drawn */
    char *path = sh->plot_path;
    sh->plot_path = NULL;
    char *text = strndup(sql, len);
    rc = cli_plot_stmt(sh, st, path, text, &rows);
    free(text);
    free(path);
    if (rc == ROWAN_ERROR) { /* the rows did not plot: the message is printed */
      rowan_finalize(st);
      return 1;
    }
  } else if (has_result) {
    rc = cli_print_rows(sh, st, explain, &rows);
  } else {
    while ((rc = rowan_step(st)) == ROWAN_ROW) {}
    if (rc == ROWAN_DONE) rows = (uint64_t)rowan_changes(sh->db);
  }
  fflush(sh->out);
  if (rc != ROWAN_DONE) {
    report_error(sh, sql, len, base_line, col0);
    rowan_finalize(st);
    return 1;
  }
  if (starts_with_word(sql, len, "BEGIN")) sh->in_txn = true;
  else if (starts_with_word(sql, len, "COMMIT") || starts_with_word(sql, len, "ROLLBACK"))
    sh->in_txn = false;
  double t1 = now_sec();
  rowan_metrics m;
  memset(&m, 0, sizeof m);
  rowan_stmt_metrics(st, &m);
  rowan_finalize(st);
  cli_changes_note(sh, (int64_t)rows, !has_result);
  if (sh->timer)
    fprintf(sh->out, "Run Time: real %.3f s, rows %llu\n", t1 - t0, (unsigned long long)rows);
  if (sh->stats && (m.rows_examined > 0 || m.n_families > 0 || m.ranges_sought > 0))
    print_stats(sh, &m, rows, !has_result);
  if (sh->hints && !explain && m.rows_examined > 1000 &&
      m.rows_examined > 100 * m.rows_returned && has_where(sql, len))
    cli_teaching_note(sh, sql, len, &m);
  fflush(sh->out);
  return 0;
}

/* With .echo on, print the statement text (trailing white space dropped) before it runs. */
static void echo_statement(cli_shell *sh, const char *sql, size_t len) {
  if (!sh->echo) return;
  while (len > 0 && is_space(sql[len - 1])) len--;
  fprintf(sh->out, "%.*s\n", (int)len, sql);
  fflush(sh->out);
}

int cli_run_sql(cli_shell *sh, const char *sql, size_t len) {
  int fails = 0;
  size_t pos = 0;
  while (pos < len && !sh->quit && !cli_stop_for_interrupt(sh)) {
    pos += cli_sql_skip_space(sql + pos, len - pos);
    if (pos >= len) break;
    const char *start = sql + pos;
    size_t rest = len - pos;
    int base_line = 0, col0 = 0;
    if (sh->src_line > 0) {
      size_t bol = 0;
      base_line = sh->src_line;
      for (size_t i = 0; i < pos; i++)
        if (sql[i] == '\n') {
          base_line++;
          bol = i + 1;
        }
      col0 = utf8_chars(sql + bol, pos - bol);
    }
    if (rest > 0x7fffffff) rest = 0x7fffffff;
    rowan_stmt *st = NULL;
    const char *tail = NULL;
    double t0 = now_sec();
    int rc = rowan_prepare(sh->db, start, (int)rest, &st, &tail);
    size_t used;
    if (rc != ROWAN_OK) {
      used = cli_sql_statement_end(start, rest);
      echo_statement(sh, start, used);
      report_error(sh, start, used, base_line, col0);
      fails++;
    } else if (!st) {
      break; /* only whitespace and comments were left */
    } else {
      used = (tail && tail > start && tail <= start + rest) ? (size_t)(tail - start) : rest;
      echo_statement(sh, start, used);
      fails += run_stmt(sh, st, start, used, base_line, col0, t0);
    }
    cli_once_step(sh);
    if (sh->interactive) cli_interrupt_clear(); /* one Ctrl-C stops one statement */
    pos += used;
    if (fails > 0 && sh->bail) sh->quit = true;
  }
  sh->n_errors += fails;
  return fails;
}

int cli_run_arg(cli_shell *sh, const char *arg) {
  size_t sp = 0;
  while (arg[sp] == ' ' || arg[sp] == '\t') sp++;
  if (arg[sp] == '.') return cli_run_dot(sh, arg + sp);
  const char *save_name = sh->src_name;
  int save_line = sh->src_line;
  sh->src_name = NULL;
  sh->src_line = 0;
  int n = cli_run_sql(sh, arg, strlen(arg));
  sh->src_name = save_name;
  sh->src_line = save_line;
  /* `rowan DB script.sql` runs the file's name as SQL: say how to run the file. */
  struct stat st;
  if (n > 0 && !strpbrk(arg, " \t\n;'\"(") && stat(arg, &st) == 0 && S_ISREG(st.st_mode))
    fprintf(stderr, "  (%s is a file: to run it, use -f %s or .read %s)\n", arg, arg, arg);
  return n;
}

/* ---- reading input ------------------------------------------------------------------------- */

typedef struct sbuf {
  char *p;     /* text, NUL-terminated when cap > 0 */
  size_t len;  /* bytes used */
  size_t cap;  /* bytes allocated */
} sbuf;

static bool sbuf_append(sbuf *b, const char *s, size_t n) {
  if (b->len + n + 2 > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < b->len + n + 2) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) return false;
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = 0;
  return true;
}

/* Run the SQL gathered in b (starting at input line first_line) and empty it. */
static int flush_sql(cli_shell *sh, sbuf *b, const char *name, int first_line) {
  const char *save_name = sh->src_name;
  int save_line = sh->src_line;
  sh->src_name = name;
  sh->src_line = first_line;
  int n = cli_run_sql(sh, b->p, b->len);
  sh->src_name = save_name;
  sh->src_line = save_line;
  b->len = 0;
  if (b->p) b->p[0] = 0;
  return n;
}

static char *history_path(void) {
  const char *home = getenv("HOME");
  if (!home || !*home) return NULL;
  size_t n = strlen(home) + 32;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/.rowan_history", home);
  return p;
}

int cli_run_input(cli_shell *sh, FILE *in, const char *name, bool interactive) {
  sbuf b = {NULL, 0, 0};
  int fails = 0, line_no = 0, first_line = 0;
  char *line = NULL;
  size_t line_cap = 0;
  char *hist = NULL;
  bool save_inter = sh->interactive;
  sh->interactive = interactive;
  if (interactive) {
    hist = history_path();
    stifle_history(2000);
    if (hist) read_history(hist);
    cli_complete_install(sh);
  }
  while (!sh->quit) {
    char *text;
    size_t n;
    if (interactive) {
      bool empty = b.len == 0 || only_space(b.p, b.len);
      char *l = readline(empty ? "rowan> " : "   ...> ");
      if (!l && cli_interrupt_seen()) { /* Ctrl-C at the prompt: the line typed is dropped, */
        fputc('\n', stdout);              /* and a statement begun on earlier lines too */
        fflush(stdout);
        b.len = 0;
        continue;
      }
      if (!l) break;
      free(line);
      line = l;
      line_cap = 0;
      text = line;
      n = strlen(line);
      if (n > 0) add_history(line);
    } else {
      ssize_t r = getline(&line, &line_cap, in);
      if (r < 0) break;
      text = line;
      n = (size_t)r;
    }
    line_no++;
    /* A UTF-8 byte-order mark (editors on Windows write one) is not part of the script. */
    if (line_no == 1 && n >= 3 && (unsigned char)text[0] == 0xEF &&
        (unsigned char)text[1] == 0xBB && (unsigned char)text[2] == 0xBF) {
      text += 3;
      n -= 3;
    }
    bool empty = b.len == 0 || only_space(b.p, b.len);
    if (empty) {
      size_t sp = 0;
      while (sp < n && (text[sp] == ' ' || text[sp] == '\t')) sp++;
      if (sp < n && text[sp] == '.') {
        b.len = 0;
        while (n > sp && (text[n - 1] == '\n' || text[n - 1] == '\r')) n--;
        text[n] = 0;
        const char *save_name = sh->src_name;
        int save_line = sh->src_line;
        sh->src_name = name;
        sh->src_line = line_no;
        fails += cli_run_dot(sh, text + sp);
        sh->src_name = save_name;
        sh->src_line = save_line;
        continue;
      }
      if (b.len == 0 && only_space(text, n)) continue; /* blank line */
      if (b.len == 0) first_line = line_no;
    }
    if (!sbuf_append(&b, text, n) || (interactive && !sbuf_append(&b, "\n", 1))) {
      fprintf(stderr, "Error: out of memory\n");
      fails++;
      sh->n_errors++;
      break;
    }
    if (cli_sql_complete(b.p, b.len)) fails += flush_sql(sh, &b, name, first_line);
  }
  if (!sh->quit && b.len > 0 && cli_sql_skip_space(b.p, b.len) < b.len)
    fails += flush_sql(sh, &b, name, first_line); /* a last statement without ';' */
  if (interactive && hist) {
    write_history(hist);
  }
  if (interactive) cli_complete_done();
  free(hist);
  free(line);
  free(b.p);
  sh->interactive = save_inter;
  return fails;
}
