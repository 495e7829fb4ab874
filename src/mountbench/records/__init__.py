"""Wire formats: the versioned export document and the JSON-line event log; validate.py checks
every field of a run read from elsewhere before anything is stored.

- ``codec``: a run's config, workloads and samples to and from their stored JSON, migrating
  older versions (a workload's description comes from its kind when it was stored without one);
- ``export``: the export document (`--json`, `export`, `import`);
- ``events``: the JSON-line event log;
- ``validate``: every field of a run read from a file or an older store, checked.

May import: the ground floor (model, labfacts, errors, units), host/ (the user's files, read with bounds)
and kinds/ (a stored workload's description). Imported by store/, engine/, report/, the labs and cli/.
"""
