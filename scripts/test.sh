#!/usr/bin/env bash
# Set up everything the tests need (apt packages, .venv) and run lint + the whole suite.
# Mount tests need root; they are skipped with a reason otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh --test
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check -q src tests bench

# pytest's "no tests collected" (5) is not a failure here: a selection given in "$@" may hold
# no test of one of the two parts
pytest_part() {
    local status=0
    .venv/bin/python -m pytest -q -ra "$@" || status=$?
    [ "$status" -eq 5 ] && status=0
    return "$status"
}

# CI runs one worker: on two, tests that read the page cache, the block device's counters or
# nginx's processes were decided by the other worker's load (see tests/conftest.py); `-n 2
# --dist loadgroup` is a quicker local look. Either way the tests that assert on speed (marker
# `timing`, listed in tests/support/timing.py) run afterwards, alone, on one worker. (Each part's -m
# and -n come after "$@", so they win.)
status=0
pytest_part "$@" -m "not timing" || status=$?
pytest_part "$@" -m timing -n 0 || status=$?
exit "$status"
