/*
** sql/parse.y: the Lemon grammar of Rowan's Phoenix-style SQL dialect.
**
** The build runs lemon on this file (sql/CMakeLists.txt); parse.c and parse.h land in the
** build tree and are never committed. One parse handles one statement: the driver in
** sql/parser.c feeds tokens, a final SEMI (real or synthetic) and the end marker.
**
** Actions only connect pieces: each calls one sql_pc_* helper (sql/parser.c) or an AST
** constructor (sql/ast.c). Every pointer-valued nonterminal has a %destructor, so a syntax
** error in the middle of a statement frees whatever was built. Errors, the parameter
** counter and the result live in the %extra_context (sql_pctx, sql/parse_int.h).
**
** Operator precedence, lowest first (ANSI order; docs/SQL.md has the table, and
** sql/print.c mirrors it in prec_of(): keep them in step, ORDER PRECEDENCE):
**   OR; AND; NOT; IS [NOT] NULL; = <> != < <= > >=; [NOT] BETWEEN/IN/LIKE/ILIKE; ESCAPE;
**   ||; + -; * / %; unary + -; the subscript a[i].
** NOT directly before IN, BETWEEN, LIKE or ILIKE reaches the grammar as NOTX (the driver
** looks one token ahead, as PostgreSQL's lexer does) so "a = b NOT IN (1)" groups exactly
** like "a = b IN (1)".
**
** Not here: tokenizing (sql/tokenize.c), names and types resolution (planner/).
*/

%name sql_lemon
%token_prefix TK_
%token_type {sql_token}
%extra_context {sql_pctx *ctx}
%stack_size 3000
%start_symbol input

%include {
#include <stdlib.h>
#include <string.h>

#include "sql/parse_int.h"
}

%syntax_error {
  /* The driver collected the expected tokens before feeding this one (sql_lemonAccepts). */
  sql_pc_syntax_error(ctx, yymajor, TOKEN);
}
%stack_overflow { sql_pc_overflow(ctx); }

/* Tokens the tokenizer produces that the grammar never sees. */
%token SPACE COMMENT ILLEGAL.

/* Non-reserved keywords: usable as names wherever the keyword itself is not expected. */
%fallback ID ADD ALTER ANALYZE ARRAY ASC BEGIN BY CHECK COLUMN COMMIT DESC EXISTS FIRST IF
  INCLUDE INDEX KEY LAST NULLS ROLLBACK SEQUENCE SET TABLE WITHIN.
%fallback ID CASCADE VIEW.

/* The join words are keywords (a fallback to ID would let "FROM a JOIN b" take JOIN as a's
   alias), and names through nm wherever a name may be written except as a table's alias
   without AS (tas_opt). */
%token CROSS FULL INNER JOIN LEFT NATURAL OUTER RIGHT USING.

/* ORDER PRECEDENCE (see the header comment and sql/print.c prec_of). */
%left OR.
%left AND.
%right NOT.
%nonassoc IS.
%nonassoc EQ NE LT LE GT GE.
%nonassoc BETWEEN IN LIKE ILIKE NOTX.
%right ESCAPE.
%left CONCAT.
%left PLUS MINUS.
%left STAR SLASH REM.
%right UMINUS.
%left LBRACKET.

/* ---- Statements --------------------------------------------------------------------- */
input ::= cmd(C) SEMI. { sql_pc_done(ctx, C); }

%type cmd {sql_stmt *}
%destructor cmd { sql_stmt_free($$); }
%type explainable {sql_stmt *}
%destructor explainable { sql_stmt_free($$); }

cmd(A) ::= explainable(X). { A = X; }
cmd(A) ::= EXPLAIN analyze_opt(Z) explainable(X). { A = sql_pc_explain(ctx, X, Z); }
cmd(A) ::= EXPLAIN analyze_opt(Z) LP explain_opts(O) RP explainable(X).
  { A = sql_pc_explain(ctx, X, Z | O); }

%type analyze_opt {int}
analyze_opt(A) ::= . { A = 0; }
analyze_opt(A) ::= ANALYZE. { A = SQL_EXPLAIN_ANALYZE; }

/* EXPLAIN's options in parentheses, PostgreSQL's form: (ANALYZE, FORMAT JSON). The words are
   names (no new reserved word); sql_pc_explain_opt checks them. */
%type explain_opts {int}
explain_opts(A) ::= explain_opt(O). { A = O; }
explain_opts(A) ::= explain_opts(L) COMMA explain_opt(O). { A = L | O; }
%type explain_opt {int}
explain_opt(A) ::= nm(N). { A = sql_pc_explain_opt(ctx, N, NULL); }
explain_opt(A) ::= nm(N) nm(V). { A = sql_pc_explain_opt(ctx, N, &V); }

explainable(A) ::= select(S). { A = sql_pc_stmt_select(ctx, S); }
explainable(A) ::= UPSERT(K) hint_opt(H) INTO nm(T) upcols_opt(C) VALUES valueslist(V).
  { A = sql_pc_upsert(ctx, K, H, T, C, V, NULL); }
explainable(A) ::= UPSERT(K) hint_opt(H) INTO nm(T) upcols_opt(C) select(S).
  { A = sql_pc_upsert(ctx, K, H, T, C, NULL, S); }
explainable(A) ::= DELETE(K) hint_opt(H) FROM nm(T) dyncols_opt(D) where_opt(W) limit_opt(L).
  { A = sql_pc_delete(ctx, K, H, T, D, W, L); }

cmd(A) ::= CREATE(K) TABLE ifnotexists(E) nm(N) LP tbody(B) RP opts_opt(O).
  { A = sql_pc_create_table(ctx, K, E, N, B, O, NULL); }
cmd(A) ::= CREATE(K) TABLE ifnotexists(E) nm(N) LP tbody(B) RP split_on(S).
  { A = sql_pc_create_table(ctx, K, E, N, B, NULL, S); }
cmd(A) ::= CREATE(K) TABLE ifnotexists(E) nm(N) LP tbody(B) RP optlist(O) split_on(S).
  { A = sql_pc_create_table(ctx, K, E, N, B, O, S); }
