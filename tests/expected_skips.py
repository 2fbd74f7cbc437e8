"""Every reason a test may be skipped for, in one place (the skip guard, tests/skip_guard.py, fails the
run on any skip not matched here, and on more skips under an entry than its max_count).

Three kinds:
- "oracle": a known limitation of an independent reader (oracle) at a pinned version, with the exact
  error it raises. Tests do not catch broad exceptions: they call `oracle_limitation(key, error)`,
  which skips only when the installed oracle is the version named here and the error carries the
  text named here, and re-raises anything else. A new oracle version makes the entry fail until
  someone checks whether the limitation is still there (then update `version`, or delete the entry
  and its skip). These (and generated-data entries) are the only skips allowed in CI.
- "generated-data": a test whose generated input, by chance, lacks what it checks (allowed in CI, at
  most max_count times).
- "environment": a suite or tool that is not set up where the tests run (Spark or Beam not installed,
  a binary not built). Allowed in a local `pytest tests`, refused under CI (LAKESYNC_CI=1), where
  scripts/test.sh sets everything up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import metadata

import pytest


@dataclass(frozen=True)
class Known:
    key: str
    kind: str  # "oracle", "generated-data" or "environment"
    what: str  # one line: what is not checked, and why
    max_count: int  # most skips one full run may have under this entry
    reason: str = ""  # environment entries: regex matched (re.search) against the skip reason
    oracle: str = ""  # oracle entries: the distribution whose version is checked
    version: str = ""  # ... the version the limitation was seen with
    error: str = ""  # ... the exact text (a substring) of the error the oracle raises

    def pattern(self) -> str:
        return self.reason if self.kind != "oracle" else "^" + re.escape(f"[{self.key}]")


ENTRIES: list[Known] = [
    # --- oracle limitations ----------------------------------------------------------------------------
    Known("duckdb-timestamptz-ns", "oracle",
          "DuckDB's iceberg extension cannot read Iceberg v3 timestamptz_ns columns",
          max_count=1, oracle="duckdb", version="1.5.5", error="Unrecognized primitive type: timestamptz_ns"),
    # --- generated data ------------------------------------------------------------------------------
    # Allowed in CI: the test's generated input (wall-clock commit times) may lack what it needs.
    Known("delta-history-without-gap", "generated-data",
          "test_timestamps_between_two_commits_give_no_rows needs two Delta commits 3 ms apart; deltalake "
          "wrote the generated history faster than that",
          max_count=1, reason=r"^no two commits of this history are 3 ms apart"),
    # --- environment ---------------------------------------------------------------------------------
    Known("spark-suite-not-enabled", "environment",
          "the Spark oracle suite runs only with LAKESYNC_SPARK_TESTS=1 (scripts/test.sh, scripts/test-spark.sh)",
          max_count=100, reason=r"^Spark oracle unavailable: "),
    Known("trino-suite-not-enabled", "environment",
          "the Trino oracle suite runs only with LAKESYNC_TRINO_TESTS=1 (scripts/test-trino.sh; scripts/test.sh "
          "leaves tests/trino out)",
          max_count=100, reason=r"^Trino oracle unavailable: "),
    Known("prism-suite-not-enabled", "environment",
          "the Beam runs on Prism run only with LAKESYNC_PRISM_TESTS=1 (scripts/test-beam-prism.sh; scripts/test.sh "
          "leaves tests/beam/test_beam_prism.py out)",
          max_count=5, reason=r"^Prism runner unavailable: "),
    Known("beam-venv-missing", "environment",
          "the Beam venv is built by scripts/setup-beam.sh (scripts/test.sh)",
          max_count=50, reason=r"is missing: run scripts/setup-beam\.sh"),
    Known("rest-fixture-missing", "environment",
          "Apache's REST fixture is installed by scripts/setup-rest-fixture.sh (needs Java and Maven)",
          max_count=5, reason=r"^Apache's REST fixture is not installed"),
    Known("postgres-missing", "environment",
          "PostgreSQL is installed by scripts/setup.sh --test",
          max_count=200, reason=r"^PostgreSQL is not installed"),
    Known("not-built", "environment",
          "a lakesync binary or probe program is not built (LAKESYNC_BUILD_DIR)",
          max_count=10000, reason=r" is not built \(build the | not built$"),
    Known("chromium-missing", "environment",
          "the dashboard's browser tests (tests/ui) need Debian's chromium, installed by scripts/setup.sh --test",
          max_count=10, reason=r"^Chromium is not installed"),
    Known("wrk-missing", "environment",
          "the REST catalog and sharing benchmarks' smoke tests (tests/bench) load the servers with Debian's wrk, "
          "installed by scripts/setup.sh --test",
          max_count=2, reason=r"^wrk is not installed"),
    Known("python-package-missing", "environment",
          "a test oracle package from requirements/test.txt is not installed in the venv",
          max_count=10000, reason=r"^could not import '"),
]

BY_KEY = {e.key: e for e in ENTRIES}
assert len(BY_KEY) == len(ENTRIES), "duplicate expected-skip keys"


def match(reason: str) -> Known | None:
    """The entry a skip reason belongs to, or None."""
    for e in ENTRIES:
        if re.search(e.pattern(), reason):
            return e
    return None


def installed_version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def oracle_limitation(key: str, error: BaseException | str) -> None:
    """Skips the test as the known limitation `key` when `error` is it: the installed oracle is the
    version the entry names and the error's text contains the entry's. Otherwise returns, and the
    caller re-raises (`raise` in its except block): an unknown error is a failure, not a skip."""
    entry = BY_KEY[key]
    assert entry.kind == "oracle", key
    text = str(error)
    have = installed_version(entry.oracle)
    if entry.error not in text:
        return
    if have != entry.version:
        pytest.fail(f"[{key}] {entry.oracle} is {have}, but the known limitation was seen with {entry.version}: "
                    f"check whether it still holds and update tests/expected_skips.py ({text.splitlines()[0][:200]})")
    first = text.strip().splitlines()[0] if text.strip() else type(error).__name__
    pytest.skip(f"[{key}] {entry.oracle} {entry.version}: {entry.what}: {first[:200]}")
