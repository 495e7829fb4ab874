"""Wire formats: the versioned export document and the JSON-line event log; validate.py checks
every field of a run read from elsewhere before anything is stored."""
