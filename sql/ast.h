/*
** sql/ast.h: the abstract syntax tree of Rowan's SQL dialect, its constructors and its
** destructor, and the printer that renders a tree back to canonical SQL (sql/print.c).
**
** The tree is what the grammar (sql/parse.y) builds and what the planner binds. It keeps
** names and types exactly as written: identifiers already case-folded (unquoted ones upper
** case, "quoted" ones exact), type names with their length / precision / scale, number
** literals with their text and kind. It resolves nothing: whether A.B is family.column or
** table.column, whether a type exists, whether an option is known, is for catalog/ and
** planner/. Every node records the byte offset of its first token in the statement text
** given to sql_parse(), so later layers can point at the source.
**
** Ownership: every constructor takes ownership of the children passed to it, also when it
** fails (then it frees them and returns NULL). Free functions accept NULL. Lists grow by
** doubling; sql_*_append() returns the list, or NULL after freeing list and item on
** allocation failure.
**
** Not here: parsing (sql/parser.h), semantic checks, evaluation.
*/
#ifndef ROWAN_SQL_AST_H
#define ROWAN_SQL_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sql_expr sql_expr;

/* ORDER SQL_EXPR_KIND: expression node kinds. */
enum sql_expr_kind {
  SQL_E_LITERAL = 1, /* lit, text/text_len */
  SQL_E_PARAM,       /* param: ? or ?NNN */
  SQL_E_COLUMN,      /* name[0..nname): col, q.col or t.f.col as written */
  SQL_E_UNARY,       /* op (SQL_OP_NEG/POS/NOT) applied to left */
  SQL_E_BINARY,      /* left op right */
  SQL_E_IN,          /* left [NOT] IN (list), or left [NOT] IN (sub) (list NULL) */
  SQL_E_BETWEEN,     /* left [NOT] BETWEEN right AND third */
  SQL_E_LIKE,        /* left [NOT] LIKE|ILIKE right [ESCAPE third] */
  SQL_E_ISNULL,      /* left IS [NOT] NULL */
  SQL_E_CASE,        /* CASE [left] WHEN list[2i] THEN list[2i+1] ... [ELSE third] END */
  SQL_E_CAST,        /* CAST(left AS type) */
  SQL_E_FUNC,        /* text(list), COUNT(*) (star), COUNT(DISTINCT x) (distinct); the
                        constructor ARRAY[list] is the function named ARRAY and the subscript
                        a[i] the call ARRAY_ELEM(a, i) */
  SQL_E_ROW,         /* row value constructor (list[0], list[1], ...) */
  SQL_E_SUBQUERY,    /* a scalar subquery (sub) */
  SQL_E_EXISTS,      /* EXISTS (sub) */
  SQL_E_SEQUENCE     /* NEXT VALUE FOR text (op SQL_SEQ_NEXT) or CURRENT VALUE FOR text
                        (op SQL_SEQ_CURRENT): text is the sequence name */
};

/* op of SQL_E_SEQUENCE. */
enum sql_seq_op { SQL_SEQ_NEXT = 1, SQL_SEQ_CURRENT = 2 };

/* Literal kinds of SQL_E_LITERAL. */
enum sql_lit_kind {
  SQL_LIT_NULL = 1,  /* NULL */
  SQL_LIT_TRUE,      /* TRUE */
  SQL_LIT_FALSE,     /* FALSE */
  SQL_LIT_INTEGER,   /* digits only: 12 (text as written) */
  SQL_LIT_DECIMAL,   /* with a point, no exponent: 12.5, .5, 12. */
  SQL_LIT_DOUBLE,    /* with an exponent: 1e10, 1.5E-3 */
  SQL_LIT_STRING,    /* 'it''s': text holds the unescaped value */
  SQL_LIT_DATE,      /* DATE '...': text holds the string value */
  SQL_LIT_TIME,      /* TIME '...' */
  SQL_LIT_TIMESTAMP, /* TIMESTAMP '...' */
  SQL_LIT_BLOB       /* X'4142': text holds the bytes (text_len of them) */
};

