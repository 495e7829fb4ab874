#!/usr/bin/env bash
# Set up mountbench and run the default comparison: this directory against RAM (/dev/shm).
# Extra arguments go to 'mountbench run', e.g.: scripts/run-default.sh /mnt/nfs --preset cdm
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
"$here/scripts/install.sh"
exec "$here/.venv/bin/mountbench" run "$@"
