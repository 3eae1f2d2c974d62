SELECT ((((a)))) FROM t
