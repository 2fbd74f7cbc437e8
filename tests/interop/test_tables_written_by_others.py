"""Tables other writers made, read by the real `lakesync` binary.

Writers (each in the test's own tmp dir, in the same SQLite catalog file lakesync's embedded catalog
uses, so `lakesync scan --table ns.t` finds their tables):

- pyiceberg 0.12 (v2): appends, an overwrite with a filter, a copy-on-write delete, a table
  partitioned by several transforms at once, schema evolution (add, rename, widen int -> long)
  followed by more appends. The oracle is pyiceberg's own scan, at every snapshot.
- DuckDB 1.5.5 through a loopback REST catalog facade over the same catalog (oracles.py):
  CREATE TABLE / INSERT / DELETE / UPDATE, which DuckDB writes merge-on-read, as v2 position
  deletes, and, on a v3 table that `lakesync table create --format-version 3` made, as deletion
  vectors. The oracle is DuckDB's own read of the table, at every snapshot.
- pandas: a file with Categorical columns (stored as Arrow dictionaries) registered with pyiceberg's
  add_files (oracle: pyiceberg's scan), and used as lakesync's own input and change file.

Filters, --select and --limit are held against the same oracles with the equivalent predicate.
"""

from __future__ import annotations

import collections
import datetime as dt
import decimal
import random
import uuid

import pytest

import oracles as O

pytestmark = O.needs_lakesync

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pyiceberg")


def columns_of(metadata: dict, schema_id: int | None = None) -> list[dict]:
    """A schema's top-level fields (Iceberg JSON: the form oracles.normalise takes)."""
    if schema_id is None:
        schema_id = metadata["current-schema-id"]
    [schema] = [s for s in metadata["schemas"] if s["schema-id"] == schema_id]
    return schema["fields"]


def lakesync_rows(cli: O.Cli, name: str, columns: list[dict], *extra) -> list[tuple]:
    return O.normalise_rows(cli.scan_jsonl(name, *extra), columns, "jsonl")


def assert_subset(part: list[tuple], whole: list[tuple], what: str) -> None:
    missing = collections.Counter(part) - collections.Counter(whole)
    assert not missing, f"{what}: rows not in the full result: {list(missing)[:3]}"


# ---------------------------------------------------------------------------------------------
# pyiceberg as the writer


def pyiceberg_batch(r: random.Random, ids: range, schema, evolved: bool = False):
    """A pyarrow table for `schema` (pyiceberg Schema) with random values."""
    cats = ["a", "b", "c", "日本"]
    n = len(ids)

    def maybe(make, p=0.1):
        return [None if r.random() < p else make() for _ in range(n)]

    data = {
        "id": list(ids),
        "name": maybe(lambda: "".join(r.choice("abé日 ") for _ in range(r.randint(0, 6)))),
        "qty": maybe(lambda: r.randint(-2**40, 2**40) if evolved else r.randint(-1000, 1000)),
        ("rating" if evolved else "score"): maybe(lambda: r.choice([r.random(), float("nan")]) if r.random() < 0.1
                                                  else r.random()),
        "amount": maybe(lambda: decimal.Decimal(r.randint(-10**9, 10**9)).scaleb(-2)),
        "d": maybe(lambda: dt.date(2023, 12, 15) + dt.timedelta(days=r.randint(0, 60))),
        "ts": maybe(lambda: dt.datetime(2024, 1, 1) + dt.timedelta(microseconds=r.randint(0, 10**13))),
        "tstz": maybe(lambda: dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
                      + dt.timedelta(microseconds=r.randint(-10**13, 10**13))),
        "cat": [r.choice(cats) for _ in range(n)],
        "u": maybe(lambda: uuid.UUID(int=r.getrandbits(128))),
        "tags": maybe(lambda: [r.choice(["x", "y", None]) for _ in range(r.randint(0, 3))]),
        "addr": maybe(lambda: {"city": r.choice(["Paris", "Köln", None]), "zip": r.randint(0, 99999)}),
        "attrs": maybe(lambda: [(f"k{j}", r.choice(["v", None])) for j in range(r.randint(0, 2))]),
    }
    if evolved:
        data["extra"] = maybe(lambda: r.choice(["p", "q"]))
    from pyiceberg.io.pyarrow import schema_to_pyarrow

    arrow_schema = schema_to_pyarrow(schema)
    arrays = []
    for field in arrow_schema:
        values = data[field.name]
        if field.name == "u":
            storage = pa.array([None if v is None else v.bytes for v in values], pa.binary(16))
            arrays.append(pa.ExtensionArray.from_storage(field.type, storage) if isinstance(field.type, pa.ExtensionType)
                          else storage)
        else:
            arrays.append(pa.array(values, type=field.type))
    return pa.Table.from_arrays(arrays, schema=arrow_schema)


