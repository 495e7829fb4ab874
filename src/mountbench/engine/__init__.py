"""The engine: from a request to stored samples. request.py (options and targets, or a
stored run for --resume, to a checked RunRequest), workloads.py (presets and job files
with the command line's overrides and sweeps), plan.py (targets × workloads × rounds,
seeded interleaving), budget.py (--budget: runtimes that fit), session.py (takes each
sample, stores it at once, cleans up; never prints) and caches.py (page-cache dropping);
eviction.py (whether caches can be dropped here, asked before a run) and upfront.py (what a run
says once before its first sample: what needs root here and what that changes, and a results
database a container would take with it).

May import: the ground floor (model, labfacts, errors, units), analysis/, kinds/, fio/, host/,
clients/, presets/, store/ and records/. Never cli/ or report/. What a workload kind means is asked
of its kind (kinds.kind_of), never decided here by its name.
"""
