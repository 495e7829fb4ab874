"""records/text.py: what came from elsewhere is shown, never obeyed (issue 34 §3)."""

from __future__ import annotations

from mountbench.records.codec import run_from_dict, sample_from_dict
from mountbench.records.text import escaped, escaped_tree


def test_control_characters_are_written_out_and_ordinary_text_stays() -> None:
    assert escaped("vm\x1b]0;T\x07\x1b[2J") == "vm\\x1b]0;T\\x07\\x1b[2J"
    assert escaped("a\rb\u202ec\udcff") == "a\\x0db\\u202ec\\udcff"  # overwrite, bidi override, bad byte
    assert escaped("fio: line 1\n\tline 2 — ünïcode ✓") == "fio: line 1\n\tline 2 — ünïcode ✓"
    assert escaped(escaped("\x1b")) == "\\x1b"  # escaping twice changes nothing more


def test_every_string_of_a_run_read_is_escaped_but_raw_output() -> None:
    tree = escaped_tree({"a\x1b": ["x\x1b", 1.5, {"b": "\x07"}], "raw": "\x1b[kept", "n": [1, 2.0]})
    assert tree == {"a\\x1b": ["x\\x1b", 1.5, {"b": "\\x07"}], "raw": "\x1b[kept", "n": [1, 2.0]}
    sample = sample_from_dict({"target": "t", "workload": "w", "round": 0, "ok": False, "metrics": {},
                               "error": "boom\x1b[2J", "caveats": [{"code": "c", "text": "\x1b]0;x\x07"}]})  # fmt: skip
    assert sample.error == "boom\\x1b[2J" and sample.caveats[0].text == "\\x1b]0;x\\x07"
    run = run_from_dict({"id": "r", "created_at": 1.0, "status": "complete", "command": "mb\x1b", "config": {},
                         "host": {"hostname": "h\x1b", "cloudlab": {"rclone": "v\x07"}},
                         "targets": [{"label": "a", "path": "/p\x1b", "info": None}], "workloads": [],
                         "samples": []})  # fmt: skip
    assert run.command == "mb\\x1b" and run.host == {"hostname": "h\\x1b", "cloudlab": {"rclone": "v\\x07"}}
    assert run.targets[0].target.path == "/p\\x1b"
