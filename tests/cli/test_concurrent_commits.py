"""Optimistic commits under contention: several lakesync processes append to and delete from one table
at the same time through the embedded SQLite catalog. Every commit must land exactly once (conflicts
are retried after a refresh), and the result is checked with pyiceberg as the independent reader.

The race is made, not hoped for: every writer is armed with the failpoint commit.pause=wait:PATH
(common/failpoint.h), which holds it just before it asks the catalog, with its commit built on the
table state it read. When all of them are held, the test releases them together: one commit wins and
every other writer must conflict at least once, which the test counts in their logs."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

BUILD_DIR = Path(os.environ["LAKESYNC_BUILD_DIR"])
LAKESYNC = BUILD_DIR / "lakesync"

pytestmark = pytest.mark.skipif(not LAKESYNC.exists(), reason=f"{LAKESYNC} not built")


def run(env, *args, check=True):
    proc = subprocess.run([str(LAKESYNC), *args], env=env, capture_output=True, text=True, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"lakesync {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc


def race(env, tmp_path, commands: list[list[str]], name: str) -> tuple[list[subprocess.CompletedProcess], int]:
    """Runs the commands at once, all held at commit.pause until every one has reached it, then released
    together. Returns their results and the number of commit conflicts their logs report."""
    release = tmp_path / f"release-{name}"
    armed = dict(env, LAKESYNC_FAILPOINTS=f"commit.pause=wait:{release}")
    procs = [subprocess.Popen([str(LAKESYNC), "--log-level", "info", *c], env=armed, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for c in commands]
    try:
        deadline = time.monotonic() + 180
        while len(list(tmp_path.glob(f"{release.name}.reached.*"))) < len(procs):
            early = [p for p in procs if p.poll() is not None]
            assert not early, f"a writer exited before reaching the commit: {early[0].communicate()[1][-3000:]}"
            assert time.monotonic() < deadline, "the writers did not all reach the commit in 180 s"
            time.sleep(0.02)  # polling a condition (files), not timing anything
        release.touch()
        results = []
        for c, p in zip(commands, procs):
            out, err = p.communicate(timeout=300)
            results.append(subprocess.CompletedProcess(c, p.returncode, out, err))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    for r in results:
        assert r.returncode == 0, f"lakesync {' '.join(r.args)} failed ({r.returncode}): {r.stderr[-3000:]}"
    conflicts = sum(r.stderr.count(" conflicted (") for r in results)
    print(f"{name}: {len(commands)} writers released together, {conflicts} commit conflicts retried")
    return results, conflicts


@pytest.fixture
def env(tmp_path):
    e = dict(os.environ)
    e["LAKESYNC_WAREHOUSE"] = str(tmp_path / "wh")
    return e


def pyiceberg_rows(tmp_path, name):
    from pyiceberg.catalog import load_catalog

    wh = tmp_path / "wh"
    catalog = load_catalog("lakesync", type="sql", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
    return catalog.load_table(name).scan().to_arrow().to_pylist()


@pytest.mark.parametrize("format_version", [2, 3])
def test_parallel_appends_and_deletes_lose_nothing(tmp_path, env, format_version):
    (tmp_path / "schema.yaml").write_text(
        "fields:\n  - {name: id, type: long, required: true}\n  - {name: writer, type: int}\n"
    )
    run(env, "namespace", "create", "c")
    run(env, "table", "create", "c.t", "--schema", str(tmp_path / "schema.yaml"),
        "--partition", "bucket(id, 4)", "--format-version", str(format_version),
        "-p", "commit.retry.num-retries=20", "-p", "commit.retry.min-wait-ms=10")
    writers, rows_per_file = 6, 50
    for w in range(writers):
        lines = [json.dumps({"id": w * 1000 + i, "writer": w}) for i in range(rows_per_file)]
        (tmp_path / f"in{w}.jsonl").write_text("\n".join(lines) + "\n")

    _, conflicts = race(env, tmp_path, [["table", "append", "c.t", str(tmp_path / f"in{w}.jsonl")]
                                        for w in range(writers)], "appends")
    # All committed on the same base: every writer but the first to reach the catalog conflicted.
    assert conflicts >= writers - 1, conflicts

    # Concurrent deletes of disjoint rows: each must apply on top of the others' commits.
    _, conflicts = race(env, tmp_path, [["table", "delete", "c.t", "--where", f"id = {w * 1000}"]
                                        for w in range(writers)], "deletes")
    assert conflicts >= writers - 1, conflicts

    expected = sorted(w * 1000 + i for w in range(writers) for i in range(1, rows_per_file))
    got = sorted(r["id"] for r in pyiceberg_rows(tmp_path, "c.t"))
    assert got == expected
    scanned = run(env, "scan", "--table", "c.t", "--format", "jsonl").stdout.splitlines()
    assert sorted(json.loads(line)["id"] for line in scanned) == expected
    history = json.loads(run(env, "table", "history", "c.t", "--json").stdout)
    assert len(history) == 2 * writers
    assert [s["sequence-number"] for s in history] == list(range(1, 2 * writers + 1))


@pytest.mark.parametrize("format_version", [2, 3])
def test_parallel_deletes_in_one_data_file_all_apply(tmp_path, env, format_version):
    """Deletes racing on the same data file: on v3 each must merge into the file's one deletion vector
    (a concurrently added vector forces re-resolution, never two live vectors)."""
    (tmp_path / "schema.yaml").write_text("fields:\n  - {name: id, type: long, required: true}\n")
    run(env, "namespace", "create", "c")
    run(env, "table", "create", "c.t", "--schema", str(tmp_path / "schema.yaml"),
        "--format-version", str(format_version), "-p", "commit.retry.min-wait-ms=10",
        "-p", "commit.retry.num-retries=10")
    (tmp_path / "in.jsonl").write_text("".join(json.dumps({"id": i}) + "\n" for i in range(100)))
    run(env, "table", "append", "c.t", str(tmp_path / "in.jsonl"))
    deleters = 5
    _, conflicts = race(env, tmp_path, [["table", "delete", "c.t", "--where", f"id = {d * 7}"]
                                        for d in range(deleters)], "deletes")
    assert conflicts >= deleters - 1, conflicts
    expected = sorted(set(range(100)) - {d * 7 for d in range(deleters)})
    assert sorted(r["id"] for r in pyiceberg_rows(tmp_path, "c.t")) == expected
    if format_version == 3:
        from pyiceberg.catalog import load_catalog

        wh = tmp_path / "wh"
        table = load_catalog("lakesync", type="sql", uri=f"sqlite:///{wh}/catalog.db",
                             warehouse=f"file://{wh}").load_table("c.t")
        summary = table.current_snapshot().summary
        assert summary["total-position-deletes"] == str(deleters)
        assert summary["total-delete-files"] == "1"  # one live vector for the one data file
