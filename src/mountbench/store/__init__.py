"""SQLite store: each sample is committed the moment it exists."""

from mountbench.store.store import Store, default_db_path

__all__ = ["Store", "default_db_path"]
