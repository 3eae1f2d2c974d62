SELECT /*+ INDEX(t i) */ a FROM t WHERE (a, b) IN ((1, 2))