cmd(A) ::= DROP(K) TABLE ifexists(E) nm(N).
  { sql_name none = {NULL, 0}; A = sql_pc_drop(ctx, SQL_STMT_DROP_TABLE, K, E, N, none); }
cmd(A) ::= CREATE(K) INDEX ifnotexists(E) nm(N) ON nm(T) LP sortlist(S) RP include_opt(I)
           opts_opt(O).
  { A = sql_pc_create_index(ctx, K, E, N, T, S, I, O); }
cmd(A) ::= DROP(K) INDEX ifexists(E) nm(N) ON nm(T).
  { A = sql_pc_drop(ctx, SQL_STMT_DROP_INDEX, K, E, N, T); }
cmd(A) ::= CHECK(K) INDEX nm(N) ON nm(T).
  { A = sql_pc_drop(ctx, SQL_STMT_CHECK_INDEX, K, 0, N, T); }
/* Phoenix's ALTER TABLE forms; ADD COLUMN as in standard SQL and SQLite too. */
cmd(A) ::= ALTER(K) TABLE nm(N) ADD ifnotexists(E) tcols(C).
  { A = sql_pc_alter(ctx, K, N, SQL_ALTER_ADD, E, C, NULL, NULL); }
cmd(A) ::= ALTER(K) TABLE nm(N) ADD COLUMN ifnotexists(E) tcols(C).
  { A = sql_pc_alter(ctx, K, N, SQL_ALTER_ADD, E, C, NULL, NULL); }
cmd(A) ::= ALTER(K) TABLE nm(N) DROP COLUMN ifexists(E) collist(L).
  { A = sql_pc_alter(ctx, K, N, SQL_ALTER_DROP_COLUMN, E, NULL, L, NULL); }
cmd(A) ::= ALTER(K) TABLE nm(N) SET optlist(O).
  { A = sql_pc_alter(ctx, K, N, SQL_ALTER_SET, 0, NULL, NULL, O); }
/* Views (Phoenix's CREATE VIEW; sql/parse_view.c): the view's own columns in parentheses,
   then its query; DROP TABLE / DROP VIEW ... CASCADE drop the views over it too. */
cmd(A) ::= CREATE(K) VIEW ifnotexists(E) nm(N) AS select(S).
  { A = sql_pc_create_view(ctx, K, E, N, NULL, S); }
cmd(A) ::= CREATE(K) VIEW ifnotexists(E) nm(N) LP tcols(C) RP AS select(S).
  { A = sql_pc_create_view(ctx, K, E, N, C, S); }
/* Phoenix's ALTER VIEW: the view's own columns only (exec/ddl_view_cols.c). */
cmd(A) ::= ALTER(K) VIEW nm(N) ADD ifnotexists(E) tcols(C).
  { A = sql_pc_alter_view(ctx, sql_pc_alter(ctx, K, N, SQL_ALTER_ADD, E, C, NULL, NULL)); }
cmd(A) ::= ALTER(K) VIEW nm(N) ADD COLUMN ifnotexists(E) tcols(C).
  { A = sql_pc_alter_view(ctx, sql_pc_alter(ctx, K, N, SQL_ALTER_ADD, E, C, NULL, NULL)); }
cmd(A) ::= ALTER(K) VIEW nm(N) DROP COLUMN ifexists(E) collist(L).
  { A = sql_pc_alter_view(ctx, sql_pc_alter(ctx, K, N, SQL_ALTER_DROP_COLUMN, E, NULL, L, NULL)); }
cmd(A) ::= DROP(K) VIEW ifexists(E) nm(N).
  { sql_name none = {NULL, 0}; A = sql_pc_drop(ctx, SQL_STMT_DROP_VIEW, K, E, N, none); }
cmd(A) ::= DROP(K) VIEW ifexists(E) nm(N) CASCADE.
  { sql_name none = {NULL, 0};
    A = sql_pc_cascade(ctx, sql_pc_drop(ctx, SQL_STMT_DROP_VIEW, K, E, N, none)); }
cmd(A) ::= DROP(K) TABLE ifexists(E) nm(N) CASCADE.
  { sql_name none = {NULL, 0};
    A = sql_pc_cascade(ctx, sql_pc_drop(ctx, SQL_STMT_DROP_TABLE, K, E, N, none)); }
cmd(A) ::= BEGIN(K). { A = sql_pc_simple(ctx, SQL_STMT_BEGIN, K); }
cmd(A) ::= COMMIT(K). { A = sql_pc_simple(ctx, SQL_STMT_COMMIT, K); }
cmd(A) ::= ROLLBACK(K). { A = sql_pc_simple(ctx, SQL_STMT_ROLLBACK, K); }

%type ifexists {int}
ifexists(A) ::= . { A = 0; }
ifexists(A) ::= IF EXISTS. { A = 1; }
%type ifnotexists {int}
ifnotexists(A) ::= . { A = 0; }
ifnotexists(A) ::= IF NOT EXISTS. { A = 1; }

/* ---- Names --------------------------------------------------------------------------- */
%type nm {sql_name}
%destructor nm { free($$.z); }
nm(A) ::= ID(X). { A = sql_pc_name(ctx, X); }
nm(A) ::= DATE(X). { A = sql_pc_name(ctx, X); }
nm(A) ::= TIME(X). { A = sql_pc_name(ctx, X); }
nm(A) ::= TIMESTAMP(X). { A = sql_pc_name(ctx, X); }
nm(A) ::= joinword(X). { A = sql_pc_name(ctx, X); }
%type joinword {sql_token}
joinword(A) ::= CROSS(X). { A = X; }
joinword(A) ::= FULL(X). { A = X; }
joinword(A) ::= INNER(X). { A = X; }
joinword(A) ::= JOIN(X). { A = X; }
joinword(A) ::= LEFT(X). { A = X; }
joinword(A) ::= NATURAL(X). { A = X; }
joinword(A) ::= OUTER(X). { A = X; }
joinword(A) ::= RIGHT(X). { A = X; }
joinword(A) ::= USING(X). { A = X; }

%type qname {sql_qname}
%destructor qname { free($$.family.z); free($$.name.z); }
qname(A) ::= nm(X). { A.family.z = NULL; A.family.off = 0; A.name = X; }
qname(A) ::= nm(F) DOT nm(X). { A.family = F; A.name = X; }

