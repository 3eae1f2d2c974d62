UPSERT INTO t (k) SELECT /*+ INDEX(s s_idx) */ k FROM s
