"""What the columns mean: raw values (labels, score files, logs) -> the verdict table."""
