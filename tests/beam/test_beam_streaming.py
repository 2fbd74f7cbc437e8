"""Unbounded reads (lakesync.beam with streaming=True) on Beam's streaming DirectRunner, in the Beam venv.

The pipeline runs in the background while pyiceberg and deltalake commit to the source; each new
commit's changes must arrive once, stamped with the commit's time, and match what the writers did
and what a bounded read of the same range gives. Nothing here waits on time: each step waits for a
condition (the batches of every commit so far are on disk) with a generous deadline.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from beam_testing import sorted_rows
from delta_tables import build_table
from lakesync_testing import Warehouse

import lakesync  # noqa: E402

DEADLINE_S = 240
ICEBERG_META = ["_change_type", "_commit_snapshot_id", "_commit_snapshot_sequence_number"]


def collected(out: Path) -> list[tuple[pa.Table, int]]:
    """Every batch the pipeline wrote so far, with its event time (µs)."""
    got = []
    for f in sorted(out.glob("*.parquet")):
        t = pq.read_table(f)
        got.append((t, int(t.schema.metadata[b"event_time_micros"])))
    return got


def wait_for(condition, proc, tmp: Path, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if proc.poll() is not None:
            raise AssertionError(f"the pipeline ended early ({proc.returncode}) while waiting for {what}: "
                                 f"{proc.stdout.read()[-4000:]}\n{(tmp / 'driver.stderr').read_text()[-4000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} after {DEADLINE_S} s:\n{(tmp / 'driver.stderr').read_text()[-4000:]}")
        time.sleep(0.2)


def finish(proc, stop: Path, tmp: Path) -> dict:
    stop.touch()
    out, _ = proc.communicate(timeout=DEADLINE_S)
    assert proc.returncode == 0, (tmp / "driver.stderr").read_text()[-4000:]
    return json.loads(out.strip().splitlines()[-1])


def test_unbounded_iceberg_read_emits_each_new_snapshot_once(beam, tmp_path):
    check_unbounded_iceberg_read(beam, tmp_path, "fnapi")


def check_unbounded_iceberg_read(beam, tmp_path, runner: str) -> None:
    """The Iceberg case on a runner of beam_driver.py (also run on Prism: test_beam_prism.py)."""
    src = Warehouse(tmp_path / "src")
    cat = src.pyiceberg()
    cat.create_namespace("src")
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string())])
    table = cat.create_table("src.items", Schema(NestedField(1, "id", LongType(), required=True),
                                                 NestedField(2, "name", StringType()), identifier_field_ids=[1]),
                             properties={"format-version": "2"})

    def rows(ids, tag):
        return pa.table({"id": ids, "name": [f"{tag}-{i}" for i in ids]}, schema=schema)

    table.append(rows(list(range(10)), "a"))
    out, stop = tmp_path / "out", tmp_path / "stop"
    options = {"poll_interval_seconds": 1, "include_metadata_columns": ICEBERG_META}
    proc = beam.start("watch", "iceberg", "src.items", src.config_file, out, json.dumps(options),
                      "--stop-file", stop, "--runner", runner, tmp=tmp_path)

    def snapshots_seen():
        return {sid for t, _ in collected(out) for sid in t.column("_commit_snapshot_id").to_pylist()}

    def caught_up():
        # Every snapshot that holds changes has arrived (a delete of nothing would have none).
        return snapshots_seen() == {s.snapshot_id for s in cat.load_table("src.items").snapshots()}

    try:
        wait_for(caught_up, proc, tmp_path, "batches of the first snapshot")
        # New commits while the pipeline runs: each is picked up by a later poll.
        for step in range(3):
            t = cat.load_table("src.items")
            if step == 1:
                t.delete("id < 4")
            else:
                t.append(rows(list(range(10 * (step + 1), 10 * (step + 2))), f"s{step}"))
            wait_for(caught_up, proc, tmp_path, f"batches of commit {step + 2}")
        state = finish(proc, stop, tmp_path)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert state["errors"] == [], state

    got = collected(out)
    changes = pa.concat_tables([t for t, _ in got])
    cols = ["id", "name"] + ICEBERG_META
    # pyiceberg's own account of what each snapshot did.
    snapshots = sorted(cat.load_table("src.items").snapshots(), key=lambda s: s.sequence_number)
    assert [s.summary.operation.value for s in snapshots] == ["append", "append", "overwrite", "append"]
    by_snapshot = {}
    for r in changes.select(cols).to_pylist():
        by_snapshot.setdefault(r["_commit_snapshot_id"], []).append(r)
    inserted = lambda sid: sorted(r["id"] for r in by_snapshot[sid] if r["_change_type"] == "INSERT")  # noqa: E731
    deleted = lambda sid: sorted(r["id"] for r in by_snapshot[sid] if r["_change_type"] == "DELETE")  # noqa: E731
    assert inserted(snapshots[0].snapshot_id) == list(range(10)) and deleted(snapshots[0].snapshot_id) == []
    assert inserted(snapshots[1].snapshot_id) == list(range(10, 20))
    assert deleted(snapshots[2].snapshot_id) == [0, 1, 2, 3] and inserted(snapshots[2].snapshot_id) == []
    assert inserted(snapshots[3].snapshot_id) == list(range(30, 40))
    # Each batch carries its snapshot's commit time as its event time.
    stamp = {s.snapshot_id: s.timestamp_ms * 1000 for s in snapshots}
    for t, micros in got:
        assert set(t.column("_commit_snapshot_id").to_pylist()) == {sid for sid in stamp if stamp[sid] == micros}
    # Once each: the same rows as a bounded read of the whole range.
    bounded = lakesync.iceberg_changes(lakesync.Catalog(src.config), "src.items", columns=ICEBERG_META).read_all()
    assert sorted_rows(changes.select(cols).to_pylist(), cols) == sorted_rows(bounded.select(cols).to_pylist(), cols)


def test_unbounded_delta_read_stops_at_its_end_bound(beam, tmp_path):
    from deltalake import DeltaTable
    from beam_testing import extend_delta

    delta = tmp_path / "delta"
    build_table(delta, seed=7, versions=2, partitioned=False)
    assert DeltaTable(str(delta)).version() == 1
    out = tmp_path / "out"
    meta = ["_change_type", "_commit_version"]
    options = {"start_version": 0, "end_version": 3, "poll_interval_seconds": 1, "include_metadata_columns": meta}
    proc = beam.start("watch", "delta", delta, tmp_path / "unused.json", out, json.dumps(options), tmp=tmp_path)
    try:
        def versions_seen():
            return {v for t, _ in collected(out) for v in t.column("_commit_version").to_pylist()}

        wait_for(lambda: versions_seen() == {0, 1}, proc, tmp_path, "versions 0 and 1")
        extend_delta(delta, seed=8, versions=3)  # versions 2, 3 and 4; the read must end after 3
        out_text, _ = proc.communicate(timeout=DEADLINE_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, (tmp_path / "driver.stderr").read_text()[-4000:]
    state = json.loads(out_text.strip().splitlines()[-1])
    assert state["finished"] and state["errors"] == [], state
    changes = pa.concat_tables([t for t, _ in collected(out)])
    want = lakesync.delta_changes(delta, start_version=0, end_version=3, columns=meta).read_all()
    cols = want.column_names
    assert sorted(set(changes.column("_commit_version").to_pylist())) == [0, 1, 2, 3]
    # deltalake's own change feed of the same range has as many changes per version.
    cdf = DeltaTable(str(delta)).load_cdf(starting_version=0, ending_version=3).read_all()
    per_version = lambda t: sorted(t.column("_commit_version").to_pylist())  # noqa: E731
    assert per_version(changes) == per_version(cdf)
    assert sorted_rows(changes.select(cols).to_pylist(), cols) == sorted_rows(want.to_pylist(), cols)
