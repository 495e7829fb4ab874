"""`import` and `report --from` check every field with its type and refuse the whole file at
the first problem, naming it (issue 24 §3); input files are read with bounds (§5)."""

from __future__ import annotations

import copy
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from support.factories import make_run

from mountbench.errors import UsageError
from mountbench.model import WARMUP_BASE
from mountbench.records.export import read_document, write_document
from mountbench.report.document import make_document

RUN = make_run({("a", "seq"): [10.0, 11.0], ("b", "seq"): [5.0, 6.0]}, run_id="20250101-120000-abcd")


def document() -> dict:
    return json.loads(json.dumps(make_document([RUN])))


def refused(tmp_path: Path, change: Callable[[dict], None], *fragments: str) -> str:
    data = document()
    change(data["runs"][0])
    path = tmp_path / "x.json"
    path.write_text(json.dumps(data))
    with pytest.raises(UsageError) as caught:
        read_document(path)
    message = str(caught.value)
    assert "\n" not in message and "damaged mountbench export" in message, message
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_a_good_export_is_read(tmp_path):
    path = tmp_path / "good.json"
    write_document(path, make_document([RUN]))
    (run,) = read_document(path)
    assert len(run.samples) == 4


def _sample(index: int, **fields) -> Callable[[dict], None]:
    def change(run: dict) -> None:
        run["samples"][index].update(fields)

    return change


@pytest.mark.parametrize(
    ("change", "fragments"),
    [
        (_sample(0, ok="false"), ["samples[0]", "ok is a string 'false', not true or false"]),
        (_sample(0, ok=1), ["ok is a number 1, not true or false"]),
        (_sample(0, error="fio died"), ["ok is true but it carries an error"]),
        (_sample(1, metrics={"read.iops": -5}), ["read.iops is -5, below zero"]),
        (_sample(1, metrics={"read.iops": "7"}), ["read.iops is '7', not a finite number"]),
        (_sample(1, metrics={"read.iops": True}), ["read.iops is True, not a finite number"]),
        (_sample(1, metrics=[1]), ["metrics is a list, not an object"]),
        (_sample(0, round=-3), ["round -3 is neither a measured round"]),
        (_sample(0, round=1.0), ["round is a number 1.0, not a whole number"]),
        (_sample(0, round=True), ["round is a boolean True, not a whole number"]),
        (_sample(0, target="elsewhere"), ["target 'elsewhere' is not one of the run's targets"]),
        (_sample(0, workload="other"), ["workload 'other' is not one of the run's workloads"]),
        (_sample(0, wall_s=float("inf")), ["wall_s is inf"]),
        (_sample(0, caveats="none"), ["caveats is a string, not a list"]),
        (_sample(0, series={"read.iops": [1, "x"]}), ["series 'read.iops' is not a list of finite numbers"]),
        (_sample(0, clients=[{"client": "c", "metrics": {"read.iops": -1}}]), ["read.iops is -1, below zero"]),
        (lambda run: run.update(id="../../etc/x"), ["'../../etc/x' is not a run id"]),
        (lambda run: run.update(id=".hidden"), ["is not a run id"]),
        (lambda run: run.update(status="great"), ["status 'great' is none of"]),
        (lambda run: run.update(created_at="yesterday"), ["created_at is 'yesterday'"]),
        (lambda run: run["targets"][0].update(label="a\nb"), ["holds '\\n'"]),
        (lambda run: run["targets"].append(dict(run["targets"][0])), ["target 'a' appears twice"]),
        (lambda run: run["targets"][0]["info"].update(odirect="yes"), ["odirect is a string 'yes'"]),
        (lambda run: run.update(samples={}), ["samples is an object, not a list"]),
        (lambda run: run.pop("targets"), ["targets is missing"]),
        (lambda run: run["config"].update(repeat="3"), ["config: repeat is a string"]),
        (lambda run: run["config"].update(keep="false"), ["config: keep is a string 'false', not true or false"]),
        (lambda run: run["config"].update(runtime=-1), ["config: runtime -1 is below 0.1"]),
        (lambda run: run["config"].update(presets="quick"), ["config: presets is a string, not a list"]),
    ],
)
def test_damage_is_refused_naming_the_first_problem(tmp_path, change, fragments):
    refused(tmp_path, change, *fragments)


def test_the_first_problem_is_named_and_nothing_is_read(tmp_path):
    def two_problems(run: dict) -> None:
        run["samples"][0]["ok"] = "false"
        run["samples"][3]["metrics"] = {"read.iops": -1}

    message = refused(tmp_path, two_problems, "samples[0]")
    assert "samples[3]" not in message


def test_warm_up_rounds_stay_valid(tmp_path):
    data = document()
    data["runs"][0]["samples"][0]["round"] = WARMUP_BASE
    data["runs"][0]["samples"][1]["round"] = WARMUP_BASE + 2
    path = tmp_path / "warm.json"
    path.write_text(json.dumps(data))
    (run,) = read_document(path)
    assert sorted(s.round for s in run.samples)[:2] == [WARMUP_BASE, WARMUP_BASE + 2]


def test_a_failed_sample_with_its_error_is_valid(tmp_path):
    data = document()
    data["runs"][0]["samples"][0].update(ok=False, metrics={}, error="fio: ENOSPC")
    path = tmp_path / "failed.json"
    path.write_text(json.dumps(data))
    (run,) = read_document(path)
    assert not run.samples[0].ok


# --- bounded reads (§5) -----------------------------------------------------------------------


def _read_refused(path: Path, *fragments: str) -> None:
    with pytest.raises(UsageError) as caught:
        read_document(path)
    message = str(caught.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, message


def test_a_file_that_never_ends_is_refused_without_reading_it_all(tmp_path, monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("mknod needs root")
    zero = tmp_path / "zero"
    os.mknod(zero, 0o666 | stat.S_IFCHR, os.makedev(1, 5))
    _read_refused(zero, "is not a regular file (a character device)")  # refused before a byte is read
    monkeypatch.setattr("mountbench.records.export.DOCUMENT_LIMIT", 1 << 20)  # the real limit, 512 MiB, writes slowly
    large = tmp_path / "large.json"
    large.write_bytes(b" " * ((1 << 20) + 1))
    _read_refused(large, "larger than 1 MiB")


def test_deep_nesting_and_huge_integers_are_refused(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    _read_refused(deep, "nested too deeply")
    nested = tmp_path / "nested.json"
    data = document()
    data["runs"][0]["host"]["x"] = json.loads("[" * 200 + "]" * 200)
    nested.write_text(json.dumps(data))
    _read_refused(nested, "levels deep")
    huge = tmp_path / "huge.json"
    huge.write_text('{"format": "mountbench-runs", "version": "1.8", "runs": [], "n": ' + "9" * 5000 + "}")
    _read_refused(huge, "not a readable JSON file")
    inf = copy.deepcopy(document())
    text = json.dumps(inf).replace('"read.iops": 10.0', '"read.iops": 1e999')
    (tmp_path / "inf.json").write_text(text)
    _read_refused(tmp_path / "inf.json", "read.iops is inf, not a finite number")