%type collist {sql_colname_list *}
%destructor collist { sql_colname_list_free($$); }
collist(A) ::= qname(Q). { A = sql_pc_colname(ctx, NULL, Q, 0); }
collist(A) ::= collist(L) COMMA qname(Q). { A = sql_pc_colname(ctx, L, Q, 0); }

%type collist_opt {sql_colname_list *}
%destructor collist_opt { sql_colname_list_free($$); }
collist_opt(A) ::= . { A = NULL; }
collist_opt(A) ::= LP collist(L) RP. { A = L; }

/* UPSERT's column list: a column with a type is one of Phoenix's dynamic columns. */
%type upcols_opt {sql_colname_list *}
%destructor upcols_opt { sql_colname_list_free($$); }
upcols_opt(A) ::= . { A = NULL; }
upcols_opt(A) ::= LP upcols(L) RP. { A = L; }
%type upcols {sql_colname_list *}
%destructor upcols { sql_colname_list_free($$); }
upcols(A) ::= qname(Q). { A = sql_pc_dyncol(ctx, NULL, Q, NULL); }
upcols(A) ::= qname(Q) typetoken(Y). { A = sql_pc_dyncol(ctx, NULL, Q, Y); }
upcols(A) ::= upcols(L) COMMA qname(Q). { A = sql_pc_dyncol(ctx, L, Q, NULL); }
upcols(A) ::= upcols(L) COMMA qname(Q) typetoken(Y). { A = sql_pc_dyncol(ctx, L, Q, Y); }

/* A table's dynamic columns in FROM (Phoenix): t [AS alias] (f.c TYPE, ...). */
%type dyncols_opt {sql_colname_list *}
%destructor dyncols_opt { sql_colname_list_free($$); }
dyncols_opt(A) ::= . { A = NULL; }
dyncols_opt(A) ::= LP dyncols(L) RP. { A = L; }
%type dyncols {sql_colname_list *}
%destructor dyncols { sql_colname_list_free($$); }
dyncols(A) ::= qname(Q) typetoken(Y). { A = sql_pc_dyncol(ctx, NULL, Q, Y); }
dyncols(A) ::= dyncols(L) COMMA qname(Q) typetoken(Y). { A = sql_pc_dyncol(ctx, L, Q, Y); }

/* ---- CREATE TABLE and CREATE INDEX ----------------------------------------------------- */
%type tbody {sql_create_table *}
%destructor tbody { sql_create_table_free($$); }
%type tcols {sql_create_table *}
%destructor tcols { sql_create_table_free($$); }
tbody(A) ::= tcols(T). { A = T; }
tbody(A) ::= tcols(T) COMMA CONSTRAINT nm(N) PRIMARY KEY LP pklist(P) RP.
  { A = sql_pc_pk(ctx, T, N, P); }
/* Phoenix also takes the constraint without the comma before it. */
tbody(A) ::= tcols(T) CONSTRAINT nm(N) PRIMARY KEY LP pklist(P) RP.
  { A = sql_pc_pk(ctx, T, N, P); }
tcols(A) ::= qname(Q) typetoken(Y) nullness(N) colpk(P).
  { A = sql_pc_coldef(ctx, NULL, Q, Y, N, P); }
tcols(A) ::= tcols(T) COMMA qname(Q) typetoken(Y) nullness(N) colpk(P).
  { A = sql_pc_coldef(ctx, T, Q, Y, N, P); }

%type nullness {int}
nullness(A) ::= . { A = 0; }
nullness(A) ::= NULL. { A = 1; }
nullness(A) ::= NOT NULL. { A = 2; }
%type colpk {int}
colpk(A) ::= . { A = 0; }
colpk(A) ::= PRIMARY KEY sortorder(D). { A = D ? 2 : 1; }

%type pklist {sql_colname_list *}
%destructor pklist { sql_colname_list_free($$); }
pklist(A) ::= qname(Q) sortorder(D). { A = sql_pc_colname(ctx, NULL, Q, D); }
pklist(A) ::= pklist(L) COMMA qname(Q) sortorder(D). { A = sql_pc_colname(ctx, L, Q, D); }

/* ---- ROW_TIMESTAMP (Phoenix): a key column whose value is every cell's timestamp ---------
   `ts TIMESTAMP NOT NULL ROW_TIMESTAMP` (key named by the constraint), `ts TIMESTAMP NOT
   NULL PRIMARY KEY [ASC|DESC] ROW_TIMESTAMP`, or `PRIMARY KEY (k, ts [ASC|DESC]
   ROW_TIMESTAMP)`. Bit 4 of colpk and of the pklist sort order carries the mark. */
%fallback ID ROW_TIMESTAMP.
colpk(A) ::= ROW_TIMESTAMP. { A = 4; }
colpk(A) ::= PRIMARY KEY sortorder(D) ROW_TIMESTAMP. { A = (D ? 2 : 1) | 4; }
pklist(A) ::= qname(Q) sortorder(D) ROW_TIMESTAMP. { A = sql_pc_colname(ctx, NULL, Q, D | 4); }
pklist(A) ::= pklist(L) COMMA qname(Q) sortorder(D) ROW_TIMESTAMP.
  { A = sql_pc_colname(ctx, L, Q, D | 4); }

/* ---- Time travel: a table read as it was at a time (UTC) -------------------------------
   Oracle's `FROM t AS OF TIMESTAMP '...'` and SQL:2011's `FROM t FOR SYSTEM_TIME AS OF
   TIMESTAMP '...'`, before the alias. The clause is recorded for the statement
   (sql_pc_as_of); the binder checks where it may apply. OF, FOR and SYSTEM_TIME stay names
   elsewhere, but not as an alias right after a table name. */
%fallback ID OF FOR SYSTEM_TIME.
fromitem(A) ::= nm(T) asof tas_opt(N) dyncols_opt(D).
  { A.table = T; A.alias = N; A.sub = NULL; A.joins = NULL; A.dyn = D; }
asof ::= AS(K) OF TIMESTAMP STRING(S). { sql_pc_as_of(ctx, K, S); }
asof ::= FOR(K) SYSTEM_TIME AS OF TIMESTAMP STRING(S). { sql_pc_as_of(ctx, K, S); }

