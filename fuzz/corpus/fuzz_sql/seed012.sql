SELECT meta.* FROM readings
