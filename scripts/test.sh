#!/usr/bin/env bash
# Installs what the tests need, builds, and runs every test suite CI runs:
#   1. GoogleTest unit tests through ctest
#   2. only with LAKESYNC_FUZZ_SHORT=1: a short run of every fuzz harness (scripts/fuzz.sh;
#      FUZZ_SECONDS each, default 10). Opt-in because its first build compiles the whole engine again
#      with clang and sanitizers, which costs far more than the run itself (docs/reliability.md)
#   3. pytest: CLI, interop (pyiceberg, DuckDB, chDB, pyroaring, fastavro), object-store and
#      PostgreSQL catalog tests, the Python package (tests/python), the Apache Beam transforms
#      (tests/beam, in the Beam venv that scripts/setup-beam.sh makes with a real `pip install .` of
#      the package) and the Spark oracle suite (tests/spark: Spark 4.0 with the Iceberg 1.10 and
#      Delta 4.0 runtimes, installed under .tools/ by scripts/setup-spark.sh with pinned checksums)
# Every skip must be one tests/expected_skips.py lists as a known oracle limitation: with
# LAKESYNC_CI=1 (set here) the skip guard (tests/skip_guard.py) fails the run on any other skip, on
# an environment skip (a suite not set up), or when a listed one is skipped more often than expected.
# A throwaway PostgreSQL server (tests/pgserver.py) runs for the whole script on loopback and is
# stopped on exit, failures included. The output ends with pytest's own summary line. Long
# benchmarks and the long fuzz run are not here (tests/bench runs each benchmark once at a tiny size,
# to see that it still runs): see bench/, docs/benchmarks.md and docs/reliability.md.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

"$root/scripts/setup.sh" --test
# Apache Iceberg's REST fixture for tests/rest/test_apache_rest_fixture.py, where Java and Maven are
# installed (the test skips, saying why, where they are not).
if command -v java >/dev/null && command -v mvn >/dev/null; then
  "$root/scripts/setup-rest-fixture.sh" || echo "setup-rest-fixture failed: the Apache REST fixture test will skip" >&2
fi
# The Beam venv: a clean venv with apache-beam 2.77.0 and pyarrow 25 where `pip install .` compiles
# lakesync a second time, against pyarrow 25's headers (docs/python.md). LAKESYNC_SKIP_BEAM=1 skips it
# (the Beam tests then skip, saying why).
if [[ "${LAKESYNC_SKIP_BEAM:-0}" != "1" ]]; then
  "$root/scripts/setup-beam.sh"
  export LAKESYNC_BEAM_TESTS=1
fi

# The Spark oracle: pyspark in .tools/spark-venv and the runtime jars in .tools/spark-jars (checked
# against pinned sha1s; a second run only re-checks them). A registry that cannot be reached fails
# the run here, loudly: the Spark tests are part of CI, not an optional extra.
if ! "$root/scripts/setup-spark.sh"; then
  echo "test.sh: scripts/setup-spark.sh failed (PyPI or Maven Central unreachable, or a checksum" \
    "mismatch): the Spark suite cannot run, so the test run fails" >&2
  exit 1
fi
export LAKESYNC_SPARK_TESTS=1
# A run that leaves Beam out on purpose (LAKESYNC_SKIP_BEAM=1) is not a CI run: its Beam skips are
# allowed (LAKESYNC_CI=0); set LAKESYNC_CI yourself to override either way.
if [[ -z "${LAKESYNC_CI:-}" ]]; then
  if [[ "${LAKESYNC_SKIP_BEAM:-0}" == 1 ]]; then export LAKESYNC_CI=0; else export LAKESYNC_CI=1; fi
fi

pg_dir="$(mktemp -d)"
chmod 755 "$pg_dir"
cleanup() {
  .venv/bin/python tests/pgserver.py stop "$pg_dir" || true
  rm -rf "$pg_dir"
}
trap cleanup EXIT
eval "$(.venv/bin/python tests/pgserver.py start "$pg_dir")"
echo "PostgreSQL for the tests: $LAKESYNC_TEST_POSTGRES"

echo "== unit tests (ctest) =="
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600

if [[ "${LAKESYNC_FUZZ_SHORT:-0}" == 1 ]]; then
  echo "== fuzz harnesses, short run (scripts/fuzz.sh) =="
  FUZZ_SECONDS="${FUZZ_SECONDS:-10}" "$root/scripts/fuzz.sh"
fi

echo "== integration and interop tests (pytest) =="
export LAKESYNC_BUILD_DIR="$root/build"
# The kill -9 torture test kills 105 times by default (about 16 minutes on 2 busy cores); CI runs a
# third of it to stay well inside its time limit. The full run: LAKESYNC_TORTURE_KILLS=105
# scripts/test.sh -k kill_torture (figures in docs/reliability.md).
export LAKESYNC_TORTURE_KILLS="${LAKESYNC_TORTURE_KILLS:-35}"
# The Trino oracle suite is not part of this command (11-15 minutes and a 2 GB server): it runs with
# scripts/test-trino.sh (docs/status.md, "Trino oracle").
.venv/bin/python -m pytest -q -p no:cacheprovider --ignore=tests/trino --ignore=tests/beam/test_beam_prism.py tests "$@"