def compare_with_pyiceberg(cli: O.Cli, table, name: str, snapshot_id: int | None = None) -> int:
    metadata = cli.metadata(name)
    schema_id = None
    extra = []
    if snapshot_id is not None:
        [snap] = [s for s in metadata["snapshots"] if s["snapshot-id"] == snapshot_id]
        schema_id = snap.get("schema-id")
        extra = ["--snapshot-id", snapshot_id]
    columns = columns_of(metadata, schema_id)
    want = O.arrow_rows(table.scan(snapshot_id=snapshot_id).to_arrow(), columns)
    got = lakesync_rows(cli, name, columns, *extra)
    # pyiceberg reads a null list<struct> as []: this table has no such column, so no view needed.
    O.assert_same_rows(got, want, f"lakesync vs pyiceberg, {name} at snapshot {snapshot_id or 'current'}")
    return len(want)


@pytest.mark.parametrize("partitioning", ["identity", "transforms"])
def test_pyiceberg_written_table(tmp_path, partitioning):
    from pyiceberg import expressions as E
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import BucketTransform, IdentityTransform, MonthTransform, TruncateTransform
    from pyiceberg.types import (DateType, DecimalType, DoubleType, IntegerType, ListType, LongType, MapType,
                                 NestedField, StringType, StructType, TimestampType, TimestamptzType, UUIDType)

    cli = O.Cli(tmp_path)
    catalog = O.sql_catalog(cli)
    catalog.create_namespace("shop")
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "name", StringType()),
        NestedField(3, "qty", IntegerType()),
        NestedField(4, "score", DoubleType()),
        NestedField(5, "amount", DecimalType(12, 2)),
        NestedField(6, "d", DateType()),
        NestedField(7, "ts", TimestampType()),
        NestedField(8, "tstz", TimestamptzType()),
        NestedField(9, "cat", StringType()),
        NestedField(10, "u", UUIDType()),
        NestedField(11, "tags", ListType(20, StringType(), element_required=False)),
        NestedField(12, "addr", StructType(NestedField(21, "city", StringType()), NestedField(22, "zip", IntegerType()))),
        NestedField(13, "attrs", MapType(23, StringType(), 24, StringType(), value_required=False)),
        identifier_field_ids=[1],
    )
    if partitioning == "transforms":
        # pyiceberg 0.12 computes every non-identity transform on write with the optional Rust
        # package pyiceberg-core (pinned in ../shared/specs/oracles.md, not in requirements/test.txt).
        pytest.importorskip("pyiceberg_core", reason="pyiceberg writes bucket/truncate/time partitions only "
                            "with pyiceberg-core installed (pip install pyiceberg-core==0.11.0)")
        spec = PartitionSpec(  # about 30 partitions
            PartitionField(1, 1000, BucketTransform(2), "id_bucket"),
            PartitionField(2, 1001, TruncateTransform(1), "name_trunc"),
            PartitionField(6, 1002, MonthTransform(), "d_month"),
        )
    else:
        spec = PartitionSpec(PartitionField(9, 1000, IdentityTransform(), "cat"))
    table = catalog.create_table("shop.orders", schema=schema, partition_spec=spec)
    name = "shop.orders"
    r = random.Random(3)

    table.append(pyiceberg_batch(r, range(0, 200), table.schema()))
    table.append(pyiceberg_batch(r, range(200, 400), table.schema()))
    assert compare_with_pyiceberg(cli, table, name) == 400

    # Overwrite with a filter: pyiceberg deletes the matching rows (rewriting files) and appends.
    table.overwrite(pyiceberg_batch(r, range(400, 480), table.schema()), overwrite_filter=E.EqualTo("cat", "b"))
    table = catalog.load_table(name)
    n = compare_with_pyiceberg(cli, table, name)
    # Copy-on-write delete.
    table.delete(E.LessThan("qty", 0))
    table = catalog.load_table(name)
    assert compare_with_pyiceberg(cli, table, name) < n
    assert table.current_snapshot().summary.operation.value in ("overwrite", "delete")

    # Schema evolution, then rows in the new shape.
    with table.update_schema() as update:
        update.add_column("extra", StringType())
        update.rename_column("score", "rating")
        update.update_column("qty", LongType())
    table = catalog.load_table(name)
    table.append(pyiceberg_batch(r, range(480, 700), table.schema(), evolved=True))
    table = catalog.load_table(name)
    total = compare_with_pyiceberg(cli, table, name)
    assert total > 250

    # Every snapshot, each in its own schema.
    snapshots = [s.snapshot_id for s in table.metadata.snapshots]
    assert len(snapshots) >= 5
    for snapshot_id in snapshots:
        compare_with_pyiceberg(cli, table, name, snapshot_id)

    # Filters and --select. Expected: pyiceberg's full scan filtered here in Python, and (where it is
    # right) pyiceberg's own filtered scan, which must agree with the Python filter.
    some_ids = sorted(random.Random(9).sample(range(700), 40))
    all_columns = columns_of(cli.metadata(name))
    full_rows = O.arrow_rows(table.scan().to_arrow(), all_columns)
    index = {c["name"]: k for k, c in enumerate(all_columns)}

    def v(row, column):
        return row[index[column]]

    def gt(column, bound):
        return lambda row: v(row, column) is not None and v(row, column) != O.NAN and v(row, column) > bound

    micros_2024 = (dt.datetime(2024, 1, 1) - O.EPOCH) // dt.timedelta(microseconds=1)
    cases = [
        ("cat = 'a' AND qty > 10", E.And(E.EqualTo("cat", "a"), E.GreaterThan("qty", 10)),
         lambda row: v(row, "cat") == "a" and gt("qty", 10)(row), None),
        # pyiceberg 0.12 drops NaN rows from its own IsNaN scans here: the files it writes carry no
        # nan_value_counts and a NaN-free lower/upper bound, and its metrics evaluator prunes them.
        ("rating IS NAN OR rating > 0.9", None, lambda row: v(row, "rating") == O.NAN or gt("rating", 0.9)(row),
         "id,rating"),
        ("name LIKE 'a%'", E.StartsWith("name", "a"), lambda row: (v(row, "name") or "").startswith("a"), "name,id"),
        ("d BETWEEN '2024-01-01' AND '2024-02-29'",
         E.And(E.GreaterThanOrEqual("d", "2024-01-01"), E.LessThanOrEqual("d", "2024-02-29")),
         lambda row: v(row, "d") is not None and dt.date(2024, 1, 1) <= v(row, "d") <= dt.date(2024, 2, 29), None),
        (f"id IN ({', '.join(map(str, some_ids))})", E.In("id", some_ids), lambda row: v(row, "id") in some_ids,
         "id,qty,extra"),
        ("extra IS NULL AND NOT (cat IN ('a', 'c'))", E.And(E.IsNull("extra"), E.Not(E.In("cat", ["a", "c"]))),
         lambda row: v(row, "extra") is None and v(row, "cat") not in ("a", "c"), None),
        ("addr.city = 'Köln'", E.EqualTo("addr.city", "Köln"),
         lambda row: v(row, "addr") is not None and v(row, "addr")[0] == "Köln", "id,addr"),
        ("qty >= 2147483648", E.GreaterThanOrEqual("qty", 2**31), gt("qty", 2**31 - 1), "id,qty"),
        ("tstz < '2024-01-01T00:00:00Z'", E.LessThan("tstz", "2024-01-01T00:00:00+00:00"),
         lambda row: v(row, "tstz") is not None and v(row, "tstz") < micros_2024, "id,tstz"),
    ]
    for text, expression, predicate, select in cases:
        names = select.split(",") if select else [c["name"] for c in all_columns]
        columns = [all_columns[index[n]] for n in names]
        want = [tuple(row[index[n]] for n in names) for row in full_rows if predicate(row)]
        assert want, f"filter {text!r} must match some rows"
        if expression is not None:
            theirs = O.arrow_rows(table.scan(row_filter=expression, selected_fields=tuple(names)).to_arrow(), columns)
            O.assert_same_rows(theirs, want, f"pyiceberg's own scan with {expression} (checks the Python filter)")
        args = ["--filter", text] + (["--select", select] if select else [])
        got = lakesync_rows(cli, name, columns, *args)
        O.assert_same_rows(got, want, f"lakesync scan --filter {text!r} --select {select}")

    # --limit: that many rows, all from the table.
    full = lakesync_rows(cli, name, all_columns)
    for limit in (0, 1, 17, total + 5):
        part = lakesync_rows(cli, name, all_columns, "--limit", limit)
        assert len(part) == min(limit, total)
        assert_subset(part, full, f"--limit {limit}")
    part = lakesync_rows(cli, name, all_columns[:1], "--filter", "cat = 'c'", "--select", "id", "--limit", 5)
    want = O.arrow_rows(table.scan(row_filter=E.EqualTo("cat", "c"), selected_fields=("id",)).to_arrow(),
                        all_columns[:1])
    assert len(part) == 5
    assert_subset(part, want, "--filter with --limit")


