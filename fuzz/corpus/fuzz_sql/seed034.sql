-- Row value constructors
SELECT a FROM t WHERE (a, b) > (1, 2)
