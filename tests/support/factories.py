"""Synthetic runs for tests of the pure parts (summary, reports, export)."""

from __future__ import annotations

from mountbench.kinds import make_workload, resolved_options
from mountbench.model import Caveat, KindOptions, RunConfig, RunData, Sample, Target, TargetInfo, TargetRecord, Workload

DEFAULTS = resolved_options(KindOptions())  # every kind option at its default, as a run records them
INFO = TargetInfo("tmpfs", "/dev/shm", "tmpfs", "rw", 10**10, 2 * 10**10, True, "accepted")


def fio_workload(name: str, rw: str = "randread", bs: str = "4k") -> Workload:
    spec = {"section": name, "options": [["rw", rw], ["bs", bs]]}
    return make_workload(name, "fio", name.upper(), "preset:test", spec)


def make_run(
    values: dict[tuple[str, str], list[float]],
    metric: str = "read.iops",
    *,
    run_id: str = "r1",
    errors: dict[tuple[str, str], str] | None = None,
    caveats: dict[tuple[str, str], tuple[Caveat, ...]] | None = None,
    workloads: list[Workload] | None = None,
    baseline: str | None = None,
    host: dict | None = None,
) -> RunData:
    labels = list(dict.fromkeys(t for t, _ in values))
    names = list(dict.fromkeys(w for _, w in values))
    samples = []
    for (target, workload), series in values.items():
        for i, v in enumerate(series):
            samples.append(Sample(target, workload, i, True, {metric: v}, (caveats or {}).get((target, workload), ())))
    for (target, workload), message in (errors or {}).items():
        samples.append(Sample(target, workload, 99, False, {}, (), error=message))
    return RunData(
        id=run_id,
        created_at=1.7e9,
        finished_at=1.7e9 + 60,
        status="complete",
        command="mountbench run",
        config=RunConfig(repeat=3, seed=1, baseline=baseline or labels[0], drop_caches="auto", kind_options=DEFAULTS),
        host=host
        or {
            "hostname": "h",
            "os": "Linux 6.1",
            "cpu_model": "cpu",
            "cpu_count": 2,
            "ram_bytes": 2**34,
            "fio_version": "fio-3.33",
            "mountbench_version": "0.1.0",
            "kernel": "6.1",
        },
        targets=tuple(TargetRecord(Target(label, f"/{label}"), INFO) for label in labels),
        workloads=tuple(workloads or [fio_workload(n) for n in names]),
        samples=tuple(samples),
    )


STARVED_VALUES = {  # a default-budget run whose budget ran out: 1-2 samples a cell
    ("ram", "w1"): [100.0, 104.0],
    ("disk", "w1"): [50.0, 52.0],
    ("ram", "w2"): [200.0],
    ("disk", "w2"): [20.0, 21.0],
}


def starved_run(extra: dict[tuple[str, str], list[float]] | None = None) -> RunData:
    """A default-budget run whose budget ran out (STARVED_VALUES, plus ``extra`` cells), --until
    allowing 12 rounds: what the reports must count and state as it is."""
    import dataclasses

    values = {**STARVED_VALUES, **(extra or {})}
    names = sorted({workload for _, workload in values})
    run = make_run(values, workloads=[fio_workload(name) for name in names])
    return dataclasses.replace(run, config=dataclasses.replace(run.config, until=0.05, max_repeat=12, budget=36.0))


def history_runs(
    levels: list[float],
    *,
    workloads: tuple[str, ...] = ("w1", "w2", "w3"),
    seed: int = 0,
    run_sd: float = 0.04,
    sample_sd: float = 0.03,
    samples: int = 3,
    label: str = "ram",
    start: float = 1.75e9,
) -> list[RunData]:
    """One run a day of ``label`` (path /label, tmpfs), run i at ``levels[i]`` × 1000 IOPS in every workload:
    each run's level drawn around it (``run_sd``, log scale: what differs between runs) and its samples around
    that (``sample_sd``); ids in time order. What `mountbench history` reads, made without fio."""
    import dataclasses

    import numpy as np

    rng = np.random.default_rng(seed)
    runs = []
    for index, level in enumerate(levels):
        values = {}
        for name in workloads:
            own = 1000.0 * level * float(np.exp(rng.normal(0, run_sd)))
            values[(label, name)] = [own * float(v) for v in np.exp(rng.normal(0, sample_sd, samples))]
        run = make_run(values, run_id=f"2026110{index // 10}-{index % 10:02d}0000-hist", workloads=[
            fio_workload(name) for name in workloads])  # fmt: skip
        runs.append(dataclasses.replace(run, created_at=start + index * 86400, finished_at=start + index * 86400 + 60))
    return runs
