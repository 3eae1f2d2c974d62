/*
** cli/complete.c: the Tab key in the interactive shell. After a word, Tab completes it from
** the SQL keywords, the dot commands (at the start of a line), and the names of the tables,
** views and columns of the open database (read from the catalog when completion starts); inside
** a quoted string, or after white space or at the start of a line, Tab is a tab character,
** so text pasted with tabs (a TSV row in a string, SELECT<Tab>x) keeps them or reads the
** same. libedit's readline emulation does the editing.
** Not here: the rest of line input (cli/shell.c).
*/
#ifndef CLI_NO_LIBEDIT
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <editline/readline.h>

#include "api/api_test.h"
#include "catalog/cat_view.h"
#include "catalog/catalog.h"
#include "cli/shell.h"

static const char *const keywords[] = {
    "SELECT", "FROM", "WHERE", "GROUP", "BY", "ORDER", "HAVING", "LIMIT", "OFFSET", "ASC",
    "DESC", "AND", "OR", "NOT", "NULL", "IS", "IN", "BETWEEN", "LIKE", "ILIKE", "DISTINCT",
    "COUNT", "SUM", "AVG", "MIN", "MAX", "UPSERT", "INTO", "VALUES", "DELETE", "CREATE",
    "TABLE", "INDEX", "DROP", "PRIMARY", "KEY", "CONSTRAINT", "INCLUDE", "EXPLAIN", "ANALYZE",
    "BEGIN", "COMMIT", "ROLLBACK", "CAST", "AS", "CASE", "WHEN", "THEN", "ELSE", "END",
    "TRUE", "FALSE", "TIMESTAMP", "DATE", "TIME", "INTEGER", "BIGINT", "DOUBLE", "VARCHAR",
    "DECIMAL", "BOOLEAN", "VARBINARY", "CHECK", "TTL", "VERSIONS", "COMPRESSION", "BLOCKSIZE",
    "ALTER", "ADD", "COLUMN", "SET", "VIEW", "CASCADE", "SALT_BUCKETS", "SPLIT",
    NULL};

static const char *const dot_commands[] = {
    ".backup", ".bail", ".changes", ".check", ".compact", ".dump", ".echo", ".exit", ".flush",
    ".headers", ".help", ".hints", ".import", ".indexes", ".mode", ".nullvalue", ".once",
    ".output", ".print", ".quit", ".raw", ".read", ".refresh", ".schema", ".shell", ".show",
    ".stats",
    ".system", ".tables", ".threads", ".timer", NULL};

static cli_shell *g_sh;      /* the shell whose database names complete */
static char **g_names;       /* table and column names, read when a completion starts */
static size_t g_n_names;

static void names_free(void) {
  for (size_t i = 0; i < g_n_names; i++) free(g_names[i]);
  free(g_names);
  g_names = NULL;
  g_n_names = 0;
}

static void names_add(const char *s, size_t *cap) {
  if (g_n_names == *cap) {
    size_t c = *cap ? *cap * 2 : 64;
    char **v = realloc(g_names, c * sizeof *v);
    if (!v) return;
    g_names = v;
    *cap = c;
  }
  char *d = strdup(s);
  if (d) g_names[g_n_names++] = d;
}

/* The catalog's table, view and column names (a fresh snapshot: DDL since the last Tab shows). */
static void names_load(void) {
  names_free();
  kv_db *kv = g_sh ? api_test_kv(g_sh->db) : NULL;
  cat_catalog *cat = NULL;
  cat_error err;
  memset(&err, 0, sizeof err);
  if (!kv || cat_open(kv, &cat, &err) != CAT_OK) return;
  size_t cap = 0;
  for (int i = 0; i < cat_table_count(cat); i++) {
    const cat_table *t = cat_table_at(cat, i);
    if (!t) continue;
    names_add(t->name, &cap);
    for (int c = 0; c < t->n_columns; c++) names_add(t->columns[c].name, &cap);
  }
  for (int i = 0; i < cat_view_count(cat); i++) {
    const cat_view *v = cat_view_at(cat, i);
    names_add(v->name, &cap);
    for (int c = 0; c < v->n_columns; c++) names_add(v->columns[c].name, &cap); /* its own */
  }
  cat_close(cat);
}

/* readline's generator: the next candidate starting with text (state 0: the first). */
static char *generate(const char *text, int state) {
  static size_t kw, dot, nm;
  if (state == 0) kw = dot = nm = 0;
  size_t n = strlen(text);
  if (text[0] == '.') {
    while (dot_commands[dot])
      if (!strncmp(dot_commands[dot++], text, n)) return strdup(dot_commands[dot - 1]);
    return NULL;
  }
  while (keywords[kw])
    if (!strncasecmp(keywords[kw++], text, n)) return strdup(keywords[kw - 1]);
  while (nm < g_n_names)
    if (!strncasecmp(g_names[nm++], text, n)) return strdup(g_names[nm - 1]);
  return NULL;
}

/* Tab (libedit calls this for it; its rl_bind_key binds nothing but rl_insert): a tab
** character inside a quoted string, at the start of a line or after white space; else the
** completions of the word before the cursor. */
static char **complete(const char *text, int start, int end) {
  (void)start;
  rl_attempted_completion_over = 1; /* never fall back to file names */
  int quotes = 0;
  for (int i = 0; rl_line_buffer && i < end; i++) quotes += rl_line_buffer[i] == '\'';
  if (quotes % 2 == 1 || !text[0]) { /* the word stays, followed by a tab */
    char **m = calloc(2, sizeof *m);
    size_t n = strlen(text);
    if (m) m[0] = malloc(n + 2);
    if (!m || !m[0]) {
      free(m);
      return NULL;
    }
    memcpy(m[0], text, n);
    m[0][n] = '\t';
    m[0][n + 1] = 0;
    rl_completion_append_character = 0;
    return m;
  }
  rl_completion_append_character = ' ';
  names_load();
  return rl_completion_matches(text, generate);
}

void cli_complete_install(cli_shell *sh) {
  g_sh = sh;
  rl_attempted_completion_function = complete;
  rl_basic_word_break_characters = " \t\n\"'`@$><=;|&{(,)+-*/";
}

void cli_complete_done(void) { names_free(); }
#else
#include "cli/shell.h"
void cli_complete_install(cli_shell *sh) { (void)sh; }
void cli_complete_done(void) {}
#endif
