"""Optimistic commits under contention: several lakesync processes append to and delete from one table
at the same time through the embedded SQLite catalog. Every commit must land exactly once (conflicts
are retried after a refresh), and the result is checked with pyiceberg as the independent reader."""

from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
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

    with ThreadPoolExecutor(max_workers=writers) as pool:
        results = list(pool.map(lambda w: run(env, "table", "append", "c.t", str(tmp_path / f"in{w}.jsonl")),
                                range(writers)))
    assert all(r.returncode == 0 for r in results)

    # Concurrent deletes of disjoint rows: each must apply on top of the others' commits.
    with ThreadPoolExecutor(max_workers=writers) as pool:
        list(pool.map(lambda w: run(env, "table", "delete", "c.t", "--where", f"id = {w * 1000}"), range(writers)))

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
        "--format-version", str(format_version), "-p", "commit.retry.min-wait-ms=10")
    (tmp_path / "in.jsonl").write_text("".join(json.dumps({"id": i}) + "\n" for i in range(100)))
    run(env, "table", "append", "c.t", str(tmp_path / "in.jsonl"))
    deleters = 5
    with ThreadPoolExecutor(max_workers=deleters) as pool:
        list(pool.map(lambda d: run(env, "table", "delete", "c.t", "--where", f"id = {d * 7}"), range(deleters)))
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
