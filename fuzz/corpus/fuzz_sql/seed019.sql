SELECT t.meta.location FROM readings t