/* ORDER SQL_OP: operators of SQL_E_UNARY and SQL_E_BINARY; print.c has a table in this
** order. */
enum sql_op {
  SQL_OP_NEG = 1, /* unary - */
  SQL_OP_POS,     /* unary + */
  SQL_OP_NOT,     /* NOT */
  SQL_OP_MUL,     /* * */
  SQL_OP_DIV,     /* / */
  SQL_OP_MOD,     /* % */
  SQL_OP_ADD,     /* + */
  SQL_OP_SUB,     /* - */
  SQL_OP_CONCAT,  /* || */
  SQL_OP_EQ,      /* = */
  SQL_OP_NE,      /* <> or != */
  SQL_OP_LT,      /* < */
  SQL_OP_LE,      /* <= */
  SQL_OP_GT,      /* > */
  SQL_OP_GE,      /* >= */
  SQL_OP_AND,     /* AND */
  SQL_OP_OR,      /* OR */
  SQL_OP_COUNT
};

/* A type as written: name (folded like an identifier), up to two integer arguments. */
typedef struct sql_type {
  char *name;    /* "VARCHAR", "DECIMAL", ...; owned */
  int nargs;     /* 0, 1 (length or precision) or 2 (precision, scale) */
  int64_t arg[2];/* the arguments as written, each in [0, INT32_MAX] */
  uint32_t off;  /* byte offset of the type name */
  bool array;    /* written `t ARRAY` or `t[]` (Phoenix): an ARRAY of t; a size in the
                    brackets is accepted and, as in Phoenix, not kept or enforced */
} sql_type;

/* A growable list of expressions. */
typedef struct sql_expr_list {
  int n;         /* number of items */
  int cap;       /* allocated slots */
  sql_expr **a;  /* items; owned */
} sql_expr_list;

struct sql_expr {
  int kind;            /* enum sql_expr_kind */
  int op;              /* enum sql_op for UNARY/BINARY; 0 otherwise */
  uint32_t off;        /* byte offset of the first token of this expression */
  uint32_t height;     /* 1 for a leaf, else 1 + the tallest child */
  bool negated;        /* NOT IN, NOT BETWEEN, NOT LIKE, IS NOT NULL */
  bool ilike;          /* LIKE: ILIKE (case-insensitive) */
  bool distinct;       /* FUNC: f(DISTINCT x) */
  bool star;           /* FUNC: f(*) */
  bool bare;           /* FUNC: written without parentheses (CURRENT_DATE, CURRENT_TIME,
                          CURRENT_TIMESTAMP), printed the same way */
  bool within;         /* FUNC: f(args) WITHIN GROUP (ORDER BY x): x is the last of list */
  bool within_desc;    /* FUNC with within: ORDER BY x DESC */
  int lit;             /* LITERAL: enum sql_lit_kind */
  char *text;          /* LITERAL: text/value; FUNC: the function name; owned, NUL-ended */
  size_t text_len;     /* bytes of text, without the NUL */
  int param;           /* PARAM: 1-based parameter number */
  bool param_numbered; /* PARAM: written as ?NNN (else a bare ?) */
  int nname;           /* COLUMN: 1..3 name parts */
  char *name[3];       /* COLUMN: parts as written and folded; owned */
  sql_expr *left;      /* first operand (see the kinds) */
  sql_expr *right;     /* second operand */
  sql_expr *third;     /* third operand */
  sql_expr_list *list; /* IN list, CASE arms, FUNC arguments, ROW fields */
  sql_type *type;      /* CAST target type */
  struct sql_select *sub; /* SUBQUERY, EXISTS, IN (SELECT ...): the query; owned */
};

/* ORDER BY or index key term: expr [ASC|DESC] [NULLS FIRST|LAST]. */
typedef struct sql_order_term {
  sql_expr *expr; /* owned */
  bool desc;      /* DESC */
  int nulls;      /* 0 unspecified, 1 NULLS FIRST, 2 NULLS LAST */
} sql_order_term;

typedef struct sql_order_list {
  int n;               /* number of terms */
  int cap;             /* allocated slots */
  sql_order_term *a;   /* terms; owned */
} sql_order_list;

/* A column name that may carry a family: [family.]name, and a sort order where the
** grammar allows one (primary key constraint). */
typedef struct sql_colname {
  char *family;  /* NULL if not qualified; owned */
  char *name;    /* owned */
  uint32_t off;  /* byte offset of the first part */
  bool desc;     /* PRIMARY KEY (..., c DESC) */
  bool row_timestamp; /* PRIMARY KEY (..., c ROW_TIMESTAMP) */
  struct sql_type *type; /* a dynamic column's type (Phoenix: UPSERT INTO t (f.c TYPE),
                            FROM t (f.c TYPE)), else NULL; owned */
} sql_colname;

