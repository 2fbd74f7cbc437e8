"""Fixtures of the Spark oracle suite (tests/spark; run by scripts/test.sh in CI, and alone by
scripts/test-spark.sh).

One Spark process serves the whole session (JVM start-up costs more than most tests); tests that
need it take the `spark` fixture. Without LAKESYNC_SPARK_TESTS=1 it skips (an environment skip the
skip guard allows outside CI); with it, a missing venv, jar or Java is a failure, not a skip.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent / "interop"):  # spark_runner, and the shared oracles/normalisation
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import spark_runner  # noqa: E402


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    reason = spark_runner.missing()
    if reason:
        if spark_runner.opted_in():
            pytest.fail(f"Spark oracle unavailable although {spark_runner.OPT_IN}=1: {reason}")
        pytest.skip(f"Spark oracle unavailable: {reason}")
    proc = spark_runner.SparkProcess(tmp_path_factory.mktemp("spark"))
    print(f"\nSpark {proc.version} started in {proc.start_seconds:.1f}s (log: {proc.log_path})")
    yield proc
    proc.close()


@pytest.fixture(autouse=True)
def _close_lakes():
    """Stops the REST catalog servers the test's Lakes started (spark_tables.OPEN_LAKES)."""
    yield
    import spark_tables
    while spark_tables.OPEN_LAKES:
        spark_tables.OPEN_LAKES.pop().close()
