#!/usr/bin/env bash
# The Trino oracle suite (tests/trino), which CI does not run: Trino reads, through `lakesync catalog
# serve` (an Iceberg catalog of type rest), the tables lakesync writes, and writes tables lakesync reads
# and follows as a changelog source (see docs/status.md, "Trino oracle"). Installs the Trino server and
# finds its Java first (scripts/setup-trino.sh), then builds lakesync unless LAKESYNC_BUILD_DIR points
# at an existing build. Extra arguments go to pytest (e.g. -k equality). One Trino server (2 GB heap,
# loopback only) serves the whole run and is stopped at its end, also when a test fails.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

"$root/scripts/setup-trino.sh"
if [[ -z "${LAKESYNC_BUILD_DIR:-}" ]]; then
  "$root/scripts/setup.sh" --test
  export LAKESYNC_BUILD_DIR="$root/build"
fi

export LAKESYNC_TRINO_TESTS=1
echo "== Trino oracle tests (pytest tests/trino) =="
exec .venv/bin/python -m pytest -q -p no:cacheprovider --durations=10 tests/trino "$@"