typedef struct sql_colname_list {
  int n;            /* number of names */
  int cap;          /* allocated slots */
  sql_colname *a;   /* owned */
} sql_colname_list;

/* One item of a SELECT list: an expression with an optional alias, or a star. */
typedef struct sql_result_col {
  sql_expr *expr;  /* NULL for * and q.* */
  char *alias;     /* AS alias, or NULL; owned */
  int nqual;       /* star: 0 for *, 1 for t.*, 2 for t.f.* */
  char *qual[2];   /* star qualifier parts; owned */
  uint32_t off;    /* byte offset of the item */
} sql_result_col;

typedef struct sql_result_list {
  int n;                /* number of items */
  int cap;              /* allocated slots */
  sql_result_col *a;    /* owned */
} sql_result_list;

/* name = value in a table or index option list; family is set for meta.VERSIONS = 1. */
typedef struct sql_option {
  char *family;   /* NULL if not qualified; owned */
  char *name;     /* owned */
  sql_expr *value;/* a literal, a signed number or a bare name (SQL_E_COLUMN); owned */
  uint32_t off;   /* byte offset of the option */
} sql_option;

typedef struct sql_option_list {
  int n;          /* number of options */
  int cap;        /* allocated slots */
  sql_option *a;  /* owned */
} sql_option_list;

/* ORDER SQL_JOIN: how a FROM item after the first joins the ones before it; print.c has
** their words in this order. */
enum sql_join_kind {
  SQL_JOIN_COMMA = 1, /* FROM a, b (the condition, if any, is in WHERE) */
  SQL_JOIN_INNER,     /* [INNER] JOIN */
  SQL_JOIN_LEFT,      /* LEFT [OUTER] JOIN */
  SQL_JOIN_RIGHT,     /* RIGHT [OUTER] JOIN */
  SQL_JOIN_FULL,      /* FULL [OUTER] JOIN */
  SQL_JOIN_CROSS,     /* CROSS JOIN */
  SQL_JOIN_SEMI,      /* never written: the planner's join of an x IN (SELECT ...) */
  SQL_JOIN_ANTI,      /* never written: the planner's join of an x NOT IN (SELECT ...) */
  SQL_JOIN_ANTI_EXISTS /* never written: the planner's join of a correlated NOT EXISTS */
};

typedef struct sql_select sql_select;

/* One FROM item after the first: kind table [alias] [ON expr | USING (cols)]; the table is
** a derived table `(SELECT ...) [AS] alias` when sub is set (table is then NULL). */
typedef struct sql_join {
  int kind;               /* enum sql_join_kind */
  bool natural;           /* NATURAL before the join words (parsed; refused for now) */
  uint32_t off;           /* byte offset of the join's first word (the comma for COMMA) */
  char *table;            /* owned; NULL for a derived table */
  uint32_t table_off;     /* byte offset of the table name (the '(' of a derived table) */
  sql_select *sub;        /* the derived table's query, or NULL; owned */
  char *alias;            /* owned, or NULL */
  uint32_t alias_off;     /* byte offset of the alias (0 without one) */
  sql_expr *on;           /* ON condition or NULL; owned */
  sql_colname_list *using;/* USING (a, b) or NULL; owned */
  sql_colname_list *dyn;  /* the table's dynamic columns `t (f.c TYPE, ...)`, or NULL; owned */
} sql_join;

typedef struct sql_join_list {
  int n;          /* number of items */
  int cap;        /* allocated slots */
  sql_join *a;    /* owned */
} sql_join_list;

/* ORDER SQL_SETOP: the set operations of a compound SELECT; print.c has their words in
** this order. */
enum sql_setop {
  SQL_SETOP_UNION_ALL = 1, /* UNION ALL */
  SQL_SETOP_UNION,         /* UNION */
  SQL_SETOP_INTERSECT,     /* INTERSECT */
  SQL_SETOP_EXCEPT         /* EXCEPT */
};

/* One common table expression of WITH: name [(cols)] AS (select). */
typedef struct sql_cte {
  char *name;             /* owned */
  uint32_t off;           /* byte offset of the name */
  sql_colname_list *cols; /* the column names given, or NULL; owned */
  sql_select *select;     /* its query; owned */
} sql_cte;

typedef struct sql_cte_list {
  int n;          /* number of items */
  int cap;        /* allocated slots */
  sql_cte *a;     /* owned */
} sql_cte_list;