# ---------------------------------------------------------------------------------------------
# DuckDB as the writer, through the REST facade over the same catalog


DUCK_COLUMNS_SQL = ("id BIGINT, s VARCHAR, amount DECIMAL(10, 2), ts TIMESTAMP, tstz TIMESTAMPTZ, d DATE, u UUID, "
                    "b BLOB, f FLOAT, x DOUBLE, ok BOOLEAN, tm TIME, tags VARCHAR[], st STRUCT(a INTEGER, b VARCHAR)")
LAKESYNC_V3_SCHEMA = [
    {"name": "id", "type": "long"}, {"name": "s", "type": "string"}, {"name": "amount", "type": "decimal(10, 2)"},
    {"name": "ts", "type": "timestamp"}, {"name": "tstz", "type": "timestamptz"}, {"name": "d", "type": "date"},
    {"name": "u", "type": "uuid"}, {"name": "b", "type": "binary"}, {"name": "f", "type": "float"},
    {"name": "x", "type": "double"}, {"name": "ok", "type": "boolean"}, {"name": "tm", "type": "time"},
    {"name": "tags", "type": {"type": "list", "element": "string", "element-required": False}},
    {"name": "st", "type": {"type": "struct", "fields": [{"name": "a", "type": "int", "required": False},
                                                          {"name": "b", "type": "string", "required": False}]}},
]
for _c in LAKESYNC_V3_SCHEMA:
    _c["required"] = False


