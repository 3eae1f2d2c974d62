-- SELECT: lists and clauses
SELECT * FROM t
