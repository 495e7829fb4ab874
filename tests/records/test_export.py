import json

import pytest
from support.factories import make_run

from mountbench.errors import UsageError
from mountbench.model import Caveat
from mountbench.records.export import FORMAT_VERSION, read_document, write_document
from mountbench.report.document import make_document


def test_export_round_trips_runs_and_carries_summary_rows(tmp_path):
    run = make_run({("a", "w"): [1.0, 2.0, 3.0], ("b", "w"): [2.0, 4.0, 6.0]})
    doc = make_document([run])
    path = tmp_path / "out.json"
    write_document(path, doc)
    (back,) = read_document(path)
    assert back == run
    assert [s.metrics for s in back.samples] == [s.metrics for s in run.samples]
    rows = json.loads(path.read_text())["summary"]
    b = next(r for r in rows if r["target"] == "b")
    assert b["median"] == 4.0 and b["unit"] == "IOPS" and b["ratio"] == pytest.approx(2.0)
    assert {r["host"] for r in rows} == {run.host["hostname"]}
    assert b["baseline_caveats"] == []
    # the readable comparison next to the raw ratio (format 1.7)
    assert b["verdict"] in ("better", "undecided") and b["comparison"].startswith(("2.00× faster", "undecided"))
    assert b["factor"] == pytest.approx(2.0) and b["factor_low"] < 2.0 < b["factor_high"]
    a = next(r for r in rows if r["target"] == "a")
    assert a["verdict"] == "baseline" and a["comparison"] == "" and a["factor"] is None


def test_summary_rows_carry_the_caveats_of_the_baseline_their_ratio_uses(tmp_path):
    refused = (Caveat("odirect-refused", "buffered: O_DIRECT refused"),)
    run = make_run({("a", "w"): [1.0, 2.0, 3.0], ("b", "w"): [2.0, 4.0, 6.0]}, caveats={("a", "w"): refused})
    rows = make_document([run])["summary"]
    b = next(r for r in rows if r["target"] == "b")
    a = next(r for r in rows if r["target"] == "a")
    assert b["baseline_caveats"] == ["buffered: O_DIRECT refused"]
    assert a["baseline_caveats"] == []  # the baseline has no ratio


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not a readable JSON"),
        ('{"format": "other"}', "not a mountbench export"),
        (json.dumps({"format": "mountbench-runs", "version": "99.0", "runs": []}), "newer than this mountbench"),
        (json.dumps({"format": "mountbench-runs", "version": FORMAT_VERSION, "runs": [{"id": 1}]}), "damaged"),
    ],
)
def test_bad_files_are_refused(tmp_path, content, message):
    path = tmp_path / "x.json"
    path.write_text(content)
    with pytest.raises(UsageError, match=message):
        read_document(path)


def test_unwritable_path(tmp_path):
    with pytest.raises(UsageError, match="cannot write"):
        write_document(tmp_path / "missing-dir" / "x.json", {})


def test_event_lines_round_trip():
    import io

    from mountbench.model import PlanItem, Sample
    from mountbench.records.events import EventLog, parse_event

    stream = io.StringIO()
    log = EventLog(stream)
    item = PlanItem(0, 0, "9p", "rr", 1.0)
    log.on_sample_start(item, 0, 1, 1.0)
    log.on_sample_done(item, Sample("9p", "rr", 0, True, {"read.bytes": 10.0, "write.bytes": 5.0, "read.iops": 1.0}))
    lines = stream.getvalue().splitlines()
    start, done = (parse_event("[   15.2] " + line) for line in lines)
    assert start["event"] == "start" and start["target"] == "9p"
    assert done["event"] == "done" and done["bytes"] == 15.0 and done["ok"] is True
    assert parse_event("kernel: hello") is None