%type typetoken {sql_type *}
%destructor typetoken { sql_type_free($$); }
%type typebase {sql_type *}
%destructor typebase { sql_type_free($$); }
typebase(A) ::= nm(N). { sql_token z = {NULL, 0}; A = sql_pc_type(ctx, N, 0, z, z); }
typebase(A) ::= nm(N) LP INTEGER(X) RP. { A = sql_pc_type(ctx, N, 1, X, X); }
typebase(A) ::= nm(N) LP INTEGER(X) COMMA INTEGER(Y) RP. { A = sql_pc_type(ctx, N, 2, X, Y); }
typetoken(A) ::= typebase(T). { A = T; }
/* Phoenix's array types: VARCHAR ARRAY, VARCHAR[], with an optional size (not enforced). */
typetoken(A) ::= typebase(T) ARRAY. { A = sql_pc_type_array(ctx, T); }
typetoken(A) ::= typebase(T) ARRAY LBRACKET INTEGER RBRACKET. { A = sql_pc_type_array(ctx, T); }
typetoken(A) ::= typebase(T) LBRACKET RBRACKET. { A = sql_pc_type_array(ctx, T); }
typetoken(A) ::= typebase(T) LBRACKET INTEGER RBRACKET. { A = sql_pc_type_array(ctx, T); }

%type opts_opt {sql_option_list *}
%destructor opts_opt { sql_option_list_free($$); }
%type optlist {sql_option_list *}
%destructor optlist { sql_option_list_free($$); }
opts_opt(A) ::= . { A = NULL; }
opts_opt(A) ::= optlist(L). { A = L; }
optlist(A) ::= qname(Q) EQ expr(V). { A = sql_pc_option(ctx, NULL, Q, V); }
optlist(A) ::= optlist(L) COMMA qname(Q) EQ expr(V). { A = sql_pc_option(ctx, L, Q, V); }

/* Phoenix's SPLIT ON (v1, v2, ...) after the options: the table's split points. An empty
   list is taken here so that CREATE TABLE can say what is wrong with it. (Not an optional
   nonterminal after opts_opt: Lemon would take SPLIT for the ID of an option name.) */
%fallback ID SPLIT.
%type split_on {sql_split *}
%destructor split_on { sql_split_free($$); }
split_on(A) ::= SPLIT(K) ON LP nexprlist(L) RP. { A = sql_pc_split(ctx, K, L); }
split_on(A) ::= SPLIT(K) ON LP RP. { A = sql_pc_split(ctx, K, NULL); }

%type include_opt {sql_colname_list *}
%destructor include_opt { sql_colname_list_free($$); }
include_opt(A) ::= . { A = NULL; }
include_opt(A) ::= INCLUDE LP collist(L) RP. { A = L; }

/* ---- UPSERT VALUES --------------------------------------------------------------------- */
%type valueslist {sql_expr_list *}
%destructor valueslist { sql_expr_list_free($$); }
valueslist(A) ::= LP(P) nexprlist(L) RP.
  { A = sql_pc_list(ctx, NULL, sql_pc_expr(ctx, sql_expr_row(L, sql_pc_off(ctx, P)))); }
valueslist(A) ::= valueslist(V) COMMA LP(P) nexprlist(L) RP.
  { A = sql_pc_list(ctx, V, sql_pc_expr(ctx, sql_expr_row(L, sql_pc_off(ctx, P)))); }

/* ---- SELECT ---------------------------------------------------------------------------- */
%type select {sql_select *}
%destructor select { sql_select_free($$); }
/* A query: [WITH ...] one SELECT or a compound of them, then the ORDER BY / LIMIT / OFFSET
   of the whole. The set operators are left-associative and of one precedence (SQLite's
   rule); a SELECT inside a compound takes no ORDER BY or LIMIT of its own. */
select(A) ::= with_opt(W) selectnowith(S) orderby_opt(O) limit_opt(L) offset_opt(M).
  { A = sql_pc_select_tail(ctx, W, S, O, L, M); }

%type selectnowith {sql_select *}
%destructor selectnowith { sql_select_free($$); }
selectnowith(A) ::= oneselect(S). { A = S; }
selectnowith(A) ::= selectnowith(L) setop(O) oneselect(R). { A = sql_pc_compound(ctx, L, O, R); }

%type setop {sql_joinop}
setop(A) ::= UNION(K). { A = sql_pc_joinop(ctx, SQL_SETOP_UNION, K); }
setop(A) ::= UNION(K) ALL. { A = sql_pc_joinop(ctx, SQL_SETOP_UNION_ALL, K); }
setop(A) ::= INTERSECT(K). { A = sql_pc_joinop(ctx, SQL_SETOP_INTERSECT, K); }
setop(A) ::= EXCEPT(K). { A = sql_pc_joinop(ctx, SQL_SETOP_EXCEPT, K); }

%type oneselect {sql_select *}
%destructor oneselect { sql_select_free($$); }
oneselect(A) ::= SELECT(K) hint_opt(H) distinct_opt(D) selcollist(C) from_opt(F) where_opt(W)
                 groupby_opt(G) having_opt(V).
  { A = sql_pc_select(ctx, K, H, D, C, F, W, G, V); }

/* WITH name [(cols)] AS (select), ...: common table expressions (not recursive). */
%type with_opt {sql_cte_list *}
%destructor with_opt { sql_cte_list_free($$); }
with_opt(A) ::= . { A = NULL; }
with_opt(A) ::= WITH ctelist(L). { A = L; }
%type ctelist {sql_cte_list *}
%destructor ctelist { sql_cte_list_free($$); }
ctelist(A) ::= nm(N) collist_opt(C) AS LP select(S) RP. { A = sql_pc_cte(ctx, NULL, N, C, S); }
ctelist(A) ::= ctelist(L) COMMA nm(N) collist_opt(C) AS LP select(S) RP.
  { A = sql_pc_cte(ctx, L, N, C, S); }

%type hint_opt {char *}
%destructor hint_opt { free($$); }
hint_opt(A) ::= . { A = NULL; }
hint_opt(A) ::= HINT(X). { A = sql_pc_hint(ctx, X); }

