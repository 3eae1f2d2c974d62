SELECT /*+*/ a FROM t
