"""Schema evolution in jobs, the rest of issue 16 (docs/jobs.md, "Schema changes"): nested renames are
followed by field id (a Delta column-mapping rename of a struct field, written as Spark's ALTER TABLE
RENAME COLUMN st.a TO b writes it; pyiceberg's rename_column("st.a", "b")), and source column drops
follow the documented rule: a dropped optional column stays in the target, rows written after the drop
carry null there and history keeps its values; a dropped required column stops the job with what
changed and how to go on (`lakesync table alter ... drop-column`), and the rerun after that resumes.
deltalake (its DataFusion reader, which reads column-mapping tables by physical name) and pyiceberg are
the oracles."""
from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa

from test_schema_evolution import by_row, delta_create, delta_job, delta_rows, iceberg_rows, iceberg_table, write_job

sys.path.append(str(Path(__file__).resolve().parents[1] / "delta"))
from delta_tables import drop_column, rename_column  # noqa: E402

COLUMN_MAPPING = {"delta.enableChangeDataFeed": "true", "delta.columnMapping.mode": "name",
                  "delta.minReaderVersion": "2", "delta.minWriterVersion": "5"}


def delta_query_rows(path):
    """deltalake's DataFusion read (by physical name under column mapping; its to_pyarrow_table reads
    such tables as NULLs, tests/delta/delta_oracles.py)."""
    from deltalake import DeltaTable, QueryBuilder
    got = QueryBuilder().register("t", DeltaTable(str(path))).execute("SELECT * FROM t").read_all()
    return sorted(pa.table(got).to_pylist(), key=by_row)


def without(rows, *columns):
    return sorted(({k: v for k, v in r.items() if k not in columns} for r in rows), key=by_row)


def test_delta_column_mapping_nested_rename_is_followed_by_field_id(env):
    from deltalake import write_deltalake
    src = env.root / "cm"
    st = pa.struct([("a", pa.int32()), ("c", pa.string())])
    write_deltalake(str(src), pa.table({"id": pa.array([1, 2], pa.int64()),
                                        "st": pa.array([{"a": 1, "c": "x"}, {"a": 2, "c": "y"}], st)}),
                    configuration=COLUMN_MAPPING)
    job = delta_job(env, src)
    p, runs = env.run_job(job, "--once")
    assert runs[0]["status"] == "committed", p.stderr
    before = iceberg_table(env).schema()
    a_id = before.find_field("st.a").field_id

    rename_column(src, "st.a", "b")  # v1: metadata only, the physical name stays
    st2 = pa.struct([("b", pa.int32()), ("c", pa.string())])
    write_deltalake(str(src), pa.table({"id": pa.array([3], pa.int64()), "st": pa.array([{"b": 3, "c": "z"}], st2)}),
                    mode="append")
    p, runs = env.run_job(job, "--once")
    assert [r["status"] for r in runs] == ["committed"], p.stderr
    t = iceberg_table(env)
    after = t.schema()
    assert [f.name for f in after.find_field("st").field_type.fields] == ["b", "c"]
    assert after.find_field("st.b").field_id == a_id  # renamed, not added: old rows read it by id
    assert t.metadata.last_column_id == before.highest_field_id
    assert iceberg_rows(env) == delta_query_rows(src)
    assert [r["st"]["b"] for r in sorted(iceberg_rows(env), key=lambda r: r["id"])] == [1, 2, 3]


def test_iceberg_source_nested_rename_is_followed_by_field_id(env):
    from pyiceberg.schema import Schema
    from pyiceberg.types import IntegerType, LongType, NestedField, StringType, StructType
    catalog = env.catalog()
    catalog.create_namespace_if_not_exists("src")
    schema = Schema(NestedField(1, "id", LongType(), required=True),
                    NestedField(2, "st", StructType(NestedField(3, "a", IntegerType()), NestedField(4, "c", StringType()))),
                    identifier_field_ids=[1])
    src = catalog.create_table("src.n", schema, properties={"format-version": "2"})
    src.append(pa.Table.from_pylist([{"id": 1, "st": {"a": 1, "c": "x"}}, {"id": 2, "st": {"a": 2, "c": "y"}}],
                                    schema=src.schema().as_arrow()))
    job = write_job(env, {"type": "iceberg_cdc", "table": "src.n", "starting_strategy": "earliest"})
    p, runs = env.run_job(job, "--once")
    assert runs[-1]["status"] == "committed", p.stderr
    a_id = iceberg_table(env).schema().find_field("st.a").field_id

    with src.update_schema() as u:
        u.rename_column("st.a", "b")
    src = catalog.load_table("src.n")
    src.append(pa.Table.from_pylist([{"id": 3, "st": {"b": 3, "c": "z"}}], schema=src.schema().as_arrow()))
    p, runs = env.run_job(job, "--once")
    assert runs[-1]["status"] == "committed", p.stderr
    after = iceberg_table(env).schema()
    assert [f.name for f in after.find_field("st").field_type.fields] == ["b", "c"]
    assert after.find_field("st.b").field_id == a_id
    want = sorted(catalog.load_table("src.n").scan().to_arrow().to_pylist(), key=by_row)
    assert iceberg_rows(env) == want