%type distinct_opt {int}
distinct_opt(A) ::= . { A = 0; }
distinct_opt(A) ::= ALL. { A = 0; }
distinct_opt(A) ::= DISTINCT. { A = 1; }

%type selcollist {sql_result_list *}
%destructor selcollist { sql_result_list_free($$); }
%type sclp {sql_result_list *}
%destructor sclp { sql_result_list_free($$); }
sclp(A) ::= . { A = NULL; }
sclp(A) ::= selcollist(L) COMMA. { A = L; }
selcollist(A) ::= sclp(L) expr(E) as_opt(N).
  { sql_name z = {NULL, 0}; A = sql_pc_result(ctx, L, E, N, 0, z, z, E ? E->off : 0); }
selcollist(A) ::= sclp(L) STAR(S).
  { sql_name z = {NULL, 0}; A = sql_pc_result(ctx, L, NULL, NULL, 0, z, z, sql_pc_off(ctx, S)); }
selcollist(A) ::= sclp(L) nm(X) DOT STAR.
  { sql_name z = {NULL, 0}; A = sql_pc_result(ctx, L, NULL, NULL, 1, X, z, X.off); }
selcollist(A) ::= sclp(L) nm(X) DOT nm(Y) DOT STAR.
  { A = sql_pc_result(ctx, L, NULL, NULL, 2, X, Y, X.off); }

%type as_opt {char *}
%destructor as_opt { free($$); }
as_opt(A) ::= . { A = NULL; }
as_opt(A) ::= AS nm(N). { A = N.z; }
as_opt(A) ::= nm(N). { A = N.z; }

%type from_opt {sql_from}
%destructor from_opt { free($$.table.z); free($$.alias.z); sql_select_free($$.sub);
                       sql_join_list_free($$.joins); sql_colname_list_free($$.dyn); }
from_opt(A) ::= . { A.table.z = NULL; A.table.off = 0; A.alias.z = NULL; A.alias.off = 0;
                    A.sub = NULL; A.joins = NULL; A.dyn = NULL; }
from_opt(A) ::= FROM fromitem(I) joins_opt(J). { A = I; A.joins = J; }

/* One FROM item: a table, or a derived table (SELECT ...), with an optional alias. */
%type fromitem {sql_from}
%destructor fromitem { free($$.table.z); free($$.alias.z); sql_select_free($$.sub);
                       sql_join_list_free($$.joins); sql_colname_list_free($$.dyn); }
fromitem(A) ::= nm(T) tas_opt(N) dyncols_opt(D).
  { A.table = T; A.alias = N; A.sub = NULL; A.joins = NULL; A.dyn = D; }
fromitem(A) ::= LP(P) select(S) RP tas_opt(N).
  { A.table.z = NULL; A.table.off = sql_pc_off(ctx, P); A.alias = N; A.sub = S; A.joins = NULL;
    A.dyn = NULL; }

/* A table's alias. Without AS it may not be a join word (JOIN, LEFT, ...: they start a join
   there), so "FROM t left" is a syntax error and "FROM t AS left" is not. */
%type tas_opt {sql_name}
%destructor tas_opt { free($$.z); }
tas_opt(A) ::= . { A.z = NULL; A.off = 0; }
tas_opt(A) ::= AS nm(N). { A = N; }
tas_opt(A) ::= ID(X). { A = sql_pc_name(ctx, X); }
tas_opt(A) ::= DATE(X). { A = sql_pc_name(ctx, X); }
tas_opt(A) ::= TIME(X). { A = sql_pc_name(ctx, X); }
tas_opt(A) ::= TIMESTAMP(X). { A = sql_pc_name(ctx, X); }

/* The FROM items after the first: comma joins and JOIN ... ON / USING, left to right. */
%type joins_opt {sql_join_list *}
%destructor joins_opt { sql_join_list_free($$); }
joins_opt(A) ::= . { A = NULL; }
joins_opt(A) ::= joins(L). { A = L; }
%type joins {sql_join_list *}
%destructor joins { sql_join_list_free($$); }
joins(A) ::= COMMA(K) fromitem(I).
  { A = sql_pc_join(ctx, NULL, sql_pc_joinop(ctx, SQL_JOIN_COMMA, K), I, NULL, NULL); }
joins(A) ::= joinop(O) fromitem(I) join_on(C) join_using(U).
  { A = sql_pc_join(ctx, NULL, O, I, C, U); }
joins(A) ::= joins(L) COMMA(K) fromitem(I).
  { A = sql_pc_join(ctx, L, sql_pc_joinop(ctx, SQL_JOIN_COMMA, K), I, NULL, NULL); }
joins(A) ::= joins(L) joinop(O) fromitem(I) join_on(C) join_using(U).
  { A = sql_pc_join(ctx, L, O, I, C, U); }

%type joinop {sql_joinop}
joinop(A) ::= JOIN(K). { A = sql_pc_joinop(ctx, SQL_JOIN_INNER, K); }
joinop(A) ::= INNER(K) JOIN. { A = sql_pc_joinop(ctx, SQL_JOIN_INNER, K); }
joinop(A) ::= LEFT(K) outer_opt JOIN. { A = sql_pc_joinop(ctx, SQL_JOIN_LEFT, K); }
joinop(A) ::= RIGHT(K) outer_opt JOIN. { A = sql_pc_joinop(ctx, SQL_JOIN_RIGHT, K); }
joinop(A) ::= FULL(K) outer_opt JOIN. { A = sql_pc_joinop(ctx, SQL_JOIN_FULL, K); }
joinop(A) ::= CROSS(K) JOIN. { A = sql_pc_joinop(ctx, SQL_JOIN_CROSS, K); }
joinop(A) ::= NATURAL(K) joinop(O). { A = O; A.natural = true; A.off = sql_pc_off(ctx, K); }
outer_opt ::= .
outer_opt ::= OUTER.

/* ON and USING are both optional to the grammar; the binder says which join needs which
   (and refuses both together). */
%type join_on {sql_expr *}
%destructor join_on { sql_expr_free($$); }
join_on(A) ::= . { A = NULL; }
join_on(A) ::= ON expr(X). { A = X; }
%type join_using {sql_colname_list *}
%destructor join_using { sql_colname_list_free($$); }
join_using(A) ::= . { A = NULL; }
join_using(A) ::= USING LP collist(L) RP. { A = L; }

