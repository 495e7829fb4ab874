"""Wire formats: the versioned export document and the JSON-line event log."""