/* A SELECT. A compound SELECT (`left UNION right`, left-associative, every operator of one
** precedence as in SQLite) has setop set, its operands in left and right, and only the
** clauses that apply to the whole result (ORDER BY, LIMIT, OFFSET, WITH); its other
** fields are empty. */
struct sql_select {
  uint32_t off;          /* byte offset of SELECT (of the first SELECT of a compound) */
  sql_cte_list *with;    /* WITH ... before the query, or NULL; owned */
  int setop;             /* enum sql_setop of a compound SELECT, 0 otherwise */
  uint32_t setop_off;    /* byte offset of the set operator's first word */
  sql_select *left;      /* compound: the left operand (maybe compound itself); owned */
  sql_select *right;     /* compound: the right operand (a simple SELECT); owned */
  sql_select *sub;       /* FROM (SELECT ...) as the first FROM item: table is NULL; owned */
  char *hint;            /* text of the optimizer hint comment, trimmed; NULL if none; owned */
  bool distinct;         /* SELECT DISTINCT */
  sql_result_list *cols; /* the select list; owned */
  char *table;           /* FROM table, NULL without FROM; owned */
  char *alias;           /* FROM table alias or NULL; owned */
  uint32_t table_off;    /* byte offset of the table name */
  uint32_t alias_off;    /* byte offset of the alias (0 without one) */
  sql_join_list *joins;  /* the FROM items after the first, or NULL (one table); owned */
  sql_colname_list *dyn; /* FROM table's dynamic columns `t (f.c TYPE, ...)`, or NULL; owned */
  sql_expr *where;       /* or NULL; owned */
  sql_expr_list *group;  /* or NULL; owned */
  sql_expr *having;      /* or NULL; owned */
  sql_order_list *order; /* or NULL; owned */
  sql_expr *limit;       /* or NULL; owned */
  sql_expr *offset;      /* or NULL; owned */
};

/* A column definition of CREATE TABLE. */
typedef struct sql_coldef {
  char *family;     /* family of family.column, NULL for the default; owned */
  char *name;       /* owned */
  sql_type *type;   /* owned */
  int nullability;  /* 0 unspecified, 1 NULL, 2 NOT NULL */
  bool pk;          /* inline PRIMARY KEY */
  bool pk_desc;     /* inline PRIMARY KEY DESC */
  uint32_t off;     /* byte offset of the column name */
  bool row_timestamp; /* ROW_TIMESTAMP after the type (or after PRIMARY KEY) */
} sql_coldef;

/* SPLIT ON (v1, v2, ...) of CREATE TABLE (Phoenix): the split points as written. */
typedef struct sql_split {
  sql_expr_list *values;  /* the values, or NULL for an empty list; owned */
  uint32_t off;           /* byte offset of SPLIT */
} sql_split;

typedef struct sql_create_table {
  char *name;             /* table name; owned */
  uint32_t name_off;      /* byte offset of the name */
  bool if_not_exists;     /* IF NOT EXISTS */
  int ncol;               /* number of columns */
  int capcol;             /* allocated column slots */
  sql_coldef *cols;       /* column definitions; owned */
  char *pk_name;          /* CONSTRAINT name PRIMARY KEY (...), NULL if none; owned */
  sql_colname_list *pk;   /* constraint key columns or NULL; owned */
  sql_option_list *opts;  /* options or NULL; owned */
  sql_split *split;       /* SPLIT ON, or NULL; owned */
} sql_create_table;

typedef struct sql_create_index {
  char *name;             /* index name; owned */
  char *table;            /* indexed table; owned */
  bool if_not_exists;     /* IF NOT EXISTS */
  sql_order_list *keys;   /* indexed expressions with ASC/DESC; owned */
  sql_colname_list *include; /* INCLUDE (...) or NULL; owned */
  sql_option_list *opts;  /* options or NULL; owned */
} sql_create_index;

/* DROP TABLE / DROP INDEX / CHECK INDEX. */
typedef struct sql_drop {
  char *name;       /* table or index name; owned */
  char *table;      /* the table of an index, NULL for DROP TABLE; owned */
  bool if_exists;   /* IF EXISTS */
  bool cascade;     /* DROP TABLE ... CASCADE: its views go with it */
} sql_drop;