def duck_batch(r: random.Random, ids: range):
    n = len(ids)

    def maybe(make, p=0.1):
        return [None if r.random() < p else make() for _ in range(n)]

    return pa.table({
        "id": pa.array(list(ids), pa.int64()),
        "s": maybe(lambda: "".join(r.choice("abcé日🙂") for _ in range(r.randint(0, 6)))),
        "amount": pa.array(maybe(lambda: decimal.Decimal(r.randint(-10**9, 10**9)).scaleb(-2)), pa.decimal128(10, 2)),
        "ts": pa.array(maybe(lambda: dt.datetime(1990, 1, 1) + dt.timedelta(microseconds=r.randint(0, 10**15))),
                       pa.timestamp("us")),
        "tstz": pa.array(maybe(lambda: dt.datetime(1960, 1, 1, tzinfo=dt.timezone.utc)
                               + dt.timedelta(microseconds=r.randint(0, 3 * 10**15))), pa.timestamp("us", "UTC")),
        "d": pa.array(maybe(lambda: dt.date(1950, 1, 1) + dt.timedelta(days=r.randint(0, 40000))), pa.date32()),
        "u": pa.array(maybe(lambda: str(uuid.UUID(int=r.getrandbits(128)))), pa.string()),
        "b": pa.array(maybe(lambda: r.randbytes(r.randint(0, 10))), pa.binary()),
        "f": pa.array(maybe(lambda: r.uniform(-1e5, 1e5)), pa.float32()),
        "x": pa.array(maybe(lambda: r.choice([float("nan"), float("inf"), r.uniform(-1, 1)]) if r.random() < 0.1
                            else r.uniform(-1e9, 1e9)), pa.float64()),
        "ok": pa.array(maybe(lambda: r.random() < 0.5), pa.bool_()),
        "tm": pa.array(maybe(lambda: dt.time(r.randint(0, 23), r.randint(0, 59), r.randint(0, 59),
                                             r.randint(0, 999999))), pa.time64("us")),
        "tags": pa.array(maybe(lambda: [r.choice(["x", "y", None]) for _ in range(r.randint(0, 3))]),
                         pa.list_(pa.string())),
        "st": pa.array(maybe(lambda: {"a": r.randint(-5, 5), "b": r.choice(["p", None])}),
                       pa.struct([("a", pa.int32()), ("b", pa.string())])),
    })


