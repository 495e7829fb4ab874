#!/usr/bin/env bash
# Set up everything the tests need (apt packages, .venv) and run lint + the whole suite.
# Mount tests need root; they are skipped with a reason otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh --test
.venv/bin/ruff check src tests bench
# one worker: on two, tests that read the page cache, the block device's counters or nginx's
# processes were decided by the other worker's load (see tests/conftest.py); `-n 2 --dist
# loadgroup -m "not timing"` then `-m timing` runs them that way for a quicker local look
.venv/bin/python -m pytest -q -ra "$@"
