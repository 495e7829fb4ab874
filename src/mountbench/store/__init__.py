"""SQLite store: each sample is committed the moment it exists."""

from mountbench.store.store import Store, StoreFull, check_writable, default_db_path

__all__ = ["Store", "StoreFull", "check_writable", "default_db_path"]
