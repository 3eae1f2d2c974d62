UPSERT INTO t (k, v) VALUES (1, 'a'), (2, 'b'), (3, NULL)
