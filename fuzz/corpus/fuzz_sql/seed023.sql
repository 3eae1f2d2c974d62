SELECT -a, +a, - a, -(-a), -(a + b), -a * b, -(a * b) FROM t
