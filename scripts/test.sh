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

# Two workers and three groups (tests/support/groups.py says which test is in which, and why
# each group cannot upset the others): "host", the tests that touch the machine's shared state
# (fio and mountbench sessions, which drop the page cache and read block-device counters; mounts;
# nginx), one after another, as one worker would; "clients", the client namespaces, one after
# another; "lab", the lab's emulated guests, one after another; either worker runs the in-process
# tests. Then the tests that assert on speed (marker `timing`) and those that need the page cache
# left alone (marker `alone`), both listed in tests/support/timing.py, run alone, on one worker.
# (Each part's -m, -n and --dist come after "$@", so they win.)
status=0
pytest_part "$@" -m "not timing and not alone" -n 2 --dist loadgroup || status=$?
pytest_part "$@" -m "timing or alone" -n 0 || status=$?
exit "$status"
