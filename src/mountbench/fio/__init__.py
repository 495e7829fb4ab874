"""fio, the I/O engine: everything that knows fio's own formats.

- ``binary``: finding fio, its version, engines and the run's clock source;
- ``jobfile``: job files parsed (comments cut as fio cuts them), checked for placement, sized
  and rendered per target, as written;
- ``jobgroups``: which sections fio runs together (one workload) and the time its schedule takes;
- ``engines``: fio's engines by what they touch (network, object store, device, no I/O);
- ``parse``: fio's JSON output to metrics (pure);
- ``sweeps``: --sweep values, grid points and names, and sweeps recognised in job files.

May import: the ground floor, analysis/ (the sweep vocabulary: labels, placement options).
Used by kinds/ (the fio and fioclients kinds) and clients/.
"""
