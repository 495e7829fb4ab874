#!/usr/bin/env bash
# Set up everything the tests need (apt packages, .venv) and run lint + the whole suite.
# Mount tests need root; they are skipped with a reason otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh --test
.venv/bin/ruff check src tests bench
# two workers: the lab's emulated guests (one at a time, on one worker) overlap the rest, much of
# which waits on fio runtimes, mounts and timeouts rather than on the CPU; then the tests that
# assert on speed, alone
.venv/bin/python -m pytest -q -ra -n 2 --dist loadgroup -m "not timing" "$@"
.venv/bin/python -m pytest -q -ra -m timing "$@"