def test_delta_dropped_optional_column_stays_and_reads_null_after(env):
    """Without column mapping a drop is an overwrite with the narrower schema: every row is written
    again after the drop, so every current row has null there; the snapshot before keeps the values."""
    from deltalake import DeltaTable, write_deltalake
    src = env.root / "d"
    delta_create(src)  # id, qty int, price float
    job = delta_job(env, src)
    env.run_job(job, "--once")
    narrow = pa.schema([("id", pa.int64()), ("qty", pa.int32())])
    write_deltalake(str(src), DeltaTable(str(src)).to_pyarrow_table().select(["id", "qty"]).cast(narrow),
                    mode="overwrite", schema_mode="overwrite")
    write_deltalake(str(src), pa.table({"id": pa.array([4], pa.int64()), "qty": pa.array([40], pa.int32())}),
                    mode="append")
    p, runs = env.run_job(job, "--once")
    assert [r["status"] for r in runs] == ["committed"], p.stderr
    t = iceberg_table(env)
    assert [(f.name, f.field_id) for f in t.schema().fields] == [("id", 1), ("qty", 2), ("price", 3)]
    rows = iceberg_rows(env)
    assert without(rows, "price") == delta_rows(src)
    assert [r["price"] for r in rows] == [None] * 4
    first = t.metadata.snapshots[0]
    assert sorted(r["price"] for r in t.scan(snapshot_id=first.snapshot_id).to_arrow().to_pylist()) == [1.5, 2.5, 3.5]


def test_delta_column_mapping_drops_optional_kept_required_stops_with_how_to_go_on(env):
    """Under column mapping a drop is a metadata-only commit (Spark's ALTER TABLE DROP COLUMN): rows
    are not written again, so the target's old rows keep their values and the new ones read null. A
    dropped required (non-nullable) column stops the job; `lakesync table alter db.t drop-column` is
    the way on, and the rerun resumes exactly."""
    from deltalake import write_deltalake
    src = env.root / "cm"
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("qty", pa.int32(), nullable=False),
                        pa.field("price", pa.float32())])
    write_deltalake(str(src), pa.table({"id": [1, 2], "qty": [10, 20], "price": [1.5, 2.5]}, schema=schema),
                    configuration=COLUMN_MAPPING)
    job = delta_job(env, src)
    env.run_job(job, "--once")
    assert iceberg_table(env).schema().find_field("qty").required

    drop_column(src, "price")  # v1
    write_deltalake(str(src), pa.table({"id": [3], "qty": [30]}, schema=pa.schema([schema.field("id"), schema.field("qty")])),
                    mode="append")  # v2
    p, runs = env.run_job(job, "--once")
    assert [r["status"] for r in runs] == ["committed"], p.stderr
    rows = iceberg_rows(env)
    assert {r["id"]: r["price"] for r in rows} == {1: 1.5, 2: 2.5, 3: None}
    assert without(rows, "price") == delta_query_rows(src)

    drop_column(src, "qty")  # v3: a required column goes
    write_deltalake(str(src), pa.table({"id": pa.array([4], pa.int64())}), mode="append")  # v4
    before = iceberg_table(env).metadata.snapshots
    p, _ = env.run_job(job, "--once", check=False)
    assert p.returncode != 0
    assert "required column 'qty' is no longer in the source" in p.stderr, p.stderr
    assert "lakesync table alter db.t drop-column qty" in p.stderr, p.stderr
    assert iceberg_table(env).metadata.snapshots == before

    env.lakesync("table", "alter", "db.t", "drop-column", "qty")
    p, runs = env.run_job(job, "--once")
    assert [(r["status"], r["range"]) for r in runs] == [("committed", {"from": 3, "through": 4})], p.stderr
    assert [f.name for f in iceberg_table(env).schema().fields] == ["id", "price"]
    assert without(iceberg_rows(env), "price") == delta_query_rows(src)


def test_iceberg_dropped_optional_column_stays_and_reads_null_after(env):
    from pyiceberg.schema import Schema
    from pyiceberg.types import FloatType, IntegerType, LongType, NestedField
    catalog = env.catalog()
    catalog.create_namespace_if_not_exists("src")
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "n", IntegerType()),
                    NestedField(3, "x", FloatType()), identifier_field_ids=[1])
    src = catalog.create_table("src.d", schema, properties={"format-version": "2"})
    src.append(pa.Table.from_pylist([{"id": 1, "n": 1, "x": 0.5}, {"id": 2, "n": 2, "x": 1.5}],
                                    schema=src.schema().as_arrow()))
    job = write_job(env, {"type": "iceberg_cdc", "table": "src.d", "starting_strategy": "earliest"})
    env.run_job(job, "--once")
    with src.update_schema() as u:
        u.delete_column("x")
    src = catalog.load_table("src.d")
    src.append(pa.Table.from_pylist([{"id": 3, "n": 3}], schema=src.schema().as_arrow()))
    p, runs = env.run_job(job, "--once")
    assert runs[-1]["status"] == "committed", p.stderr
    assert [f.name for f in iceberg_table(env).schema().fields] == ["id", "n", "x"]
    rows = iceberg_rows(env)
    assert {r["id"]: r["x"] for r in rows} == {1: 0.5, 2: 1.5, 3: None}
    want = sorted(catalog.load_table("src.d").scan().to_arrow().to_pylist(), key=by_row)
    assert without(rows, "x") == want
