"""Data layer: locate the data directory, load corpora and lexicons, annotate once with spaCy."""