/* CREATE VIEW [IF NOT EXISTS] name [(columns)] AS select (Phoenix's view). */
typedef struct sql_create_view {
  char *name;             /* view name; owned */
  uint32_t name_off;      /* byte offset of the name */
  bool if_not_exists;     /* IF NOT EXISTS */
  sql_create_table *cols; /* columns of the view's own (cols, ncol), or NULL; owned */
  sql_select *select;     /* the view's query; owned */
} sql_create_view;

/* ALTER TABLE t ADD ... | DROP COLUMN ... | SET ... (Phoenix's forms); ALTER VIEW v ADD ... |
** DROP COLUMN ... (view set: the view's own columns). */
enum sql_alter_action { SQL_ALTER_ADD = 1, SQL_ALTER_DROP_COLUMN = 2, SQL_ALTER_SET = 3 };
typedef struct sql_alter_table {
  char *name;               /* table name; owned */
  uint32_t name_off;        /* byte offset of the name */
  int action;               /* enum sql_alter_action */
  bool if_flag;             /* ADD IF NOT EXISTS / DROP COLUMN IF EXISTS */
  sql_create_table *add;    /* ADD: the columns (cols, ncol; no name, key or options); owned */
  sql_colname_list *drop;   /* DROP COLUMN: the columns; owned */
  sql_option_list *opts;    /* SET: the options; owned */
  bool view;                /* ALTER VIEW (ADD and DROP COLUMN only) */
} sql_alter_table;

/* CREATE SEQUENCE [IF NOT EXISTS] name [option ...] (Phoenix's). Each option is a name
** (START, INCREMENT, MINVALUE, MAXVALUE, CYCLE, CACHE as written; exec/ddl_sequence.c
** checks them) with an integer literal, maybe negated, or no value (CYCLE). */
typedef struct sql_create_sequence {
  char *name;             /* sequence name; owned */
  uint32_t name_off;      /* byte offset of the name */
  bool if_not_exists;     /* IF NOT EXISTS */
  sql_option_list *opts;  /* options in order, or NULL; owned */
} sql_create_sequence;

/* UPSERT INTO t [(cols)] VALUES (...), ... | select. */
typedef struct sql_upsert {
  char *hint;               /* optimizer hint text, or NULL; owned */
  char *table;              /* owned */
  uint32_t table_off;       /* byte offset of the table name */
  sql_colname_list *cols;   /* explicit column list or NULL; owned */
  sql_expr_list *rows;      /* VALUES: one SQL_E_ROW per row; NULL for UPSERT SELECT */
  sql_select *select;       /* UPSERT SELECT: the query; NULL for VALUES; owned */
} sql_upsert;

typedef struct sql_delete {
  char *hint;          /* owned, or NULL */
  char *table;         /* owned */
  uint32_t table_off;  /* byte offset of the table name */
  sql_colname_list *dyn; /* the table's dynamic columns `t (f.c TYPE, ...)`, or NULL; owned */
  sql_expr *where;     /* or NULL; owned */
  sql_expr *limit;     /* or NULL; owned */
} sql_delete;

/* ORDER SQL_STMT_KIND: statement kinds; print.c switches on them. */
enum sql_stmt_kind {
  SQL_STMT_SELECT = 1,
  SQL_STMT_UPSERT,
  SQL_STMT_DELETE,
  SQL_STMT_CREATE_TABLE,
  SQL_STMT_DROP_TABLE,
  SQL_STMT_CREATE_INDEX,
  SQL_STMT_DROP_INDEX,
  SQL_STMT_CHECK_INDEX,
  SQL_STMT_BEGIN,
  SQL_STMT_COMMIT,
  SQL_STMT_ROLLBACK,
  SQL_STMT_ALTER_TABLE,
  SQL_STMT_CREATE_SEQUENCE,
  SQL_STMT_DROP_SEQUENCE,
  SQL_STMT_CREATE_VIEW,   /* u.create_view */
  SQL_STMT_DROP_VIEW      /* u.drop (name; table NULL) */
};

