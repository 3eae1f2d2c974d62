SELECT COUNT(DISTINCT sensor_id) FROM readings
