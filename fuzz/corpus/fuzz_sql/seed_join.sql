SELECT a.k, b.v FROM t a LEFT OUTER JOIN u AS b ON a.k = b.k AND b.v > 1 JOIN w USING (k), x CROSS JOIN y NATURAL RIGHT JOIN z WHERE a.k IN (1, 2);