typedef struct sql_stmt {
  int kind;           /* enum sql_stmt_kind */
  bool explain;       /* EXPLAIN ... (SELECT, UPSERT, DELETE only) */
  bool analyze;       /* EXPLAIN ANALYZE ... */
  bool explain_json;  /* EXPLAIN (FORMAT JSON) ...: the plan as one JSON document */
  uint32_t off;       /* byte offset of the first token */
  uint32_t len;       /* bytes up to the end of the last token (no ';') */
  int nparam;         /* highest parameter number used (0 if none) */
  union {
    sql_select *select;          /* SELECT */
    sql_upsert *upsert;          /* UPSERT */
    sql_delete *del;             /* DELETE */
    sql_create_table *create_table; /* CREATE TABLE */
    sql_create_index *create_index; /* CREATE INDEX */
    sql_drop *drop;              /* DROP TABLE, DROP INDEX, CHECK INDEX, DROP SEQUENCE, DROP VIEW */
    sql_alter_table *alter;      /* ALTER TABLE */
    sql_create_sequence *create_sequence; /* CREATE SEQUENCE */
    sql_create_view *create_view; /* CREATE VIEW */
  } u;                /* by kind; NULL members for BEGIN/COMMIT/ROLLBACK */
  sql_expr *as_of;    /* `FROM t AS OF TIMESTAMP '...'` or SQL:2011's `FOR SYSTEM_TIME AS OF
                         TIMESTAMP '...'`: the first one's literal (SQL_LIT_TIMESTAMP), or NULL;
                         owned. The binder applies it to the whole statement (planner/
                         bind_stmt.c says when that is allowed) */
  int n_as_of;        /* AS OF clauses written */
  bool as_of_mixed;   /* two of them name different times */
} sql_stmt;

/* ---- Names --------------------------------------------------------------------------- */
/* A NUL-terminated copy of the identifier token z[0..n): a "quoted" one unquoted ("" -> ")
** and kept exact, a bare one folded to upper case (ASCII letters). NULL on OOM. */
char *sql_ident_dup(const char *z, size_t n);

/* True if name (folded, NUL-terminated) is one of the functions SQL writes without
** parentheses: CURRENT_DATE, CURRENT_TIME, CURRENT_TIMESTAMP. Unquoted, such a name in an
** expression is the function call; quoted ("CURRENT_DATE") it is a column. */
bool sql_is_bare_function(const char *name);

/* ---- Expressions (all return NULL on OOM after freeing their arguments) -------------- */
/* A literal; text[0..n) is copied as is (a number's text), or, for strings and typed
** literals, given the quoted token 'x''y' it is unescaped. */
sql_expr *sql_expr_literal(int lit, const char *text, size_t n, uint32_t off);
sql_expr *sql_expr_param(int number, bool numbered, uint32_t off);
/* A column reference from 1..3 folded name parts (taken over: freed on failure). */
sql_expr *sql_expr_column(int nname, char *name[], uint32_t off);
sql_expr *sql_expr_unary(int op, sql_expr *operand, uint32_t off);
sql_expr *sql_expr_binary(int op, sql_expr *left, sql_expr *right);
sql_expr *sql_expr_in(sql_expr *left, sql_expr_list *list, bool negated);
sql_expr *sql_expr_between(sql_expr *left, sql_expr *lo, sql_expr *hi, bool negated);
sql_expr *sql_expr_like(sql_expr *left, sql_expr *pattern, sql_expr *escape, bool ilike,
                        bool negated);
sql_expr *sql_expr_isnull(sql_expr *left, bool negated);
/* CASE [operand] arms (WHEN, THEN pairs) [ELSE else_expr] END. */
sql_expr *sql_expr_case(sql_expr *operand, sql_expr_list *arms, sql_expr *else_expr,
                        uint32_t off);
sql_expr *sql_expr_cast(sql_expr *operand, sql_type *type, uint32_t off);
/* A function call; name is taken over. args may be NULL (no arguments). */
sql_expr *sql_expr_func(char *name, sql_expr_list *args, bool distinct, bool star,
                        uint32_t off);
/* A row value constructor: two or more fields in an expression, one or more as a VALUES
** row. */
sql_expr *sql_expr_row(sql_expr_list *fields, uint32_t off);
/* A subquery expression: kind SQL_E_SUBQUERY or SQL_E_EXISTS (left NULL), or SQL_E_IN
** (left [NOT] IN (sub)); sub and left are taken over. off: the first token's offset. */
sql_expr *sql_expr_subquery(int kind, sql_expr *left, struct sql_select *sub, bool negated,
                            uint32_t off);
/* NEXT VALUE FOR name (op SQL_SEQ_NEXT) or CURRENT VALUE FOR name; name is taken over. */
sql_expr *sql_expr_sequence(int op, char *name, uint32_t off);
void sql_expr_free(sql_expr *e);

