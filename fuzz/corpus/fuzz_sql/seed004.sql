CREATE INDEX idx_loc ON readings (meta.location) INCLUDE (meta.model, readings.temp)
