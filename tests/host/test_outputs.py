"""host/outputs.py: an output is a new path or a regular file that is neither the results
database nor an input; devices, directories and the database are refused in one line, a
symlink is written through and stays a link, '-' is standard output (issue 24 §1)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mountbench.errors import UsageError
from mountbench.host import outputs


def _device(tmp_path: Path, name: str, major: int, minor: int) -> Path:
    """A character device node inside the test's own directory (as root); never /dev's."""
    if os.geteuid() != 0:
        pytest.skip("mknod needs root")
    path = tmp_path / name
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
    return path


def test_a_new_file_and_a_regular_file_are_written_atomically(tmp_path):
    new = outputs.check(tmp_path / "new.json", "--json")
    new.write_text("one")
    assert (tmp_path / "new.json").read_text() == "one"
    again = outputs.check(tmp_path / "new.json", "--json")
    again.write_text("two")
    assert (tmp_path / "new.json").read_text() == "two"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.json"]  # no temp file left


@pytest.mark.parametrize(("major", "minor", "name"), [(1, 3, "null"), (1, 7, "full"), (1, 5, "zero")])
def test_devices_are_refused_and_stay_devices(tmp_path, major, minor, name):
    device = _device(tmp_path, name, major, minor)
    with pytest.raises(UsageError, match="is a character device, not a regular file") as refused:
        outputs.check(device, "--out")
    assert "\n" not in str(refused.value)
    assert stat.S_ISCHR(os.lstat(device).st_mode)


def test_a_device_that_appears_after_the_check_is_not_replaced(tmp_path):
    path = tmp_path / "later"
    output = outputs.check(path, "--out")
    _device(tmp_path, "later", 1, 3)
    with pytest.raises(UsageError, match="character device"):
        output.write_text("x")
    assert stat.S_ISCHR(os.lstat(path).st_mode)


def test_a_directory_and_a_fifo_are_refused(tmp_path):
    with pytest.raises(UsageError, match="is a directory; give a file name"):
        outputs.check(tmp_path, "--out")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="is a FIFO"):
        outputs.check(fifo, "--out")


def test_the_database_its_journal_and_the_inputs_are_refused(tmp_path):
    db = tmp_path / "results.sqlite"
    db.write_bytes(b"SQLite format 3\0")
    job = tmp_path / "my.fio"
    job.write_text("[j]\n")
    protect = [*outputs.database(db), *outputs.inputs([job], "one of the run's job files")]
    with pytest.raises(UsageError, match="is the results database"):
        outputs.check(db, "--json", protect)
    with pytest.raises(UsageError, match="is the results database"):  # not created yet: by its name
        outputs.check(tmp_path / "results.sqlite-journal", "--json", protect)
    with pytest.raises(UsageError, match="is one of the run's job files"):
        outputs.check(tmp_path / "." / "my.fio", "--json", protect)
    (tmp_path / "link").symlink_to(db)
    with pytest.raises(UsageError, match="is the results database"):
        outputs.check(tmp_path / "link", "--json", protect)
    hard = tmp_path / "hard"
    os.link(db, hard)
    with pytest.raises(UsageError, match="is the results database"):
        outputs.check(hard, "--json", protect)
    new_db = tmp_path / "not-yet.sqlite"
    with pytest.raises(UsageError, match="is the results database"):
        outputs.check(new_db, "--json", outputs.database(new_db))
    assert db.read_bytes() == b"SQLite format 3\0"


def test_a_symlink_is_written_through_and_stays_a_link(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    outputs.check(link, "--json").write_text("new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new"
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "nowhere" / "x.json")
    with pytest.raises(UsageError, match="symbolic link that leads nowhere"):
        outputs.check(dangling, "--json")
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(UsageError, match="leads nowhere"):
        outputs.check(loop, "--json")
    if os.geteuid() == 0:
        to_device = tmp_path / "to-null"
        to_device.symlink_to(_device(tmp_path, "null", 1, 3))
        with pytest.raises(UsageError, match="character device"):
            outputs.check(to_device, "--out")
        assert to_device.is_symlink()


def test_dash_is_standard_output(capfd):
    output = outputs.check("-", "--out")
    assert output.is_stdout and str(output) == "standard output"
    output.write_text("hello\n")
    assert capfd.readouterr().out == "hello\n"
    with pytest.raises(UsageError, match="standard output"):
        output.sibling("x.png")


def test_a_missing_directory_is_refused(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        outputs.check(tmp_path / "no" / "x.json", "--json")


def test_siblings_are_checked_too(tmp_path):
    db = tmp_path / "r-samples.csv"  # a database that happens to be named like a report's second file
    db.write_text("precious")
    output = outputs.check(tmp_path / "r.csv", "--out", outputs.database(db))
    with pytest.raises(UsageError, match="results database"):
        output.sibling("r-samples.csv")
    assert db.read_text() == "precious"
