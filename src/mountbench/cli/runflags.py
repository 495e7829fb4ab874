"""The flags of the run options (the fields of model.RunOptions) and their help: one entry a
field, in --help's order (the fields' order). cli/options.py makes them click options; a field
with no entry has no flag (``default_budget``: the CLI sets it; ``kind_options``: each kind
declares its own flags, kinds/). The values, defaults, stored names and ranges stay with the
fields (model.py): the records, the labs and the guest read those, never the help."""

from __future__ import annotations

from mountbench.model import DROP_MODES, Flag

RUN_FLAGS: dict[str, tuple[Flag, ...]] = {
    "presets": (Flag("--preset", "named suite (repeatable; default quick)", "NAME"),),
    "job_files": (Flag("--job", "fio job file, one workload per section (repeatable)", "FILE", path=True),),
    "only": (Flag("--only", "keep only workloads whose name matches (glob, repeatable), e.g. --only 'rnd*' "
                  "--only extract", "PATTERN"),),
    "sweeps": (Flag("--sweep", "run every fio workload at each value: bs=4k,64k,1M or bs=1k..16M (powers of two); "
                    "also iodepth, numjobs, size; several make a grid", "OPTION=VALUES"),),
    "baseline": (Flag("--baseline", "target the others are compared with (default: the first)", "LABEL"),),
    "repeat": (Flag("--repeat", "samples per cell"),),
    "warmup": (Flag("--warmup", "rounds run before the measured ones and thrown away, like hyperfine --warmup"),),
    "runtime": (Flag("--runtime", "runtime of every fio job and of every http load, e.g. 2.5 or 1s (wrk: whole "
                     "seconds)", "SECONDS"),),
    "size": (Flag("--size", "working set of each suite's largest workload, all its jobs and clones together, "
                  "e.g. 1G; every job scaled by one factor (the dry run says the space planned)", "SIZE",
                  "size_text"),),
    "seed": (Flag("--seed", "seed of the interleaved order (default: random, recorded)"),),
    "drop_caches": (Flag("--drop-caches", "drop page caches before samples (auto: before buffered workloads, as "
                         "root)", choices=DROP_MODES),),
    "until": (Flag("--until", "after --repeat rounds, add rounds for each comparison until it is decided: ranked, "
                   "the same within PRECISION, or known to PRECISION (e.g. --until 5%); fio samples then run "
                   "0.5 s unless --runtime or --budget is given", "PRECISION", "until_text"),),
    "max_repeat": (Flag("--max-repeat", "with --until or --budget: the most rounds a cell gets"),),
    "budget": (Flag("--budget", "finish within DURATION (e.g. 60s, 5m): runtimes and rounds are chosen to fit, the "
                    "rest goes to the least decided comparisons (implies --until 5% unless given)", "DURATION",
                    "budget_text"),),
    "watch": (Flag("--watch", "measure this host process (and its children) while each sample runs: CPU, CPU per "
                   "GiB, peak memory, context switches as host.* metrics (repeatable), e.g. --watch sshfs; LABEL= "
                   "measures it only around that target's samples, e.g. --watch sshfs=sshfs", "[LABEL=]NAME|PID"),),
    "keep": (Flag("--keep", "keep each target's scratch data"),),
    "fsync_writes": (Flag("--fsync-writes", "also run every fio workload that writes with end_fsync=1 (as "
                          "NAME-fsync): the rate with the data on stable storage, beside the one a volatile cache "
                          "below may absorb"),),
    "clients": (
        Flag("--client", "a machine running 'fio --server' or 'mountbench serve', or ssh://[USER@]HOST[:PORT] for "
             "one mountbench starts fio on over SSH: the fio workloads run on every --client at once (repeatable); "
             "each target is then a shared directory, at the same path here and there", "HOST[:PORT]"),
        Flag("--hosts-file", "more clients, one a line as --client takes them; a bare host name means ssh://HOST",
             "FILE", "hosts_file", path=True),
    ),
    "client_counts": (Flag("--clients", "scaling: run each workload with the first N of the --client machines, for "
                           "each N, e.g. 1,2,4", "N,N,...", "client_counts_text"),),
}  # fmt: skip