def duck_select(columns: list[dict]) -> str:
    return O.duckdb_select_list(columns)


@pytest.mark.parametrize("version", [2, 3])
def test_duckdb_written_table(tmp_path, version):
    pytest.importorskip("flask")
    cli = O.Cli(tmp_path)
    name = "ns.t"
    catalog = O.sql_catalog(cli)
    if version == 3:
        # DuckDB cannot create v3 tables through REST; lakesync creates it and DuckDB writes into it.
        cli.ok("namespace", "create", "ns")
        schema = O.schema_file(tmp_path / "schema.yaml", LAKESYNC_V3_SCHEMA)
        cli.ok("table", "create", name, "--schema", schema, "--format-version", 3, "--partition", "bucket(id, 3)")
    url, stop = O.rest_catalog_over(catalog)
    r = random.Random(17)
    snapshots_seen = []
    try:
        con = O.duckdb_connection(httpfs=True)
        O.duckdb_attach_rest(con, url)
        if version == 2:
            con.execute("CREATE SCHEMA ice.ns")
            con.execute(f"CREATE TABLE ice.{name} ({DUCK_COLUMNS_SQL})")
        column_list = ", ".join(c["name"] for c in LAKESYNC_V3_SCHEMA)
        select = column_list.replace("u,", "u::UUID,")
        for k, ids in enumerate((range(0, 400), range(400, 800))):
            con.register(f"batch{k}", duck_batch(r, ids))
            con.execute(f"INSERT INTO ice.{name} ({column_list}) SELECT {select} FROM batch{k}")
        con.execute(f"DELETE FROM ice.{name} WHERE id % 7 = 0 OR x > 5e8")
        con.execute(f"UPDATE ice.{name} SET s = 'updated', amount = amount + 1 WHERE id BETWEEN 100 AND 160")
        con.execute(f"DELETE FROM ice.{name} WHERE id % 5 = 1")  # touches files with deletes already
    finally:
        stop()

    metadata = cli.metadata(name)
    assert metadata["format-version"] == version
    columns = columns_of(metadata)
    table_metadata = catalog.load_table(name).metadata_location

    # The delete files are DuckDB's own merge-on-read output: position delete files for v2,
    # deletion vectors in Puffin files for v3.
    formats = {e["data_file"]["file_format"].upper() for e in O.manifest_entries(metadata)
               if e["data_file"]["content"] == 1}
    assert formats == ({"PUFFIN"} if version == 3 else {"PARQUET"}), formats

    con = O.duckdb_connection()
    want = O.duckdb_rows(con, table_metadata, columns)
    assert 400 < len(want) < 800
    O.assert_same_rows(lakesync_rows(cli, name, columns), want, "lakesync vs DuckDB")

    # Every snapshot.
    for snap in metadata["snapshots"]:
        sid = snap["snapshot-id"]
        sql = (f"SELECT {duck_select(columns)} FROM iceberg_scan('{table_metadata}', snapshot_from_id => {sid})")
        want_then = O.normalise_rows(con.execute(sql).fetchall(), columns, "duckdb")
        got = lakesync_rows(cli, name, columns, "--snapshot-id", sid)
        O.assert_same_rows(got, want_then, f"lakesync vs DuckDB at snapshot {sid}")
        snapshots_seen.append(sid)
    assert len(snapshots_seen) >= 5

    # Filters, --select and --limit against DuckDB's WHERE.
    cases = [
        ("s = 'updated'", "s = 'updated'", None),
        ("amount > 0 AND ok = true", "amount > 0 AND ok = true", "id,amount,ok"),
        ("x IS NAN OR f < -5000", "isnan(x) OR f < -5000", None),
        ("ts >= '2000-01-01T00:00:00' AND d < DATE '1980-01-01'", "ts >= TIMESTAMP '2000-01-01' AND d < DATE '1980-01-01'",
         "id,ts,d"),
        ("tstz < '1970-01-01T00:00:00Z'", "tstz < '1970-01-01 00:00:00+00'::TIMESTAMPTZ", "id,tstz"),
        ("st.a = 3", "st.a = 3", "id,st"),
        ("s LIKE 'a%' OR s IS NULL", "starts_with(s, 'a') OR s IS NULL", "s,id"),
    ]
    by_name = {c["name"]: c for c in columns}
    for text, where, select in cases:
        picked = [by_name[n] for n in select.split(",")] if select else columns
        rows = con.execute(f"SELECT {duck_select(picked)} FROM iceberg_scan('{table_metadata}') WHERE {where}").fetchall()
        want_filtered = O.normalise_rows(rows, picked, "duckdb")
        assert want_filtered, f"{where} must match some rows"
        args = ["--filter", text] + (["--select", select] if select else [])
        O.assert_same_rows(lakesync_rows(cli, name, picked, *args), want_filtered, f"--filter {text!r}")
    for limit in (1, 50):
        part = lakesync_rows(cli, name, columns, "--limit", limit)
        assert len(part) == limit
        assert_subset(part, want, f"--limit {limit}")


