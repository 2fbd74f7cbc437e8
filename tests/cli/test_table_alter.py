"""`lakesync table alter` (issue 16): schema changes by the Iceberg spec's rules. pyiceberg reads the
new schema (field ids: new columns after last-column-id, renames keep the id, drops retire it) and
reads the rows written before each change right, and so does `lakesync scan` (the one data-file
reader projects old files by field id: new columns null, renamed columns by id, widened types
promoted)."""

from __future__ import annotations

import decimal
import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
import oracles as O  # noqa: E402

pytestmark = O.needs_lakesync

SCHEMA = """
fields:
  - {name: id, type: long, required: true}
  - {name: n, type: int}
  - {name: x, type: float}
  - {name: amount, type: "decimal(9, 2)"}
  - {name: note, type: string}
identifier-fields: [id]
"""


def pyiceberg_table(cli: O.Cli, name: str = "db.t"):
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog("lakesync", uri=f"sqlite:///{cli.catalog_db}", warehouse=f"file://{cli.warehouse}").load_table(name)


def make_table(cli: O.Cli, tmp_path: Path, format_version: int = 2) -> None:
    (tmp_path / "schema.yaml").write_text(SCHEMA)
    cli.ok("namespace", "create", "db")
    cli.ok("table", "create", "db.t", "--schema", tmp_path / "schema.yaml", "--format-version", format_version,
           "--partition", "bucket(id, 2)")
    f = tmp_path / "rows.parquet"
    pq.write_table(pa.table({
        "id": pa.array([1, 2, 3], pa.int64()),
        "n": pa.array([10, None, 2**31 - 1], pa.int32()),
        "x": pa.array([1.5, 2.25, None], pa.float32()),
        "amount": pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("9999999.99")], pa.decimal128(9, 2)),
        "note": ["a", "b", "c"],
    }), f)
    cli.ok("table", "append", "db.t", f)


