"""`report --out report.pdf`: the HTML report printed by headless Chromium (its print rules:
light colours, headings kept with what follows, charts kept whole), for blog posts and papers.

Chromium is what users have for this and what the tests already drive; nothing is fetched
(the page is self-contained and its Content-Security-Policy forbids any request).
"""

from __future__ import annotations

import shutil
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
            raise UsageError(f"--out {out}: Chromium did not print the report within {TIMEOUT_S} s") from None
        if not printed.exists() or not printed.read_bytes().startswith(b"%PDF"):
            detail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise UsageError(f"--out {out}: Chromium could not print the report ({detail}); write --out report.html")
        return printed.read_bytes()
