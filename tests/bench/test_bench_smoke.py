"""Smoke tests of the benchmarks in bench/: each script runs end to end at a tiny size.

Why: CI does not run the benchmarks, so a change could break one unnoticed (a `lakesync changes
--format parquet --output /dev/null` that failed once broke bench/delta_cdf_bench.py's default mode,
and only a person running it saw). Each test runs one script as a user would, in its own process,
with every size flag at its smallest, and checks that it exited 0 and wrote its summary. The scripts
check every reader's result against expectations derived from their generated data (or an
independent oracle) before a time counts, and exit non-zero when one is wrong; the assertions here
also make sure those checks ran (the lines they print, the `checks` they record).

What these tests do not prove: anything about the timings. They are taken at a size where process
start-up dominates and are never compared to anything. Results and scratch data go under pytest's
tmp_path (--results-dir / --work ...), never into bench/results/.

Not here: bench/beam_bench.py (it needs the Beam venv, .tools/beam-venv, and starts Beam's
DirectRunner with worker processes for every run) and compact_bench.py --spark (a JVM and Spark).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"
BUILD = Path(os.environ["LAKESYNC_BUILD_DIR"]).resolve()
RESULTS = BENCH / "results"
# A bench that hangs fails its test instead of the whole run; each takes seconds at these sizes.
TIMEOUT_S = 600


def _needs(target: str):
    path = BUILD / target
    return pytest.mark.skipif(not path.exists(),
                              reason=f"{path} is not built (build the {target} target; set LAKESYNC_BUILD_DIR)")


needs_lakesync = _needs("lakesync")
needs_scan_bench = _needs("scan_bench")
needs_catalog_load_bench = _needs("catalog_load_bench")


@pytest.fixture
def needs_wrk():
    if shutil.which("wrk") is None:
        pytest.skip("wrk is not installed (scripts/setup.sh --test installs Debian's wrk)")


@pytest.fixture(autouse=True)
def bench_results_untouched():
    """A smoke run must not litter the repository: bench/results/ is the same after it."""

    def listing():
        return sorted(str(p.relative_to(RESULTS)) for p in RESULTS.rglob("*")) if RESULTS.exists() else None

    before = listing()
    yield
    assert listing() == before, "a benchmark wrote into bench/results/ (give it the test's --results-dir)"


def run_bench(script: str, *args, tmp_path: Path) -> str:
    """Runs bench/<script> with the test's Python (the venv's) from a scratch directory; returns its
    stdout. Temporary folders the scripts make with tempfile land under tmp_path too."""
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    env = dict(os.environ, LAKESYNC_BUILD_DIR=str(BUILD), TMPDIR=str(tmp))
    proc = subprocess.run([sys.executable, str(BENCH / script), *map(str, args)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    assert proc.returncode == 0, (f"{script} exited {proc.returncode}\n--- stdout (tail)\n{proc.stdout[-4000:]}"
                                  f"\n--- stderr (tail)\n{proc.stderr[-4000:]}")
    return proc.stdout


def only_result(folder: Path, pattern: str) -> dict:
    found = sorted(folder.glob(pattern))
    assert len(found) == 1, f"expected one {pattern} in {folder}, found {[p.name for p in found]}"
    return json.loads(found[0].read_text())


def json_lines(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


@needs_lakesync
@needs_scan_bench
def test_apply_bench(tmp_path):
    results = tmp_path / "results"
    out = run_bench("apply_bench.py", "--rows", 2000, "--changes", 200, "--repeat", 1, "--bill-commits", 2,
                    "--bill-changes", 50, "--build-dir", BUILD, "--work-dir", tmp_path / "work",
                    "--results-dir", results, tmp_path=tmp_path)
    assert "bill: validated" in out
    r = only_result(results, "apply_bench-2000-*.json")
    summary = r["merge"]["summary"]
    assert sorted(summary) == sorted(["ls-v3-dv", "ls-v2-pos", "ls-v2-eq", "delta-rs", "duckdb", "pyiceberg"])
    for engine, s in summary.items():
        # Every engine's final state was checked by a reader before its time counted.
        assert not s.get("failed") and s["n"] == 1 and s["checked_by"], (engine, s)
    assert r["bill"]["commits"] and all(c["ok"] for c in r["bill"]["checks"].values()), r["bill"]["checks"]


@needs_lakesync
def test_changelog_bench(tmp_path):
    results = tmp_path / "results"
    run_bench("changelog_bench.py", "--changes", 200, "--snapshots", 3, "--repeat", 1, "--build", BUILD,
              "--work", tmp_path / "work", "--results-dir", results, tmp_path=tmp_path)
    r = only_result(results, "changelog-*.json")
    # lakesync's change sets are checked per snapshot (a wrong one exits); DuckDB's diff is recorded.
    assert sorted(r["median_seconds"]) == ["duckdb", "lakesync"]
    assert r["snapshots"] == 3 and r["wrong_results"] == {}


@needs_lakesync
@needs_scan_bench
def test_compact_bench(tmp_path):
    results = tmp_path / "results"
    out = run_bench("compact_bench.py", "--rows", 2000, "--commits", 3, "--changes", 100, "--repeat", 1,
                    "--build", BUILD, "--work", tmp_path / "work", "--results-dir", results, tmp_path=tmp_path)
    assert "compaction:" in out
    r = only_result(results, "compact_bench-2000-*.json")
    c = r["compaction"]
    assert c["rewritten_data_files"] > 0 and c["added_data_files"] >= 1
    assert c["written_records"] == r["expected"]["rows"]  # the compacted table holds the live rows
    assert sorted(r["median"]) == ["after", "before", "copy"]


@needs_lakesync
def test_delta_cdf_bench_parquet_output(tmp_path):
    """The default timed output: Parquet written to /dev/null (the mode that once broke)."""
    check_delta_cdf(tmp_path)


@needs_lakesync
def test_delta_cdf_bench_count_output(tmp_path):
    check_delta_cdf(tmp_path, "--lakesync-output=--count")


def check_delta_cdf(tmp_path: Path, *extra) -> None:
    results = tmp_path / "results"
    out = run_bench("delta_cdf_bench.py", "--rows-per-commit", 100, "--commits", 2, "--commit-sets", "1,2",
                    "--rounds", 1, "--build-dir", BUILD, "--results-dir", results, *extra, tmp_path=tmp_path)
    for k in (1, 2):
        assert f"[1, {k}]: " in out and "both readers agree with the generated counts" in out, out
    r = only_result(results, "delta_cdf_bench-100-*.json")
    assert [row["commits"] for row in r["summary"]] == [1, 2]
    assert all(row["change_rows"] > 0 for row in r["summary"])
    assert all(len(v) == 1 for v in r["samples"]["lakesync"].values())


@needs_lakesync
@needs_scan_bench
def test_scan_bench(tmp_path):
    results = tmp_path / "results"
    out = run_bench("scan_bench.py", "--rows", 2000, "--repeat", 1, "--build-dir", BUILD,
                    "--work-dir", tmp_path / "work", "--results-dir", results, tmp_path=tmp_path)
    for level in ("0%", "1%", "10%"):
        assert f"validated {level}: every reader returned the expected rows" in out
    r = only_result(results, "scan_bench-2000-*.json")
    engines = ["lakesync", "ls-reader", "arrow-floor", "arrow-floor-crc", "arrow-file", "pyarrow", "pyiceberg",
               "duckdb", "duckdb-count"]
    for level in ("0%", "1%", "10%"):
        assert all(r["summary"][level][e]["n"] == 1 for e in engines), level
        assert r["summary"][level]["lakesync"]["rows"] == r["expected"][level]["rows"]


@needs_lakesync
@needs_catalog_load_bench
def test_rest_catalog_bench(tmp_path, needs_wrk):
    results = tmp_path / "results"
    run_bench("rest_catalog_bench.py", "--build-dir", BUILD, "--seconds", 1, "--snapshots", 2,
              "--results-dir", results, tmp_path=tmp_path)
    r = only_result(results, "rest_catalog_*.json")
    ours = [x for x in r["results"] if x["engine"].startswith("lakesync")]
    floor = [x for x in r["results"] if x["engine"].startswith("SQL catalog")]
    assert {(x["op"], x["concurrency"]) for x in ours} == {(op, c) for op in ("load", "commit") for c in (1, 16)}
    assert len(floor) == 4
    for x in ours + floor:
        assert x["per_second"] > 0, x
        # loadTable never fails, nor does a commit without concurrent writers; 16 racing commits may
        # answer 409 (counted apart by the bench).
        if x["op"] == "load" or x["concurrency"] == 1:
            assert x.get("non_2xx", x.get("failures")) == 0, x


@needs_lakesync
def test_sharing_bench(tmp_path, needs_wrk):
    out = run_bench("sharing_bench.py", "--files", 20, "--versions", 2, "--rows-per-version", 100,
                    "--seconds", 1, "--repeat", 1, tmp_path=tmp_path)
    lines = json_lines(out)
    by = {}
    for x in lines:
        by.setdefault(x.get("bench"), []).append(x)
    assert by["query-cold"][0]["files"] == 20  # the bench asserts the answer lists every file
    assert by["query-uncached-answer"][0]["files"] == 20
    assert by["query-10k-files"][0]["non_2xx"] == 0
    assert by["changes-10-versions"][0]["non_2xx"] == 0 and by["changes-10-versions"][0]["lines"] > 2
    assert by["client-load"][0]["rows"] == 2 * 100 + 10 and by["client-changes"][0]["rows"] == 2 * 100
    assert "load_average_at_end" in lines[-1]


@needs_lakesync
def test_maintenance_day_bench(tmp_path):
    results = tmp_path / "results"
    run_bench("maintenance_day_bench.py", "--rows", 2000, "--changes", 100, "--runs", 2, "--repeat", 1,
              "--build", BUILD, "--work", tmp_path / "work", "--results-dir", results, tmp_path=tmp_path)
    r = only_result(results, "maintenance_day_bench-2000-*.json")
    assert len(r["per_run"]) == 2 and sorted(r["summary"]) == ["with", "without"]
    for run in r["per_run"]:
        assert run["files_with"]["data"] >= 1 and run["files_without"]["data"] >= 1, run
        # Run 0 imports the initial snapshot (its last summary line may say nothing-new after that
        # commit); every later run has a Delta change to commit.
        if run["run"] > 0:
            assert run["job_with"]["status"] == "committed" and run["job_without"]["status"] == "committed", run
    # The `with` job's maintenance block did something during the day; the other job has none.
    done = [step for run in r["per_run"] for step, v in (run["job_with"]["maintenance"] or {}).items()
            if isinstance(v, dict) and v.get("status") == "done"]
    assert done
    assert all(not run["job_without"]["maintenance"] for run in r["per_run"])


@needs_lakesync
def test_job_bench(tmp_path):
    """With its peer (deltalake + pyiceberg): a few seconds at this size."""
    results = tmp_path / "results"
    out = run_bench("job_bench.py", "--lakesync", BUILD / "lakesync", "--rows-per-commit", 100, "--versions", 2,
                    "--small-rows-per-commit", 100, "--small-versions", 2, "--rounds", 1,
                    "--results-dir", results, tmp_path=tmp_path)
    assert "final table checked" in out
    r = only_result(results, "job_bench-100-*.json")
    assert sorted(r["checks"]) == ["ls-once/full", "ls-per-ver/full", "peer/full"]
    assert all(c["ok"] and c["runs"] == 1 for c in r["checks"].values()), r["checks"]
    assert "failed" not in r["peer"]
    assert [x["pipeline"] for x in r["summary"]] == ["ls-once", "ls-per-ver", "peer"]
