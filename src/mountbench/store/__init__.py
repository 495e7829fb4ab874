"""SQLite store: each sample is committed the moment it exists; older schemas are migrated
step by step (schema.py), another program's database is refused unchanged.

May import: the ground floor (model, labfacts, errors, units) and records/ (the codec of what it stores).
Imported by engine/, the labs and cli/.
"""

from mountbench.store.store import Store, StoreFull, check_writable, default_db_path

__all__ = ["Store", "StoreFull", "check_writable", "default_db_path"]
