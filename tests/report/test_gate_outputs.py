"""What `run --against` writes (report/gate.py): JUnit XML that validates against tests/data/junit.xsd
with a failure for a regression, a skip for an undecided comparison (its bound the message) and an error
for no data; a Markdown summary within 80 columns, also with long labels; terminal tables within 80."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import numpy as np
import xmlschema
from rich.console import Console
from support.factories import INFO, fio_workload, make_run

from mountbench.analysis.across import Pair, decide_against
from mountbench.analysis.comparable import Difference
from mountbench.model import RunLevel, TargetRecord
from mountbench.report.gate import Context, junit, markdown, terminal

SCHEMA = xmlschema.XMLSchema(Path(__file__).resolve().parents[1] / "data" / "junit.xsd")
TIGHT = RunLevel((0.005,) * 3, (0.005,) * 3, 50.0, "calibrated", "test")


def _runs(label: str = "ram", titles: dict[str, str] | None = None):
    """A baseline and a run of four workloads: w1 halved (regressed), w2 as before, w3 noisy (undecided),
    w4 failed in the run (no data)."""
    rng = np.random.default_rng(51)
    workloads = [fio_workload(name) for name in ("w1", "w2", "w3", "w4")]
    if titles:
        workloads = [dataclasses.replace(w, title=titles.get(w.name, w.title)) for w in workloads]

    def noisy(level, sd=0.01, n=6):
        return list(level * np.exp(rng.normal(0, sd, n)))

    then = make_run({(label, "w1"): noisy(1000), (label, "w2"): noisy(1000), (label, "w3"): noisy(1000, 0.12),
                     (label, "w4"): noisy(1000)}, run_id="20261120-100000-base", workloads=workloads)  # fmt: skip
    now = make_run({(label, "w1"): noisy(500), (label, "w2"): noisy(1000), (label, "w3"): noisy(1000, 0.12)},
                   run_id="20261121-100000-next", workloads=workloads, errors={(label, "w4"): "fio: EIO"})  # fmt: skip
    info = dataclasses.replace(INFO, run_level=TIGHT)
    then, now = (dataclasses.replace(r, targets=tuple(TargetRecord(t.target, info) for t in r.targets))
                 for r in (then, now))  # fmt: skip
    against = decide_against(now, then, [Pair(label, label)], 0.10)
    warned = (Difference("kernel", "6.1", "6.2", False),)
    return against, Context(now, then, f"run {then.id}", warned, fail_on=True)


def test_junit_validates_and_says_each_verdict_as_ci_systems_read_it():
    against, context = _runs()
    text = junit(against, context)
    SCHEMA.validate(text)
    suites = SCHEMA.to_dict(text)
    assert (suites["@tests"], suites["@failures"], suites["@errors"], suites["@skipped"]) == (4, 1, 1, 1)
    (suite,) = suites["testsuite"]
    properties = {p["@name"]: p["@value"] for p in suite["properties"]["property"]}
    assert properties["run"] == "20261121-100000-next" and properties["baseline"] == "20261120-100000-base"
    assert properties["threshold"] == "0.1"
    cases = {case["@name"]: case for case in suite["testcase"]}
    assert set(cases) == {"W1 (w1)", "W2 (w2)", "W3 (w3)", "W4 (w4)"}
    assert all(case["@classname"] == "mountbench.ram" for case in cases.values())
    assert "regressed: 1.99× slower" in cases["W1 (w1)"]["failure"]["@message"]
    assert "beyond ±10%" in cases["W1 (w1)"]["failure"]["@message"]
    assert "failure" not in cases["W2 (w2)"] and "skipped" not in cases["W2 (w2)"]
    assert "undecided: within" in cases["W3 (w3)"]["skipped"]["@message"]  # the bound it showed
    assert "no data" in cases["W4 (w4)"]["error"]["@message"]


def test_the_markdown_summary_fits_80_columns_even_with_long_labels():
    for label, titles in (("ram", None), ("a-rather-long-label-for-the-nas-share", {"w1": "W" * 50})):
        against, context = _runs(label, titles)
        text = markdown(against, context)
        lines = text.splitlines()
        assert lines[0] == "## mountbench: regressed beyond ±10%"
        assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
        assert "**regressed**" in text and "kernel 6.1 → 6.2" in text
        if titles:  # a table that cannot fit: one item a comparison instead
            assert "- **regressed** · a-rather-long-label-for-the-nas-share ·" in text
        else:
            assert "| ram    | W1       | **regressed**" in text


def test_the_terminal_tables_fit_80_columns_and_end_with_the_result():
    against, context = _runs()
    buffer = io.StringIO()
    console = Console(file=buffer, width=80, color_system=None)
    for part in terminal(against, context):
        console.print(part)
    lines = buffer.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert lines[-2].startswith("against 20261120-100000-base: 1 regressed, 1 within ±10%, 1 undecided, 1 no data")
    assert "(exit status 1: --fail-on)" in " ".join(lines[-2:])


def test_a_busy_machine_is_named_beside_the_verdicts():
    against, context = _runs()
    busy_noise = {"noise.others_cpu": 80.0}
    samples = [dataclasses.replace(s, metrics={**s.metrics, **busy_noise}) for s in context.baseline.samples]
    busy = dataclasses.replace(context.baseline, samples=tuple(samples))
    text = markdown(against, dataclasses.replace(context, baseline=busy))
    assert "the baseline: the machine was busy during 100 %" in " ".join(text.split())
    assert "this run: the machine was busy" not in " ".join(text.split())
