explain select /*+ INDEX(t i) */ a from t
