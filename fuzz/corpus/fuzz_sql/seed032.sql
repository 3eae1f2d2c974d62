SELECT a FROM t WHERE a || b LIKE 'x%'