%type where_opt {sql_expr *}
%destructor where_opt { sql_expr_free($$); }
where_opt(A) ::= . { A = NULL; }
where_opt(A) ::= WHERE expr(X). { A = X; }

%type groupby_opt {sql_expr_list *}
%destructor groupby_opt { sql_expr_list_free($$); }
groupby_opt(A) ::= . { A = NULL; }
groupby_opt(A) ::= GROUP BY nexprlist(L). { A = L; }

%type having_opt {sql_expr *}
%destructor having_opt { sql_expr_free($$); }
having_opt(A) ::= . { A = NULL; }
having_opt(A) ::= HAVING expr(X). { A = X; }

%type orderby_opt {sql_order_list *}
%destructor orderby_opt { sql_order_list_free($$); }
orderby_opt(A) ::= . { A = NULL; }
orderby_opt(A) ::= ORDER BY sortlist(L). { A = L; }

%type sortlist {sql_order_list *}
%destructor sortlist { sql_order_list_free($$); }
sortlist(A) ::= expr(E) sortorder(D) nulls_opt(N). { A = sql_pc_order(ctx, NULL, E, D, N); }
sortlist(A) ::= sortlist(L) COMMA expr(E) sortorder(D) nulls_opt(N).
  { A = sql_pc_order(ctx, L, E, D, N); }

%type sortorder {int}
sortorder(A) ::= . { A = 0; }
sortorder(A) ::= ASC. { A = 0; }
sortorder(A) ::= DESC. { A = 1; }
%type nulls_opt {int}
nulls_opt(A) ::= . { A = 0; }
nulls_opt(A) ::= NULLS FIRST. { A = 1; }
nulls_opt(A) ::= NULLS LAST. { A = 2; }

%type limit_opt {sql_expr *}
%destructor limit_opt { sql_expr_free($$); }
limit_opt(A) ::= . { A = NULL; }
limit_opt(A) ::= LIMIT expr(X). { A = X; }
%type offset_opt {sql_expr *}
%destructor offset_opt { sql_expr_free($$); }
offset_opt(A) ::= . { A = NULL; }
offset_opt(A) ::= OFFSET expr(X). { A = X; }

/* ---- Expressions ----------------------------------------------------------------------- */
%type expr {sql_expr *}
%destructor expr { sql_expr_free($$); }
%type nexprlist {sql_expr_list *}
%destructor nexprlist { sql_expr_list_free($$); }
nexprlist(A) ::= expr(E). { A = sql_pc_list(ctx, NULL, E); }
nexprlist(A) ::= nexprlist(L) COMMA expr(E). { A = sql_pc_list(ctx, L, E); }

expr(A) ::= LP expr(X) RP. { A = X; }
expr(A) ::= LP(P) expr(X) COMMA nexprlist(L) RP.
  { A = sql_pc_row(ctx, X, L, sql_pc_off(ctx, P)); }

expr(A) ::= NULL(X). { A = sql_pc_literal(ctx, SQL_LIT_NULL, X, sql_pc_off(ctx, X)); }
expr(A) ::= TRUE(X). { A = sql_pc_literal(ctx, SQL_LIT_TRUE, X, sql_pc_off(ctx, X)); }
expr(A) ::= FALSE(X). { A = sql_pc_literal(ctx, SQL_LIT_FALSE, X, sql_pc_off(ctx, X)); }
expr(A) ::= INTEGER(X). { A = sql_pc_literal(ctx, SQL_LIT_INTEGER, X, sql_pc_off(ctx, X)); }
expr(A) ::= DECIMAL(X). { A = sql_pc_literal(ctx, SQL_LIT_DECIMAL, X, sql_pc_off(ctx, X)); }
expr(A) ::= FLOAT(X). { A = sql_pc_literal(ctx, SQL_LIT_DOUBLE, X, sql_pc_off(ctx, X)); }
expr(A) ::= STRING(X). { A = sql_pc_literal(ctx, SQL_LIT_STRING, X, sql_pc_off(ctx, X)); }
expr(A) ::= BLOB(X). { A = sql_pc_literal(ctx, SQL_LIT_BLOB, X, sql_pc_off(ctx, X)); }
expr(A) ::= DATE(K) STRING(X). { A = sql_pc_literal(ctx, SQL_LIT_DATE, X, sql_pc_off(ctx, K)); }
expr(A) ::= TIME(K) STRING(X). { A = sql_pc_literal(ctx, SQL_LIT_TIME, X, sql_pc_off(ctx, K)); }
expr(A) ::= TIMESTAMP(K) STRING(X).
  { A = sql_pc_literal(ctx, SQL_LIT_TIMESTAMP, X, sql_pc_off(ctx, K)); }
expr(A) ::= VARIABLE(X). { A = sql_pc_param(ctx, X); }

expr(A) ::= nm(X). { sql_name z = {NULL, 0}; A = sql_pc_column(ctx, 1, X, z, z); }
expr(A) ::= nm(X) DOT nm(Y). { sql_name z = {NULL, 0}; A = sql_pc_column(ctx, 2, X, Y, z); }
expr(A) ::= nm(X) DOT nm(Y) DOT nm(Z). { A = sql_pc_column(ctx, 3, X, Y, Z); }

expr(A) ::= nm(F) LP RP. { A = sql_pc_func(ctx, F, NULL, false, false); }
expr(A) ::= nm(F) LP STAR RP. { A = sql_pc_func(ctx, F, NULL, false, true); }
expr(A) ::= nm(F) LP distinct_opt(D) nexprlist(L) RP. { A = sql_pc_func(ctx, F, L, D, false); }
/* EXTRACT(field FROM x): checked and rewritten to the field's function by sql_pc_extract. */
expr(A) ::= nm(F) LP distinct_opt(S) nm(U) FROM expr(X) RP.
  { A = sql_pc_extract(ctx, F, S, U, X); }
