SELECT a FROM t x WHERE x.a = 1
