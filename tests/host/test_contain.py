"""mountbench.host.contain: a child born inside a fence writes beneath its writable directories and
/dev/null and nowhere else, by the kernel's word (Landlock, or a private mount namespace with the
rest read-only), and so do the children it starts; with containment turned off (tests only) the
same writes go through, which is what proves the fence holds them."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from mountbench.host import contain

# every way of changing the filesystem a child might try outside its fence
ATTEMPTS = {
    "write": "echo x > {out}/canary",
    "append": "echo x >> {out}/canary",
    "truncate": "truncate -s 0 {out}/canary",
    "remove": "rm -f {out}/canary",
    "rename": "mv {out}/canary {out}/moved",
    "mkdir": "mkdir {out}/made",
    "fifo": "mkfifo {out}/fifo",
    "symlink": "ln -s /etc/passwd {out}/link",
    "hardlink": "ln {out}/canary {inside}/hard",
    "move-in": "mv {out}/canary {inside}/stolen",
    "through-a-symlink": "ln -s {out} {inside}/way-out && echo x > {inside}/way-out/canary",
    "grandchild": "sh -c 'echo x > {out}/canary'",
}


@pytest.fixture(params=["landlock", "namespace"])
def mechanism(request, monkeypatch):
    if request.param == "namespace":
        if os.geteuid() != 0:
            pytest.skip("a private mount namespace needs root")
        monkeypatch.setenv(contain.ENV, "namespace")
    else:
        monkeypatch.delenv(contain.ENV, raising=False)
        if contain.landlock_abi() < contain.MIN_LANDLOCK_ABI:
            pytest.skip("this kernel has no Landlock ABI 3")
    return request.param


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    inside, out = tmp_path / "scratch", tmp_path / "outside"
    inside.mkdir()
    out.mkdir()
    (out / "canary").write_text("canary\n")
    return inside, out


def _state(directory: Path) -> dict[str, str]:
    return {p.name: (p.read_text() if p.is_file() and not p.is_symlink() else "?") for p in directory.iterdir()}


def test_the_mechanism_is_named(mechanism):
    used = contain.containment()
    assert used.contained
    assert used.mechanism == (contain.LANDLOCK if mechanism == "landlock" else contain.NAMESPACE)
    assert used.mechanism in used.fact() and used.detail in used.fact()


@pytest.mark.parametrize("attempt", sorted(ATTEMPTS))
def test_nothing_outside_the_fence_changes(mechanism, places, attempt):
    inside, out = places
    before = _state(out)
    fence = contain.Fence.of([inside])
    command = ATTEMPTS[attempt].format(out=out, inside=inside)
    done = contain.run(["sh", "-c", command], fence, capture_output=True, text=True, timeout=30)
    assert done.returncode != 0, (attempt, done.stdout, done.stderr)
    assert _state(out) == before, attempt


def test_inside_the_fence_everything_works(mechanism, places):
    inside, _ = places
    fence = contain.Fence.of([inside])
    script = (
        f"set -e; cd {inside}; mkdir -p d/e; echo x > d/e/f; truncate -s 10 d/e/f; mv d/e/f d/g; ln -s g d/h; "
        "ln d/g d/hard; mkfifo d/p; rm -r d; echo x > /dev/null; echo done"
    )
    done = contain.run(["sh", "-c", script], fence, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr
    assert list(inside.iterdir()) == []


def test_a_fence_of_nothing_still_reads_everywhere(mechanism, places):
    _, out = places
    done = contain.run(["cat", str(out / "canary")], contain.NOTHING, capture_output=True, text=True, timeout=30)
    assert done.stdout == "canary\n"
    wrote = contain.run(["sh", "-c", f"echo x > {out}/canary"], contain.NOTHING, capture_output=True, timeout=30)
    assert wrote.returncode != 0 and (out / "canary").read_text() == "canary\n"


def test_this_process_is_not_fenced(mechanism, places):
    """The fence is on a spawner thread and its children: mountbench itself still writes its outputs."""
    inside, out = places
    contain.run(["true"], contain.Fence.of([inside]), timeout=30)
    (out / "after").write_text("written by mountbench itself\n")
    assert (out / "after").exists()


def test_a_directory_made_anew_at_the_same_path_gets_its_own_fence(mechanism, tmp_path):
    first = tmp_path / "s"
    first.mkdir()
    assert contain.run(["touch", str(first / "a")], contain.Fence.of([first]), timeout=30).returncode == 0
    (first / "a").unlink()
    first.rmdir()
    first.mkdir()
    assert contain.run(["touch", str(first / "b")], contain.Fence.of([first]), timeout=30).returncode == 0


def test_turned_off_the_same_writes_go_through(monkeypatch, places):
    monkeypatch.setenv(contain.ENV, "off")
    inside, out = places
    assert contain.containment().mechanism == contain.NONE
    assert "turned off" in contain.containment().fact()
    done = contain.run(["sh", "-c", f"echo escaped > {out}/canary"], contain.Fence.of([inside]), timeout=30)
    assert done.returncode == 0 and (out / "canary").read_text() == "escaped\n"


def test_a_child_that_dies_with_its_parent_still_can(mechanism, tmp_path):
    """PR_SET_PDEATHSIG is tied to the thread that forked: a spawner lives while its children do."""
    from mountbench.host import process

    proc = process.start([sys.executable, "-c", "import time; time.sleep(60)"], fence=contain.Fence.of([tmp_path]))
    try:
        assert proc.poll() is None
    finally:
        process.stop_tree(proc)
    assert proc.returncode is not None
