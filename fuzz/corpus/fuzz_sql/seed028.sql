SELECT a FROM t WHERE a IN (?, ?, ?)