/* An ordered-set aggregate: PERCENTILE_CONT(0.9) WITHIN GROUP (ORDER BY x [ASC|DESC]). */
expr(A) ::= nm(F) LP distinct_opt(S) nexprlist(L) RP WITHIN GROUP LP ORDER BY expr(X)
           sortorder(D) RP.
  { A = sql_pc_within(ctx, F, S, L, X, D); }

expr(A) ::= CASE(K) case_operand(O) case_arms(L) case_else(E) END.
  { A = sql_pc_expr(ctx, sql_expr_case(O, L, E, sql_pc_off(ctx, K))); }
%type case_operand {sql_expr *}
%destructor case_operand { sql_expr_free($$); }
case_operand(A) ::= . { A = NULL; }
case_operand(A) ::= expr(X). { A = X; }
%type case_arms {sql_expr_list *}
%destructor case_arms { sql_expr_list_free($$); }
case_arms(A) ::= WHEN expr(W) THEN expr(T). { A = sql_pc_arm(ctx, NULL, W, T); }
case_arms(A) ::= case_arms(L) WHEN expr(W) THEN expr(T). { A = sql_pc_arm(ctx, L, W, T); }
%type case_else {sql_expr *}
%destructor case_else { sql_expr_free($$); }
case_else(A) ::= . { A = NULL; }
case_else(A) ::= ELSE expr(X). { A = X; }

/* ARRAY[e1, e2, ...] (Phoenix's array constructor) and the subscript a[i] (1-based). */
expr(A) ::= ARRAY(K) LBRACKET nexprlist(L) RBRACKET. { A = sql_pc_array(ctx, K, L); }
expr(A) ::= expr(X) LBRACKET expr(Y) RBRACKET. { A = sql_pc_subscript(ctx, X, Y); }

expr(A) ::= CAST(K) LP expr(X) AS typetoken(T) RP.
  { A = sql_pc_expr(ctx, sql_expr_cast(X, T, sql_pc_off(ctx, K))); }

expr(A) ::= MINUS(K) expr(X). [UMINUS]
  { A = sql_pc_expr(ctx, sql_expr_unary(SQL_OP_NEG, X, sql_pc_off(ctx, K))); }
expr(A) ::= PLUS(K) expr(X). [UMINUS]
  { A = sql_pc_expr(ctx, sql_expr_unary(SQL_OP_POS, X, sql_pc_off(ctx, K))); }
expr(A) ::= NOT(K) expr(X).
  { A = sql_pc_expr(ctx, sql_expr_unary(SQL_OP_NOT, X, sql_pc_off(ctx, K))); }

expr(A) ::= expr(X) OR expr(Y). { A = sql_pc_expr(ctx, sql_expr_binary(SQL_OP_OR, X, Y)); }
expr(A) ::= expr(X) AND expr(Y). { A = sql_pc_expr(ctx, sql_expr_binary(SQL_OP_AND, X, Y)); }
expr(A) ::= expr(X) EQ expr(Y). { A = sql_pc_expr(ctx, sql_expr_binary(SQL_OP_EQ, X, Y)); }
expr(A) ::= expr(X) NE expr(Y). { A = sql_pc_expr(ctx, sql_expr_binary(SQL_OP_NE, X, Y)); }
expr(A) ::= expr(X) LT expr(Y). { A = sql_pc_expr(ctx, sql_expr_binary(SQL_OP_LT, X, Y)); }
expr(A) ::= expr(X) LE expr(Y). { A = sql_pc_expr(ctx, sql_expr_binary(SQL_OP_LE, X, Y)); }
expr(A) ::= expr(X) GT expr(Y). { A = sql_pc_expr(ctx, sql_expr_binary(SQL_OP_GT, X, Y)); }
expr(A) ::= expr(X) GE expr(Y). { A = sql_pc_expr(ctx, sql_expr_binary(SQL_OP_GE, X, Y)); }
expr(A) ::= expr(X) CONCAT expr(Y).
  { A = sql_pc_expr(ctx, sql_expr_binary(SQL_OP_CONCAT, X, Y)); }
expr(A) ::= expr(X) PLUS expr(Y). { A = sql_pc_expr(ctx, sql_expr_binary(SQL_OP_ADD, X, Y)); }
expr(A) ::= expr(X) MINUS expr(Y). { A = sql_pc_expr(ctx, sql_expr_binary(SQL_OP_SUB, X, Y)); }
expr(A) ::= expr(X) STAR expr(Y). { A = sql_pc_expr(ctx, sql_expr_binary(SQL_OP_MUL, X, Y)); }
expr(A) ::= expr(X) SLASH expr(Y). { A = sql_pc_expr(ctx, sql_expr_binary(SQL_OP_DIV, X, Y)); }
expr(A) ::= expr(X) REM expr(Y). { A = sql_pc_expr(ctx, sql_expr_binary(SQL_OP_MOD, X, Y)); }

expr(A) ::= expr(X) IS NULL. { A = sql_pc_expr(ctx, sql_expr_isnull(X, false)); }
expr(A) ::= expr(X) IS NOT NULL. { A = sql_pc_expr(ctx, sql_expr_isnull(X, true)); }

expr(A) ::= expr(X) IN LP nexprlist(L) RP. [IN]
  { A = sql_pc_expr(ctx, sql_expr_in(X, L, false)); }
expr(A) ::= expr(X) NOTX IN LP nexprlist(L) RP. [IN]
  { A = sql_pc_expr(ctx, sql_expr_in(X, L, true)); }
/* Subqueries in expressions: a scalar (SELECT ...), EXISTS (SELECT ...), x IN (SELECT ...). */
expr(A) ::= LP(P) select(S) RP.
  { A = sql_pc_expr(ctx, sql_expr_subquery(SQL_E_SUBQUERY, NULL, S, false, sql_pc_off(ctx, P))); }
expr(A) ::= EXISTS(K) LP select(S) RP.
  { A = sql_pc_expr(ctx, sql_expr_subquery(SQL_E_EXISTS, NULL, S, false, sql_pc_off(ctx, K))); }
expr(A) ::= expr(X) IN LP select(S) RP. [IN]
  { A = sql_pc_expr(ctx, sql_expr_subquery(SQL_E_IN, X, S, false, 0)); }
