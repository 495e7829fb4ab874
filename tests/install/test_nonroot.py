"""Without root: the README's five common uses, as an ordinary user made for the test (useradd;
removed afterwards with its home), on directories that user owns, with mountbench installed by
that user with pip into a virtualenv of their own (from the session's wheel and wheelhouse: no
index, and apt on PATH refuses). Every command works; what needs root is said once, before the
first sample, with what it changes in the figures; the cells it touches say so.

The five uses, each command as the README shows it, shortened (one round of 0.3 s jobs on
4 MiB files, or the tree preset's smallest tree) so the whole pass takes about a minute."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from support.wheels import APT_TOOLS, Dist

pytestmark = pytest.mark.slow
SHORT = ("--repeat", "1", "--runtime", "0.3", "--size", "4M")
DEBIAN_PYTHON = Path("/usr/bin/python3")  # the test's own Python lives under /root, which the user cannot read
ONCE = "running without root"
RUNUSER = shutil.which("runuser") or "/usr/sbin/runuser"  # the user's PATH has no sbin


@dataclass
class User:
    name: str
    uid: int
    home: Path
    env: dict[str, str]

    def run(self, *argv: str | Path, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run([RUNUSER, "-u", self.name, "--", *map(str, argv)], cwd=cwd or self.home, env=self.env,
                              capture_output=True, text=True, timeout=timeout)  # fmt: skip

    def start(self, *argv: str | Path) -> subprocess.Popen[str]:
        return subprocess.Popen([RUNUSER, "-u", self.name, "--", *map(str, argv)], cwd=self.home, env=self.env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip


def _leftover_processes(uid: int) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["uids"]):
        uids = proc.info["uids"]
        if uids is not None and uid in (uids.real, uids.effective):
            found.append(proc)
    return found


@pytest.fixture
def user(dist: Dist) -> Iterator[User]:
    if os.geteuid() != 0:
        pytest.skip("making a throwaway user needs root (useradd); as a user, the other tests are this test")
    for tool in ("useradd", "userdel", "runuser"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is missing (apt-get install passwd util-linux)")
    if not DEBIAN_PYTHON.exists():
        pytest.skip(f"{DEBIAN_PYTHON} is missing (apt-get install python3-venv)")
    base = Path(tempfile.mkdtemp(prefix="mountbench-nonroot-", dir="/tmp"))
    base.chmod(0o755)
    name = f"mbtest{os.getpid()}"
    home = base / "home"
    made = subprocess.run(["useradd", "--create-home", "--home-dir", str(home), "--shell", "/bin/sh", "--user-group",
                           name], capture_output=True, text=True, timeout=60)  # fmt: skip
    assert made.returncode == 0, made.stderr
    uid = pwd.getpwnam(name).pw_uid
    try:
        shared = base / "shared"  # the wheel, its wheelhouse and the apt guard, readable by the user
        shutil.copytree(dist.wheelhouse, shared / "wheels")
        shutil.copy2(dist.wheel, shared / dist.wheel.name)
        guard = shared / "apt-guard"
        guard.mkdir()
        for tool in APT_TOOLS:
            (guard / tool).write_text(f'#!/bin/sh\necho "{tool} $*" >> {home}/apt-calls.log\nexit 100\n')
            (guard / tool).chmod(0o755)
        for path in [shared, *shared.rglob("*")]:
            path.chmod(0o755 if path.is_dir() or path.parent == guard else 0o644)
        venv = home / "venv"
        env = {"HOME": str(home), "USER": name, "LOGNAME": name, "LANG": "C.UTF-8", "COLUMNS": "120",
               "PATH": f"{guard}:{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin"}  # fmt: skip
        person = User(name, uid, home, env)
        made = person.run(DEBIAN_PYTHON, "-m", "venv", venv, timeout=120)
        assert made.returncode == 0, made.stderr
        wheel = shared / dist.wheel.name
        install = person.run(venv / "bin" / "pip", "install", "--disable-pip-version-check", "--no-index",
                             "--find-links", shared / "wheels", wheel, timeout=600)  # fmt: skip
        assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
        yield person
    finally:
        for proc in _leftover_processes(uid):  # what the test started as the user, by pid; none is expected
            proc.kill()
        subprocess.run(["userdel", "--remove", name], capture_output=True, timeout=60)
        shutil.rmtree(base, ignore_errors=True)


def _flat(text: str) -> str:
    """The text as one line: the console wraps at COLUMNS."""
    return " ".join(text.split())


def _said_once_before_the_first_sample(stderr: str) -> None:
    stderr = _flat(stderr)
    assert stderr.count(ONCE) == 1, stderr[-3000:]
    first_sample = stderr.find(" 1/")
    assert first_sample == -1 or stderr.find(ONCE) < first_sample, stderr[-3000:]


def test_the_readmes_five_uses_as_an_ordinary_user(user: User) -> None:
    a, b, work = user.home / "a", user.home / "b", user.home / "work"
    for path in (a, b, work):
        assert user.run("mkdir", path).returncode == 0

    # 1. compare directories: the current directory against /dev/shm, then labelled targets
    first = user.run("mountbench", "run", *SHORT, cwd=work)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-3000:]
    _said_once_before_the_first_sample(first.stderr)
    said = _flat(first.stderr)
    assert "the files a buffered sample reads are evicted (no root needed)" in said
    assert "the machine's caches cannot be dropped (not root): tree walks and start-ups" in said
    assert "direct-I/O workloads (presets quick, cdm, nine) are unaffected" in said
    assert "the labs (lab, containers, cloudlab's network namespace) and mounting filesystems need root" in said
    labelled = user.run("mountbench", "run", "ram=/dev/shm", f"disk={b}", "--only", "rnd4k-q1-*", *SHORT)
    assert labelled.returncode == 0, labelled.stderr[-3000:]
    assert "baseline ram" in labelled.stdout and "disk" in labelled.stdout, labelled.stdout[-2000:]

    # 2. choose what runs: the presets, and a cold tree workload (the page cache is in its numbers)
    presets = user.run("mountbench", "presets")
    assert presets.returncode == 0 and "quick (default)" in presets.stdout
    tree = user.run("mountbench", "run", a, b, "--preset", "tree", "--tree", "tiny", "--only", "walk-cold",
                    "--repeat", "1")  # fmt: skip
    assert tree.returncode == 0, tree.stdout[-2000:] + tree.stderr[-3000:]
    _said_once_before_the_first_sample(tree.stderr)
    assert "caches not dropped" in _flat(tree.stdout), tree.stdout[-3000:]

    # 3. a fast answer: a budget
    budget = user.run("mountbench", "run", a, b, "--budget", "8s", "--only", "rnd4k-q1-read", "--size", "4M")
    assert budget.returncode == 0, budget.stderr[-3000:]

    # 4. look again, and share
    csv = work / "results.csv"
    for argv in (("list",), ("show",), ("show", "last", "--detail", "--metric", "lat-p99"),
                 ("report", "--out", work / "report.html"), ("report", "--format", "csv", "--out", csv),
                 ("export", "last", "--out", work / "runs.json")):  # fmt: skip
        done = user.run("mountbench", *argv)
        assert done.returncode == 0, f"{argv}: {done.stdout[-1000:]}{done.stderr[-2000:]}"
    assert (work / "report.html").stat().st_uid == user.uid and (work / "results-samples.csv").exists()
    moved = user.run("mountbench", "import", work / "runs.json", "--db", work / "other.sqlite")
    assert moved.returncode == 0, moved.stderr

    # and what a mount supports (the checks that need root say so, the rest are made)
    probe = user.run("mountbench", "probe", a)
    assert probe.returncode == 0, probe.stdout[-2000:] + probe.stderr[-2000:]
    assert "chown to another uid" in probe.stdout and "needs root" in probe.stdout, probe.stdout[-3000:]

    # 5. check first, and finish what was interrupted
    doctor = user.run("mountbench", "doctor", a, b)
    assert doctor.returncode == 0, doctor.stdout[-2000:]
    row = doctor.stdout[doctor.stdout.find("cache dropping") :]  # its cell wraps within the table
    assert "! the files a sample reads are evicted" in row and "cannot be dropped (not" in row, doctor.stdout
    dry = user.run("mountbench", "run", a, "--dry-run")
    said = _flat(dry.stdout)
    assert dry.returncode == 0 and "caches: the files a buffered sample reads are evicted" in said, said[-2000:]
    assert "tree walks and start-ups need root to drop the machine's caches" in said
    proc = user.start("mountbench", "run", a, b, "--only", "rnd4k-q1-*", "--repeat", "3", "--runtime", "0.5",
                      "--size", "4M")  # fmt: skip
    seen = []
    assert proc.stdout is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        seen.append(line)
        if not line or " 2/" in line:
            break
    # Ctrl-C: to mountbench itself (runuser's child, which this test started), as a terminal would
    (mountbench,) = [
        p for p in psutil.Process(proc.pid).children(recursive=True) if "mountbench" in " ".join(p.cmdline())
    ]
    mountbench.send_signal(signal.SIGINT)
    rest, _ = proc.communicate(timeout=120)
    said = "".join(seen) + rest
    assert proc.returncode == 130, said[-3000:]
    run_id = said.split("--resume ")[-1].split()[0]
    resumed = user.run("mountbench", "run", "--resume", run_id)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"run {run_id} complete" in resumed.stderr

    assert not (user.home / "apt-calls.log").exists()
    assert not [p for p in (*a.iterdir(), *b.iterdir(), *work.iterdir()) if p.name.startswith(".mountbench-")]
    assert not _leftover_processes(user.uid)
