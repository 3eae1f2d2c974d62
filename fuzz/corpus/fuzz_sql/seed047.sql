SELECT ((((1))))