/* ---- Lists --------------------------------------------------------------------------- */
sql_expr_list *sql_expr_list_append(sql_expr_list *l, sql_expr *e);
void sql_expr_list_free(sql_expr_list *l);
void sql_split_free(sql_split *s);
sql_order_list *sql_order_list_append(sql_order_list *l, sql_expr *e, bool desc, int nulls);
void sql_order_list_free(sql_order_list *l);
/* Appends [family.]name (both taken over; family may be NULL). */
sql_colname_list *sql_colname_list_append(sql_colname_list *l, char *family, char *name,
                                          uint32_t off, bool desc);
void sql_colname_list_free(sql_colname_list *l);
/* Appends a select item: expr with alias (taken over), or a star when expr is NULL with
** nqual qualifier parts qual (taken over). */
sql_result_list *sql_result_list_append(sql_result_list *l, sql_expr *expr, char *alias,
                                        int nqual, char *qual[], uint32_t off);
void sql_result_list_free(sql_result_list *l);
sql_option_list *sql_option_list_append(sql_option_list *l, char *family, char *name,
                                        sql_expr *value, uint32_t off);
void sql_option_list_free(sql_option_list *l);
/* Appends a join item; table (or sub, a derived table, when table is NULL), alias, on and
** using are taken over (freed on failure). */
sql_join_list *sql_join_list_append(sql_join_list *l, int kind, bool natural, uint32_t off,
                                    char *table, sql_select *sub, uint32_t table_off,
                                    char *alias, uint32_t alias_off, sql_expr *on,
                                    sql_colname_list *using);
void sql_join_list_free(sql_join_list *l);
/* Appends a WITH item; name, cols and select are taken over (freed on failure). */
sql_cte_list *sql_cte_list_append(sql_cte_list *l, char *name, uint32_t off,
                                  sql_colname_list *cols, sql_select *select);
void sql_cte_list_free(sql_cte_list *l);

/* ---- Types, statements --------------------------------------------------------------- */
/* A type (name taken over); nargs 0..2 arguments in arg. */
sql_type *sql_type_new(char *name, int nargs, const int64_t *arg, uint32_t off);
void sql_type_free(sql_type *t);
sql_select *sql_select_new(void);
void sql_select_free(sql_select *s);
sql_create_table *sql_create_table_new(void);
/* Appends a column (family, name and type taken over). Returns 0, or -1 on OOM (the
** arguments are freed, the table is kept). */
int sql_create_table_add(sql_create_table *t, char *family, char *name, sql_type *type,
                         int nullability, bool pk, bool pk_desc, uint32_t off);
void sql_create_table_free(sql_create_table *t);
sql_create_index *sql_create_index_new(void);
void sql_create_index_free(sql_create_index *ci);
sql_drop *sql_drop_new(void);
void sql_drop_free(sql_drop *d);
void sql_alter_table_free(sql_alter_table *a);
void sql_create_sequence_free(sql_create_sequence *c);
void sql_create_view_free(sql_create_view *v);
sql_upsert *sql_upsert_new(void);
void sql_upsert_free(sql_upsert *u);
sql_delete *sql_delete_new(void);
void sql_delete_free(sql_delete *d);
/* A statement of the given kind; the caller sets the union member. NULL on OOM. */
sql_stmt *sql_stmt_new(int kind, uint32_t off);
/* Frees a statement and everything it owns; NULL is fine. */
void sql_stmt_free(sql_stmt *s);

/* ---- Printing (sql/print.c) ---------------------------------------------------------- */
/* Printer flags. */
enum {
  SQL_PRINT_FULL_PARENS = 1 /* parenthesize every operator expression (precedence tests) */
};

/* Canonical SQL for a statement, without a trailing ';': keywords upper case, identifiers
** quoted only where needed, parentheses only where precedence needs them (or everywhere
** with SQL_PRINT_FULL_PARENS). Parsing the result gives an equal tree. Returns a malloc'd
** NUL-terminated string the caller frees, or NULL on OOM. */
char *sql_print_stmt(const sql_stmt *s, unsigned flags);
/* The same for one expression (EXPLAIN prints filters with it). */
char *sql_print_expr(const sql_expr *e, unsigned flags);
/* An identifier as SQL text: as it is when the tokenizer gives it back unchanged, else
** "quoted" (with "" for "). malloc'd (the caller frees), NULL on OOM. */
char *sql_print_ident(const char *name);

#endif /* ROWAN_SQL_AST_H */