# ---------------------------------------------------------------------------------------------
# pandas categoricals: files whose stored Arrow schema says dictionary


def test_pandas_categorical_files(tmp_path):
    """pandas writes a Categorical as an Arrow dictionary (and stores that type in the file's schema,
    which Arrow restores on read). Iceberg has no dictionary type: the column is a string. Registered
    with pyiceberg's add_files, read back by lakesync against pyiceberg's own scan; used as lakesync's
    input, the schema it derives, the rows it appends and a change file whose values and change kinds
    are categoricals, against rows computed here from the frames."""
    import pandas as pd

    cli = O.Cli(tmp_path)
    catalog = O.sql_catalog(cli)
    catalog.create_namespace("cats")
    regions = ["eu-west", "us-east", "ap-south", None]
    frame = pd.DataFrame({
        "id": list(range(4000)),
        "region": pd.Categorical([regions[i % 4] for i in range(4000)]),
        "tier": pd.Categorical([["gold", "silver"][i % 2] for i in range(4000)]),
    })
    data = tmp_path / "categorical.parquet"
    frame.to_parquet(data, index=False, row_group_size=1500)

    # Hive-style registration of the file as it is.
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType
    table = catalog.create_table("cats.added", Schema(NestedField(1, "id", LongType()),
                                                      NestedField(2, "region", StringType()),
                                                      NestedField(3, "tier", StringType())))
    table.add_files([str(data)])
    assert compare_with_pyiceberg(cli, table, "cats.added") == 4000

    # lakesync's own input: the schema from the file (strings), an append, then changes.
    cli.ok("table", "create", "cats.made", "--schema-from", data)
    types = {c["name"]: c["type"] for c in columns_of(cli.metadata("cats.made"))}
    assert types == {"id": "long", "region": "string", "tier": "string"}, types
    cli.ok("table", "append", "cats.made", data)
    changes = pd.DataFrame({
        "id": [1, 2, 5000],
        "region": pd.Categorical(["sa-east", None, "eu-west"]),
        "tier": pd.Categorical(["gold", "gold", "bronze"]),
        "op": pd.Categorical(["U", "D", "I"]),
    })
    change_file = tmp_path / "changes.parquet"
    changes.to_parquet(change_file, index=False)
    cli.ok("apply", "--table", "cats.made", "--changes", change_file, "--change-type-column", "op",
           "--change-type-map", "U=UPDATE_AFTER,D=DELETE,I=INSERT", "--upsert", "--equality-columns", "id")
    expected = {int(i): (r if isinstance(r, str) else None, t) for i, r, t in
                zip(frame["id"], frame["region"].astype(object), frame["tier"].astype(str))}
    expected[1] = ("sa-east", "gold")
    del expected[2]
    expected[5000] = ("eu-west", "bronze")
    got = {row["id"]: (row["region"], row["tier"]) for row in cli.scan_jsonl("cats.made")}
    assert got == expected
