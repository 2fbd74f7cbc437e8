"""Schema evolution in the Beam transforms (issue 16, docs/scale-out.md): a `SyncJob` whose Delta source
(written by deltalake) adds a column and widens two mid-range ends equal to the source, with the range
split at the schema change by the engine's own plan (the CLI's `JobRunner::Parts`) and each part's schema
change committed with its rows (pyiceberg reads the field ids and each snapshot's schema); an
incompatible change fails the pipeline with the CLI's message and leaves the target as it was. Kept
small: one source, the in-process DirectRunner."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

import sys
from pathlib import Path

from beam_testing import sorted_rows
from lakesync_testing import Warehouse

# The Delta suites' table helpers; appended, so that no module of this folder is shadowed.
sys.path.append(str(Path(__file__).resolve().parents[1] / "delta"))
from delta_tables import add_column_then_widen, create_small_cdf_table  # noqa: E402

COLUMNS = ["id", "qty", "price", "note"]


def test_sync_job_follows_a_delta_schema_change_mid_range_like_the_cli(beam, tmp_path):
    from deltalake import DeltaTable, write_deltalake

    src = tmp_path / "d"
    create_small_cdf_table(src)
    job = tmp_path / "job.yaml"
    job.write_text(json.dumps({
        "name": "evolving",
        "source": {"type": "delta_lake_cdc", "table": str(src), "start_version": 0},
        "sink": {"table": "db.t", "equality_columns": ["id"], "table_properties": {"format-version": "3"}},
    }))
    wh = Warehouse(tmp_path / "wh")
    first = beam.sync(job, wh, 2, tmp_path, runner="direct")
    assert first["status"] == "committed" and first["range"] == {"from": 0, "through": 0}, first

    # The CLI test's workload (delta_tables.add_column_then_widen): v1 adds `note`, v2 updates a row,
    # v3 widens qty and price, v4 appends a value only the wider type holds.
    add_column_then_widen(src)
    summary = beam.sync(job, wh, 2, tmp_path, runner="direct")
    assert summary["status"] == "committed", summary
    assert summary["range"] == {"from": 1, "through": 4}
    # Split where the CLI splits: before the version that changes the schema again (v3).
    assert [p["range"] for p in summary["parts"]] == [{"from": 1, "through": 2}, {"from": 3, "through": 4}]

    want = sorted_rows(DeltaTable(str(src)).to_pyarrow_table().to_pylist(), COLUMNS)
    t = wh.pyiceberg().load_table("db.t")
    assert sorted_rows(t.scan().to_arrow().to_pylist(), COLUMNS) == want
    ids = {f.name: (f.field_id, str(f.field_type)) for f in t.schema().fields}
    assert ids == {"id": (1, "long"), "qty": (2, "long"), "price": (3, "double"), "note": (4, "string")}
    # One snapshot per part, each naming the schema its rows were written with.
    snaps = t.metadata.snapshots
    positions = [s.summary[f"lakesync.source-position.{summary['sink_id']}"] for s in snaps]
    assert positions == ["0", "2", "4"]
    schemas = {s.schema_id: s for s in t.metadata.schemas}
    assert [str(schemas[s.schema_id].find_field("qty").field_type) for s in snaps] == ["int", "int", "long"]
    assert "note" not in schemas[snaps[0].schema_id].column_names and "note" in schemas[snaps[1].schema_id].column_names

    # An incompatible change (qty long → double) fails the pipeline with the CLI's message, before
    # anything is written. The rows go first (as in the CLI's test): an overwrite that removes rows
    # written with the old type fails earlier, in the reader, naming the file and both types
    # (docs/status.md).
    DeltaTable(str(src)).delete()
    assert beam.sync(job, wh, 2, tmp_path, runner="direct")["status"] == "committed"
    snaps = wh.pyiceberg().load_table("db.t").metadata.snapshots
    narrow = pa.schema([("id", pa.int64()), ("qty", pa.float64()), ("price", pa.float64()), ("note", pa.string())])
    write_deltalake(str(src), pa.table({"id": pa.array([6], pa.int64()), "qty": [0.5], "price": [6.5], "note": ["six"]},
                                       schema=narrow), mode="overwrite", schema_mode="overwrite")
    with pytest.raises(AssertionError) as failed:
        beam.sync(job, wh, 2, tmp_path, runner="direct")
    cli = wh.cli("run", job, check=False)
    assert cli.returncode != 0
    assert "column 'qty' changed from long to double" in cli.stderr, cli.stderr
    core = cli.stderr[cli.stderr.index("schema_evolution: "):].split("\n")[0]
    assert core in str(failed.value), (core, str(failed.value)[-3000:])
    assert wh.pyiceberg().load_table("db.t").metadata.snapshots == snaps


def test_write_iceberg_changes_follows_the_input_schema_when_asked(beam, tmp_path):
    """WriteIcebergChanges(schema_evolution="additive"): the input's new column is added (next field id)
    and its type widened in the one commit with the rows; pyiceberg reads old rows with null there."""
    import lakesync
    import pyarrow.parquet as pq

    wh = Warehouse(tmp_path / "wh")
    lakesync.Catalog(wh.config).apply("db.w", pa.table({"id": pa.array([1, 2], pa.int64()),
                                                        "n": pa.array([1, 2], pa.int32())}))
    changes = tmp_path / "changes.parquet"
    pq.write_table(pa.table({"id": pa.array([3], pa.int64()), "n": pa.array([2**40], pa.int64()), "note": ["three"],
                             "seq": pa.array([1], pa.int64())}),
                   changes)
    summary = beam.run("write", "db.w", wh.config_file, changes,
                       json.dumps({"schema_evolution": "additive", "equality_columns": ["id"],
                                   "sequence_number_column": "seq"}),
                       "--shards", 2, tmp=tmp_path)
    assert summary["tables"][0]["snapshot_id"], summary
    t = wh.pyiceberg().load_table("db.w")
    assert {f.name: (f.field_id, str(f.field_type)) for f in t.schema().fields} == {
        "id": (1, "long"), "n": (2, "long"), "note": (3, "string")}
    assert sorted_rows(t.scan().to_arrow().to_pylist(), ["id", "n", "note"]) == [(1, 1, None), (2, 2, None),
                                                                                 (3, 2**40, "three")]
    assert t.metadata.snapshots[-1].schema_id == t.metadata.current_schema_id
