-- tests/sql/corpus/parse_ok.sql: statements that must parse, one per ';'. test_parse.c
-- parses each, prints it, parses the print and prints again: both prints must be equal.
-- Covers every statement form and expression form of docs/SQL.md.

-- CREATE TABLE
CREATE TABLE t (k INTEGER PRIMARY KEY)
