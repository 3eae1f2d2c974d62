SELECT a FROM t /* before semicolon */
