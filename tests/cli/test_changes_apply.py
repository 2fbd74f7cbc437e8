"""`lakesync apply` reads what `lakesync changes` writes, with no flags about it (issue 13): the change
kind from `_change_type`, the order from `_commit_snapshot_sequence_number` or `_commit_version`, and
the other metadata columns never written into the table. The source is written by pyiceberg (Iceberg)
or deltalake (Delta); the copy must hold exactly the source's rows, read back with pyiceberg. Also:
JSON Lines with zones read as timestamptz (table create --schema-from + table append round trip)."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
import oracles as O  # noqa: E402

pytestmark = O.needs_lakesync
pa = pytest.importorskip("pyarrow")

REPO = Path(__file__).resolve().parents[2]
SCHEMA = pa.schema([pa.field("order_id", pa.int64(), nullable=False), pa.field("customer", pa.string()),
                    pa.field("amount", pa.float64()), pa.field("at", pa.timestamp("us", tz="UTC"))])


def batch(ids, tag):
    base = dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc)
    return pa.table({"order_id": ids, "customer": [f"{tag}-{i}" for i in ids], "amount": [i * 1.5 for i in ids],
                     "at": [base + dt.timedelta(minutes=i) for i in ids]}, schema=SCHEMA)


def iceberg_source(cli):
    from pyiceberg.schema import Schema
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestamptzType
    catalog = O.sql_catalog(cli)
    catalog.create_namespace("src")
    schema = Schema(NestedField(1, "order_id", LongType(), required=True), NestedField(2, "customer", StringType()),
                    NestedField(3, "amount", DoubleType()), NestedField(4, "at", TimestamptzType()),
                    identifier_field_ids=[1])
    t = catalog.create_table("src.orders", schema, properties={"format-version": "2"})
    t.append(batch(list(range(0, 30)), "a"))
    t.delete("order_id < 5")
    t.upsert(batch([10, 11, 40], "u"))
    t.append(batch(list(range(50, 55)), "b"))
    return catalog


def sorted_rows(table):
    return sorted(tuple(r.values()) for r in table.select(["order_id", "customer", "amount", "at"]).to_pylist())


@pytest.mark.parametrize("how", ["file", "pipe"])
def test_iceberg_changes_apply_round_trip(tmp_path, how):
    cli = O.Cli(tmp_path)
    catalog = iceberg_source(cli)
    if how == "file":
        cli.ok("changes", "--source", "iceberg", "--table", "src.orders", "--format", "jsonl",
               "--output", tmp_path / "changes.jsonl")
        summary = cli.ok("apply", "--changes", tmp_path / "changes.jsonl", "--table", "lake.copy",
                         "--equality-columns", "order_id")
    else:
        changes = subprocess.run([str(O.LAKESYNC), "changes", "--source", "iceberg", "--table", "src.orders",
                                  "--format", "jsonl"], capture_output=True, text=True, env=cli.env, cwd=tmp_path,
                                 check=True).stdout
        summary = cli.ok("apply", "--changes", "-", "--table", "lake.copy", "--equality-columns", "order_id",
                         input=changes)
    assert "merge-on-read:" in summary and "0 change rows" not in summary, summary
    copy = catalog.load_table("lake.copy")
    assert sorted_rows(copy.scan().to_arrow()) == sorted_rows(catalog.load_table("src.orders").scan().to_arrow())
    # No metadata column became a table column, and the zone of `at` survived creation.
    names = [f.name for f in copy.schema().fields]
    assert names == ["order_id", "customer", "amount", "at"], names
    assert str(copy.schema().find_field("at").field_type) == "timestamptz"


def test_delta_changes_apply_round_trip(tmp_path):
    cli = O.Cli(tmp_path)
    delta = tmp_path / "orders_delta"
    for step in ("create", "change", "change"):
        subprocess.run([sys.executable, REPO / "examples" / "demo_delta.py", step, delta], check=True)
    cli.ok("changes", "--source", "delta", "--table", delta, "--start-version", "0", "--format", "parquet",
           "--output", tmp_path / "changes.parquet")
    out = json.loads(cli.ok("apply", "--changes", tmp_path / "changes.parquet", "--table", "lake.orders",
                            "--equality-columns", "order_id", "--json"))
    assert out["mode"] == "merge-on-read" and out["changes"]["deletes"] > 0
    from deltalake import DeltaTable
    columns = ["order_id", "customer", "region", "amount"]
    expected = sorted(tuple(r[c] for c in columns) for r in DeltaTable(str(delta)).to_pyarrow_table().to_pylist())
    copy = O.sql_catalog(cli).load_table("lake.orders")
    assert sorted(tuple(r[c] for c in columns) for r in copy.scan().to_arrow().to_pylist()) == expected
    assert [f.name for f in copy.schema().fields] == columns


def test_append_mode_says_it_appended(tmp_path):
    cli = O.Cli(tmp_path)
    cols = [{"name": "id", "type": "long", "required": True}, {"name": "name", "type": "string"}]
    rows = O.write_jsonl(tmp_path / "rows.jsonl", [(i, f"n{i}") for i in range(7)], cols)
    out = cli.ok("apply", "--changes", rows, "--table", "db.plain")
    assert "append mode: 7 input rows appended" in out and "0 changes" not in out, out


def test_jsonl_timestamps_with_zones_round_trip_through_create_and_append(tmp_path):
    cli = O.Cli(tmp_path)
    lines = ['{"id":1,"at":"2026-03-01T10:00:00Z","day":"2026-03-01","local":"2026-03-01T10:00:00.5"}',
             '{"id":2,"at":"2026-03-01T12:30:00.123456Z","day":"2026-03-02","local":"2026-03-01T11:00:00"}']
    data = tmp_path / "x.jsonl"
    data.write_text("\n".join(lines) + "\n")
    cli.ok("namespace", "create", "db")
    cli.ok("table", "create", "db.x", "--schema-from", data)
    cli.ok("table", "append", "db.x", data)
    schema = O.sql_catalog(cli).load_table("db.x").schema()
    assert {f.name: str(f.field_type) for f in schema.fields} == {
        "id": "long", "at": "timestamptz", "day": "date", "local": "timestamp"}
    out = [json.loads(line) for line in cli.ok("scan", "db.x", "--format", "jsonl").splitlines()]
    assert sorted(out, key=lambda r: r["id"]) == [json.loads(line) for line in lines]