expr(A) ::= expr(X) NOTX IN LP select(S) RP. [IN]
  { A = sql_pc_expr(ctx, sql_expr_subquery(SQL_E_IN, X, S, true, 0)); }
expr(A) ::= expr(X) BETWEEN expr(Y) AND expr(Z). [BETWEEN]
  { A = sql_pc_expr(ctx, sql_expr_between(X, Y, Z, false)); }
expr(A) ::= expr(X) NOTX BETWEEN expr(Y) AND expr(Z). [BETWEEN]
  { A = sql_pc_expr(ctx, sql_expr_between(X, Y, Z, true)); }

%type likeop {int}
likeop(A) ::= LIKE. { A = 0; }
likeop(A) ::= ILIKE. { A = 1; }
likeop(A) ::= NOTX LIKE. { A = 2; }
likeop(A) ::= NOTX ILIKE. { A = 3; }
expr(A) ::= expr(X) likeop(O) expr(Y). [LIKE]
  { A = sql_pc_expr(ctx, sql_expr_like(X, Y, NULL, O & 1, O >> 1)); }
expr(A) ::= expr(X) likeop(O) expr(Y) ESCAPE expr(Z). [LIKE]
  { A = sql_pc_expr(ctx, sql_expr_like(X, Y, Z, O & 1, O >> 1)); }

/* ---- Sequences (Phoenix's CREATE SEQUENCE, DROP SEQUENCE, NEXT / CURRENT VALUE FOR) ------
   The option words (START, INCREMENT, MINVALUE, MAXVALUE, CYCLE, CACHE) are names, checked
   by exec/ddl_sequence.c; WITH and BY after them are optional. "NEXT VALUE FOR" and
   "CURRENT VALUE FOR" reach the grammar as one token each (SEQNEXT, SEQCURRENT: the driver
   looks two tokens ahead, sql/parser.c), so NEXT, CURRENT and VALUE stay names. */
cmd(A) ::= CREATE(K) SEQUENCE ifnotexists(E) nm(N) seqopts(O).
  { A = sql_pc_create_sequence(ctx, K, E, N, O); }
cmd(A) ::= DROP(K) SEQUENCE ifexists(E) nm(N).
  { sql_name none = {NULL, 0}; A = sql_pc_drop(ctx, SQL_STMT_DROP_SEQUENCE, K, E, N, none); }
%type seqopts {sql_option_list *}
%destructor seqopts { sql_option_list_free($$); }
seqopts(A) ::= . { A = NULL; }
seqopts(A) ::= seqopts(L) nm(W). { A = sql_pc_seqopt(ctx, L, W, NULL); }
seqopts(A) ::= seqopts(L) nm(W) seqnum(V). { A = sql_pc_seqopt(ctx, L, W, V); }
seqopts(A) ::= seqopts(L) nm(W) WITH seqnum(V). { A = sql_pc_seqopt(ctx, L, W, V); }
seqopts(A) ::= seqopts(L) nm(W) BY seqnum(V). { A = sql_pc_seqopt(ctx, L, W, V); }
%type seqnum {sql_expr *}
%destructor seqnum { sql_expr_free($$); }
seqnum(A) ::= INTEGER(X). { A = sql_pc_literal(ctx, SQL_LIT_INTEGER, X, sql_pc_off(ctx, X)); }
seqnum(A) ::= PLUS INTEGER(X). { A = sql_pc_literal(ctx, SQL_LIT_INTEGER, X, sql_pc_off(ctx, X)); }
seqnum(A) ::= MINUS(K) INTEGER(X).
  { A = sql_pc_expr(ctx, sql_expr_unary(SQL_OP_NEG, sql_pc_literal(ctx, SQL_LIT_INTEGER, X,
                    sql_pc_off(ctx, X)), sql_pc_off(ctx, K))); }
expr(A) ::= SEQNEXT(K) nm(N). { A = sql_pc_seqval(ctx, K, N, SQL_SEQ_NEXT); }
expr(A) ::= SEQCURRENT(K) nm(N). { A = sql_pc_seqval(ctx, K, N, SQL_SEQ_CURRENT); }

/* ---- Lookahead check for error messages ------------------------------------------------ */
%code {
/* Would the parser, in its current state, take terminal major (after any reductions)?
** Simulates the reductions on state numbers only: the real stack is never changed, no
** action runs. Used by the driver before it feeds each token, so that on a syntax error
** it can list the terminals that the state before the default reductions would have
** taken. Returns 1 or 0. */
int sql_lemonAccepts(void *parser, int major) {
  yyParser *p = (yyParser *)parser;
  YYACTIONTYPE over[64]; /* states pushed by simulated reductions */
  int nover = 0;
  int real = (int)(p->yytos - p->yystack); /* top of the part of the real stack in use */
  if (major <= 0 || major >= YYNTOKEN) return 0;
  for (int guard = 0; guard < 100000; guard++) {
    YYACTIONTYPE st = nover ? over[nover - 1] : p->yystack[real].stateno;
    YYACTIONTYPE act = yy_find_shift_action((YYCODETYPE)major, st);
    if (act >= YY_MIN_REDUCE && act <= YY_MAX_REDUCE) {
      int rule = act - YY_MIN_REDUCE;
      int pop = -yyRuleInfoNRhs[rule];
      int k = pop < nover ? pop : nover;
      nover -= k;
      real -= pop - k;
      if (real < 0) return 0;
      YYACTIONTYPE below = nover ? over[nover - 1] : p->yystack[real].stateno;
      if (nover >= (int)(sizeof over / sizeof over[0])) return 1; /* too deep to tell */
      over[nover++] = yy_find_reduce_action(below, yyRuleInfoLhs[rule]);
    } else if (act <= YY_MAX_SHIFTREDUCE || act == YY_ACCEPT_ACTION) {
      return 1;
    } else {
      return 0;
    }
  }
  return 1;
}

/* 1 if terminal t falls back to ID (a non-reserved keyword). */
int sql_lemonIsFallback(int t) {
  return t >= 0 && t < (int)(sizeof yyFallback / sizeof yyFallback[0]) && yyFallback[t] != 0;
}

/* The number of terminal codes (TK_* values are 1 .. this - 1). */
int sql_lemonTokenCount(void) {
  return YYNTOKEN;
}
}
