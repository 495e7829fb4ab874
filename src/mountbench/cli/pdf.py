"""`report --out report.pdf`: the HTML report printed by headless Chromium (its print rules:
light colours, headings kept with what follows, charts kept whole), for blog posts and papers.

Chromium is what users have for this and what the tests already drive; nothing is fetched
(the page is self-contained and its Content-Security-Policy forbids any request).
"""

from __future__ import annotations

import re
import resource
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from mountbench.errors import UsageError

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
TIMEOUT_S = 180


def find_browser() -> str | None:
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def html_to_pdf(html: str, out: object) -> bytes:
    """``html`` printed by headless Chromium, as PDF bytes (``out`` names the output in errors);
    a one-line UsageError when it cannot."""
    browser = find_browser()
    if browser is None:
        raise UsageError(
            f"--out {out}: a PDF is printed by Chromium, which is not installed (apt-get install chromium); "
            "or write --out report.html and print it from a browser"
        )
    with tempfile.TemporaryDirectory(prefix="mountbench-pdf-") as work:
        page = Path(work) / "report.html"
        page.write_text(html)
        printed = Path(work) / "report.pdf"
        command = [
            browser,
            "--headless",
            "--no-sandbox",  # as root (the tool often runs as root to drop caches) Chromium refuses its sandbox
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            "--host-resolver-rules=MAP * ~NOTFOUND",  # nothing may be fetched, even if the page tried
            f"--user-data-dir={Path(work) / 'profile'}",
            "--no-pdf-header-footer",
            f"--print-to-pdf={printed}",
            page.as_uri(),
        ]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            raise UsageError(
                f"--out {out}: Chromium did not print the report within {TIMEOUT_S} s{_limits_said()}; "
                "write --out report.html and print it from a browser"
            ) from None
        if not printed.exists() or not printed.read_bytes().startswith(b"%PDF"):
            raise UsageError(f"--out {out}: {failure(done.returncode, done.stderr)}")
        return printed.read_bytes()


# Chromium's own log lines: [pid:tid:MMDD/HHMMSS.mmm:LEVEL:file.cc(line)] message
_CHROMIUM_LOG = re.compile(r"^\[\d+:\d+:\d+/\d+\.\d+:(?:ERROR|FATAL):[^\]]*\] (.+)$")


def failure(returncode: int, stderr: str) -> str:
    """Why Chromium printed nothing, and what to do: its real exit (a signal it died of, as the process or
    the launcher script's shell says it), its own last error line (never a line of a distribution's launcher
    script: Debian's said '/usr/bin/chromium: 9: [: 25276424192: unexpected operator' while Chromium died of
    SIGTRAP under a memory limit, issue 48), and the fix: a memory limit raised, the sandbox."""
    signum = -returncode if returncode < 0 else returncode - 128 if returncode > 128 else 0
    try:
        exited = f"it died of {signal.Signals(signum).name} (exit {returncode})" if signum else f"exit {returncode}"
    except ValueError:
        exited = f"exit {returncode}"
    own = [match.group(1).strip() for line in stderr.splitlines() if (match := _CHROMIUM_LOG.match(line.strip()))]
    said = f": {own[-1]}" if own else ""
    fixes = []
    limit = _limits_said()
    if limit:
        fixes.append(limit.removeprefix("; ").removeprefix(", "))
    if "sandbox" in stderr.lower():
        fixes.append("its sandbox could not start: run it as a user whose namespaces it may use, or keep --no-sandbox")
    fix = "; ".join(fixes) or "write --out report.html and print it from a browser"
    more = "; or write --out report.html and print it from a browser" if fixes else ""
    return f"Chromium could not print the report ({exited}{said}); {fix}{more}"


def _limits_said() -> str:
    """'; a memory limit is set (ulimit -v 5859375 KiB): ...' when the process has one: Chromium reserves
    tens of GB of address space at start and dies under a limit (SIGTRAP) or crawls."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return ""
    return (
        f"; a memory limit is set (ulimit -v {soft // 1024} KiB): Chromium reserves far more address space than "
        "it uses, raise it for the report (ulimit -v unlimited)"
    )
