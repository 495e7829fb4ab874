import gzip
import lzma
import shutil
import subprocess
import tarfile

import pytest

from mountbench.errors import UsageError
from mountbench.kinds.trees import PROFILES, from_tarball, generate


def test_git_profile_has_study_s0_shape(tmp_path):
    archive = generate("git", 1, tmp_path)
    assert (archive.files, archive.directories, archive.bytes) == (4294, 213, 43_000_000)
    with tarfile.open(archive.path) as tar:
        members = tar.getmembers()
    files = [m for m in members if m.isfile()]
    dirs = [m for m in members if m.isdir()]
    assert len(files) == 4294 and len(dirs) == 213
    assert sum(m.size for m in files) == 43_000_000
    sizes = sorted(m.size for m in files)
    assert sizes[len(sizes) // 2] < 10_000  # many small text files
    assert sizes[-1] > 500_000  # a few large ones
    depths = {m.name.count("/") for m in dirs}
    assert max(depths) >= 4  # nested, not flat
    assert {m.name.split("/")[0] for m in members} == {archive.root}


def test_generation_is_deterministic_per_seed(tmp_path):
    a = generate("tiny", 7, tmp_path / "a" if (tmp_path / "a").mkdir() is None else None)
    b = generate("tiny", 7, tmp_path / "b" if (tmp_path / "b").mkdir() is None else None)
    c = generate("tiny", 8, tmp_path / "b")
    assert a.path.read_bytes() == b.path.read_bytes()
    assert a.path.read_bytes() != c.path.read_bytes()


def test_profiles_include_a_large_one():
    assert PROFILES["node"].files >= 10_000


@pytest.mark.parametrize("suffix", [".tar", ".tar.gz", ".tar.xz", ".tar.zst"])
def test_user_tarballs_are_decompressed_once(tmp_path, suffix):
    source = generate("tiny", 1, tmp_path)
    given = tmp_path / f"user{suffix}"
    if suffix == ".tar":
        shutil.copyfile(source.path, given)
    elif suffix == ".tar.gz":
        given.write_bytes(gzip.compress(source.path.read_bytes()))
    elif suffix == ".tar.xz":
        given.write_bytes(lzma.compress(source.path.read_bytes()))
    else:
        if shutil.which("zstd") is None:
            pytest.skip("zstd not installed")
        subprocess.run(["zstd", "-q", "-o", str(given), str(source.path)], check=True)
    work = tmp_path / "work"
    work.mkdir()
    archive = from_tarball(given, work)
    assert archive.path.read_bytes() == source.path.read_bytes()
    assert (archive.files, archive.directories, archive.bytes) == (source.files, source.directories, source.bytes)
    assert archive.root == source.root


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.tar", b"not a tar at all" * 100, "not a readable tar"),
        ("bad.tar.gz", b"garbage", "not a readable tar"),
        ("tree.zip", b"PK", "unsupported tarball"),
    ],
)
def test_bad_tarballs(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(UsageError, match=message):
        from_tarball(path, tmp_path)


def test_missing_and_empty_tarballs(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        from_tarball(tmp_path / "none.tar", tmp_path)
    empty = tmp_path / "empty.tar"
    with tarfile.open(empty, "w"):
        pass
    with pytest.raises(UsageError, match="holds no files"):
        from_tarball(empty, tmp_path / "w" if (tmp_path / "w").mkdir() is None else None)


def test_tarball_listings_and_decompression_are_bounded(tmp_path, monkeypatch):
    """Issue 24 §5: a listing of endless entries or a decompression bomb is refused in one line."""
    import io

    source = tmp_path / "many.tar"
    with tarfile.open(source, "w") as tar:
        for n in range(20):
            info = tarfile.TarInfo(f"tree/f{n}")
            info.size = 1
            tar.addfile(info, io.BytesIO(b"x"))
    monkeypatch.setattr("mountbench.kinds.trees.TARBALL_ENTRY_LIMIT", 10)
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(UsageError, match="holds more than 10 entries"):
        from_tarball(source, work)
    assert list(work.iterdir()) == []
    bomb = tmp_path / "bomb.tar.gz"
    with gzip.open(bomb, "wb") as out:
        out.write(b"\0" * (4 << 20))
    monkeypatch.setattr("mountbench.kinds.trees.TARBALL_LIMIT", 1 << 20)
    with pytest.raises(UsageError, match="decompresses to more than"):
        from_tarball(bomb, work)
    assert list(work.iterdir()) == []
    # zstd (an external decompressor) goes through the same bound, and is stopped there
    zbomb = tmp_path / "bomb.tar.zst"
    subprocess.run(["zstd", "-q", "-o", str(zbomb)], input=b"\0" * (64 << 20), check=True)
    with pytest.raises(UsageError, match="decompresses to more than"):
        from_tarball(zbomb, work)
    assert list(work.iterdir()) == []
    assert subprocess.run(["pgrep", "-f", f"zstd -dc {zbomb}"], capture_output=True).returncode == 1