def test_alter_changes_follow_the_spec_and_old_rows_read_right(tmp_path):
    cli = O.Cli(tmp_path)
    make_table(cli, tmp_path)
    before = cli.metadata("db.t")
    assert before["last-column-id"] == 5

    out = cli.ok("table", "alter", "db.t", "add-column", "city", "string", "--after", "id", "--doc", "where")
    assert "add column city (string)" in out
    cli.ok("table", "alter", "db.t", "rename-column", "n", "count")
    cli.ok("table", "alter", "db.t", "widen", "count", "long")
    cli.ok("table", "alter", "db.t", "widen", "x", "double")
    cli.ok("table", "alter", "db.t", "widen", "amount", "decimal(18, 2)")
    cli.ok("table", "alter", "db.t", "drop-column", "note")
    cli.ok("table", "alter", "db.t", "add-column", "note", "string")  # a new column: a new id

    # pyiceberg sees the schema the spec requires.
    t = pyiceberg_table(cli)
    s = t.schema()
    ids = {f.name: f.field_id for f in s.fields}
    assert [f.name for f in s.fields] == ["id", "city", "count", "x", "amount", "note"]
    assert ids == {"id": 1, "city": 6, "count": 2, "x": 3, "amount": 4, "note": 7}
    assert t.metadata.last_column_id == 7
    assert not s.find_field("city").required and s.find_field("city").doc == "where"
    assert str(s.find_field("count").field_type) == "long"
    assert str(s.find_field("x").field_type) == "double"
    assert str(s.find_field("amount").field_type) == "decimal(18, 2)"
    assert s.identifier_field_ids == [1]
    assert len(t.metadata.schemas) == 8 and t.metadata.current_schema_id == 7
    assert len(t.metadata.snapshots) == 1  # schema changes add no snapshot

    # The rows written before every change: by pyiceberg and by lakesync scan.
    expected = [
        {"id": 1, "city": None, "count": 10, "x": 1.5, "amount": decimal.Decimal("1.25"), "note": None},
        {"id": 2, "city": None, "count": None, "x": 2.25, "amount": None, "note": None},
        {"id": 3, "city": None, "count": 2**31 - 1, "x": None, "amount": decimal.Decimal("9999999.99"), "note": None},
    ]
    got = sorted(t.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert got == expected
    scanned = sorted(cli.scan_jsonl("db.t"), key=lambda r: r["id"])
    assert [r["id"] for r in scanned] == [1, 2, 3]
    for row, want in zip(scanned, expected):
        assert list(row) == list(want)
        assert row["count"] == want["count"] and row["city"] is None and row["note"] is None
        assert row["x"] == want["x"]
        assert (decimal.Decimal(row["amount"]) if row["amount"] is not None else None) == want["amount"]

    # New rows with the new schema; pyiceberg reads old and new together.
    f = tmp_path / "new.parquet"
    pq.write_table(pa.table({"id": pa.array([4], pa.int64()), "city": ["porto"], "count": pa.array([2**40], pa.int64()),
                             "x": [0.1], "amount": pa.array([decimal.Decimal("123456789012.50")], pa.decimal128(18, 2)),
                             "note": ["new"]}), f)
    cli.ok("table", "append", "db.t", f)
    got = {r["id"]: r for r in pyiceberg_table(cli).scan().to_arrow().to_pylist()}
    assert got[4] == {"id": 4, "city": "porto", "count": 2**40, "x": 0.1,
                      "amount": decimal.Decimal("123456789012.50"), "note": "new"}
    assert got[1]["count"] == 10
    # A filter on the renamed, widened column reads old files by id.
    assert [r["id"] for r in cli.scan_jsonl("db.t", "--filter", "count >= 2147483647")] in ([3, 4], [4, 3])


def test_alter_refuses_what_the_spec_forbids_and_changes_nothing(tmp_path):
    cli = O.Cli(tmp_path)
    make_table(cli, tmp_path)
    before = cli.metadata("db.t")
    refusals = [
        (("widen", "n", "string"), "int cannot be changed to string"),
        (("widen", "x", "int"), "float cannot be changed to int"),
        (("widen", "amount", "decimal(18, 3)"), "cannot be changed to decimal(18, 3)"),
        (("widen", "amount", "decimal(8, 2)"), "cannot be changed to decimal(8, 2)"),
        (("drop-column", "id"), "'id' is an identifier field"),
        (("add-column", "n", "long"), "already has a column named 'n'"),
        (("rename-column", "n", "x"), "already has a column named 'x'"),
        (("rename-column", "nope", "y"), "no column 'nope'"),
        (("add-column", "y", "notatype"), "notatype"),
    ]
    for args, needle in refusals:
        code, err = cli.fail("table", "alter", "db.t", *args)
        assert needle in err, (args, err)
        assert "db.t" in err or "TYPE" in err, err
    assert cli.metadata("db.t")["schemas"] == before["schemas"]
    assert cli.metadata("db.t")["last-column-id"] == 5


def test_alter_refuses_dropping_a_partition_source(tmp_path):
    cli = O.Cli(tmp_path)
    (tmp_path / "schema.yaml").write_text(SCHEMA)
    cli.ok("namespace", "create", "db")
    cli.ok("table", "create", "db.p", "--schema", tmp_path / "schema.yaml", "--partition", "truncate(note, 2)")
    _, err = cli.fail("table", "alter", "db.p", "drop-column", "note")
    assert "source of partition field" in err and "'note'" in err
    assert len(cli.metadata("db.p")["schemas"]) == 1


def test_alter_v3_widens_date_to_timestamp(tmp_path):
    cli = O.Cli(tmp_path)
    (tmp_path / "schema.yaml").write_text("fields:\n  - {name: id, type: long, required: true}\n  - {name: d, type: date}\n")
    cli.ok("namespace", "create", "db")
    cli.ok("table", "create", "db.d", "--schema", tmp_path / "schema.yaml", "--format-version", "3")
    f = tmp_path / "d.parquet"
    import datetime as dt
    pq.write_table(pa.table({"id": pa.array([1], pa.int64()), "d": pa.array([dt.date(2026, 3, 1)], pa.date32())}), f)
    cli.ok("table", "append", "db.d", f)
    cli.ok("table", "alter", "db.d", "widen", "d", "timestamp")
    [row] = cli.scan_jsonl("db.d")
    assert row["d"].startswith("2026-03-01T00:00:00"), row
    schema = json.loads(cli.ok("table", "describe", "db.d", "--json"))
    assert [f["type"] for f in schema["schemas"][-1]["fields"]] == ["long", "timestamp"]


def test_alter_adds_and_widens_fields_inside_a_struct_by_path(tmp_path):
    cli = O.Cli(tmp_path)
    (tmp_path / "schema.yaml").write_text("""
fields:
  - {name: id, type: long, required: true}
  - name: addr
    type: {type: struct, fields: [{name: city, type: string}, {name: zip, type: int}]}
identifier-fields: [id]
""")
    cli.ok("namespace", "create", "db")
    cli.ok("table", "create", "db.t", "--schema", tmp_path / "schema.yaml")
    f = tmp_path / "rows.parquet"
    addr = pa.struct([("city", pa.string()), ("zip", pa.int32())])
    pq.write_table(pa.table({"id": pa.array([1], pa.int64()), "addr": pa.array([{"city": "Oslo", "zip": 150}], addr)}), f)
    cli.ok("table", "append", "db.t", f)
    cli.ok("table", "alter", "db.t", "add-column", "addr.street", "string")
    cli.ok("table", "alter", "db.t", "widen", "addr.zip", "long")
    t = pyiceberg_table(cli)
    assert t.schema().find_field("addr.street").field_id == 5  # after last-column-id 4
    assert t.schema().find_field("addr.zip").field_id == 4
    assert str(t.schema().find_field("addr.zip").field_type) == "long"
    assert t.scan().to_arrow().to_pylist() == [{"id": 1, "addr": {"city": "Oslo", "zip": 150, "street": None}}]
    scanned = [json.loads(line) for line in cli.ok("scan", "--table", "db.t", "--format", "jsonl").splitlines()]
    assert scanned == [{"id": 1, "addr": {"city": "Oslo", "zip": 150, "street": None}}]
    # Fields go into structs only; the message says so.
    p = cli.run("table", "alter", "db.t", "add-column", "id.x", "int")
    assert p.returncode != 0 and "has no fields" in p.stderr, p.stderr
