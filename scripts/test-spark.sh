#!/usr/bin/env bash
# The Spark oracle suite (tests/spark) alone (CI runs it within scripts/test.sh): Spark 4.0 with the Iceberg 1.10 and
# Delta 4.0 runtimes reads the tables lakesync writes and writes tables lakesync reads (see
# docs/status.md, "Spark oracle"). Installs the Spark venv and jars first (scripts/setup-spark.sh),
# then builds lakesync unless LAKESYNC_BUILD_DIR points at an existing build. Extra arguments go to
# pytest (e.g. -k delta). One local Spark session (local[2], 2 GB driver) serves the whole run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

"$root/scripts/setup-spark.sh"
if [[ -z "${LAKESYNC_BUILD_DIR:-}" ]]; then
  "$root/scripts/setup.sh" --test
  export LAKESYNC_BUILD_DIR="$root/build"
fi

export LAKESYNC_SPARK_TESTS=1
echo "== Spark oracle tests (pytest tests/spark) =="
exec .venv/bin/python -m pytest -q -p no:cacheprovider --durations=10 tests/spark "$@"
