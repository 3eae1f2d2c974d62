SELECT a FROM t WHERE (sensor_id, ts) > ('s1', TIMESTAMP '2024-01-01 00:00:00') AND (sensor_id, ts) <= (?, ?)
