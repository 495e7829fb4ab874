"""The clock fio is told to use: fio's own choice, made once per run."""

from pathlib import Path

from mountbench.fio.binary import _invariant_tsc


def test_invariant_tsc_needs_both_flags(tmp_path: Path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc sse2\n\nprocessor\t: 1\n")
    assert _invariant_tsc(cpuinfo)
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu tsc constant_tsc sse2\n")
    assert not _invariant_tsc(cpuinfo)
    assert not _invariant_tsc(tmp_path / "missing")
