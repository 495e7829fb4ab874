"""Report formats are plug-ins (cli/formats/): a format is one module and one line in FORMATS, and
--format, the suffixes --out is read by and their checks follow. Shown with a throwaway format,
plain text, that lays out the sections' neutral blocks (blocks/parts.py) its own way: no section
and no other format changes for it."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.synthetic import study_run

from mountbench.blocks.parts import Figure, Heading, Items, Paragraph, Table
from mountbench.cli.formats import FORMATS
from mountbench.cli.formats.plugin import Format, Request, Written
from mountbench.cli.main import main
from mountbench.records.export import write_document
from mountbench.report.document import make_document
from mountbench.report.sections import SECTIONS, Options

# --- the throwaway module: a plain-text format --------------------------------------------------------


def _lay_out(block) -> str:
    if isinstance(block, Heading):
        return block.text.upper()
    if isinstance(block, Paragraph):
        return block.text
    if isinstance(block, Items):
        return "\n".join(f"* {item.text}" for item in block.items)
    if isinstance(block, Table):
        rows = [block.view.headers, *([cell.text for cell in row] for row in block.view.rows)]
        return "\n".join(" | ".join(row) for row in rows)
    assert isinstance(block, Figure)
    return f"[chart: {block.alt}]"


def write_text(report, output, request: Request) -> Written:
    chapters = [c for section in SECTIONS for c in section.chapters(report, Options(request.per_client))]
    text = "\n\n".join(
        "\n\n".join([f"== {chapter.title} ==", *(_lay_out(block) for block in chapter.blocks)]) for chapter in chapters
    )
    if output is None:
        print(text)
        return []
    output.write_text(text + "\n")
    return [f"wrote {output} ({len(chapters)} sections as plain text)"]


TEXT = Format("txt", (".txt",), "plain text", write_text)

# --- the test ------------------------------------------------------------------------------------------


@pytest.fixture
def exported(tmp_path: Path) -> Path:
    path = tmp_path / "run.json"
    write_document(path, make_document([study_run()]))
    return path


def _mountbench(*args: str) -> int:
    with pytest.raises(SystemExit) as exited:
        main(list(args))
    return exited.value.code or 0


def test_a_format_is_one_module_and_one_registry_line(exported, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setitem(FORMATS, TEXT.name, TEXT)  # the one line
    out = tmp_path / "r.txt"
    assert _mountbench("report", "--from", str(exported), "--out", str(out)) == 0  # chosen by the suffix
    text = out.read_text()
    assert "== Sweeps" in text and " | " in text and "[chart: " in text  # chapters, tables, figures laid out
    assert "sections as plain text" in capsys.readouterr().err
    assert _mountbench("report", "--from", str(exported), "--format", "txt") == 0
    assert capsys.readouterr().out.startswith("== ")
    # its suffix is checked like the others'
    assert _mountbench("report", "--from", str(exported), "--format", "md", "--out", str(tmp_path / "x.txt")) == 2
    assert "names a txt file but --format md" in capsys.readouterr().err


def test_without_its_line_the_format_does_not_exist(exported, tmp_path, capsys) -> None:
    assert "txt" not in FORMATS
    assert _mountbench("report", "--from", str(exported), "--format", "txt") == 2
    assert "'txt' is not one of" in capsys.readouterr().err
    assert _mountbench("report", "--from", str(exported), "--out", str(tmp_path / "r.txt")) == 2
    assert "no report format has the suffix .txt" in capsys.readouterr().err
    assert not (tmp_path / "r.txt").exists()


def test_every_format_owns_its_suffixes_alone() -> None:
    owners = [suffix for format in FORMATS.values() for suffix in format.suffixes]
    assert len(owners) == len(set(owners)) and all(s.startswith(".") and s == s.lower() for s in owners)
    assert all(name == format.name for name, format in FORMATS.items())
