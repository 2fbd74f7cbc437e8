"""lakesync's Parquet data files, held against pyarrow and pyiceberg.

lakesync's writer and reader (src/lakesync/formats/parquet) are driven through the `parquet_probe`
program (tests/tools/parquet_probe.cc), found in LAKESYNC_BUILD_DIR. The oracles are:

- pyarrow.parquet, for the Parquet schema lakesync writes (field ids on every field, the spec's
  list/map layout) and for the values in the file;
- pyiceberg 0.12's own metrics code (`data_file_statistics_from_parquet_metadata` with
  `compute_statistics_plan` and `parquet_path_to_id_mapping`), run on the footer of the file
  lakesync wrote, for record/value/null counts, column sizes, split offsets and bounds (decoded with
  pyiceberg.conversions.from_bytes on both sides);
- plain Python over the generated rows for what pyiceberg does not compute: NaN counts, and bounds of
  fields inside structs (pyiceberg keeps counts only there, Java and lakesync keep bounds);
- for the reader: files written by pyarrow, with and without field ids, read back through lakesync
  and compared with the rows pyarrow wrote.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import os
import random
import re
import subprocess
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.conversions import from_bytes
from pyiceberg.io.pyarrow import (
    compute_statistics_plan,
    data_file_statistics_from_parquet_metadata,
    parquet_path_to_id_mapping,
    schema_to_pyarrow,
)
from pyiceberg.schema import Schema
from pyiceberg.table.name_mapping import create_mapping_from_schema
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

BUILD_DIR = Path(os.environ.get("LAKESYNC_BUILD_DIR", "/work/main/build"))
PROBE = BUILD_DIR / "parquet_probe"

pytestmark = pytest.mark.skipif(
    not PROBE.exists(),
    reason=f"{PROBE} is not built (build the parquet_probe target; set LAKESYNC_BUILD_DIR to the build dir)",
)

SCHEMA = Schema(
    NestedField(1, "b", BooleanType()),
    NestedField(2, "i", IntegerType(), required=True),
    NestedField(3, "l", LongType()),
    NestedField(4, "f", FloatType()),
    NestedField(5, "d", DoubleType()),
    NestedField(6, "dec9", DecimalType(9, 2)),
    NestedField(7, "dec18", DecimalType(18, 6)),
    NestedField(8, "dec38", DecimalType(38, 10)),
    NestedField(9, "date", DateType()),
    NestedField(10, "time", TimeType()),
    NestedField(11, "ts", TimestampType()),
    NestedField(12, "tstz", TimestamptzType()),
    NestedField(13, "tsns", TimestampNanoType()),
    NestedField(14, "s", StringType()),
    NestedField(15, "u", UUIDType()),
    NestedField(16, "fx", FixedType(5)),
    NestedField(17, "bin", BinaryType()),
    NestedField(18, "st", StructType(NestedField(19, "a", IntegerType()), NestedField(20, "name", StringType()))),
    NestedField(21, "lst", ListType(22, LongType(), element_required=False)),
    NestedField(23, "m", MapType(24, StringType(), 25, DoubleType(), value_required=False)),
)
TOP_PRIMITIVES = list(range(1, 18))
STRUCT_LEAVES = [19, 20]
ALL_LEAVES = TOP_PRIMITIVES + STRUCT_LEAVES + [22, 24, 25]
EPOCH = dt.datetime(1970, 1, 1)


def schema_json(schema: Schema) -> str:
    return schema.model_dump_json()


def probe(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([str(PROBE), *args], capture_output=True, text=True, timeout=300)
    if check and result.returncode != 0:
        raise AssertionError(f"parquet_probe {args[0]} failed: {result.stderr}")
    return result


def random_text(rng: random.Random, max_len: int) -> str:
    pieces = ["a", "b", "z", "A", "0", " ", "é", "ß", "中", "😀", "~"]
    return "".join(rng.choice(pieces) for _ in range(rng.randint(0, max_len)))


def generate_rows(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)

    def maybe(value_fn, pct_null=10):
        return None if rng.randrange(100) < pct_null else value_fn()

    def float_value():
        r = rng.randrange(100)
        if r < 5:
            return math.nan
        if r < 7:
            return rng.choice([0.0, -0.0, math.inf, -math.inf])
        return rng.uniform(-1e6, 1e6)

    rows = []
    for k in range(n):
        rows.append(
            {
                "b": maybe(lambda: rng.random() < 0.5),
                "i": rng.randint(-(2**31), 2**31 - 1),
                "l": maybe(lambda: rng.randint(-(2**63), 2**63 - 1)),
                "f": maybe(lambda: float(pa.scalar(float_value(), pa.float32()).as_py())),
                "d": maybe(float_value),
                "dec9": maybe(lambda: decimal.Decimal(rng.randint(-(10**9) + 1, 10**9 - 1)).scaleb(-2)),
                "dec18": maybe(lambda: decimal.Decimal(rng.randint(-(10**18) + 1, 10**18 - 1)).scaleb(-6)),
                "dec38": maybe(lambda: decimal.Decimal(rng.randint(-(10**38) + 1, 10**38 - 1)).scaleb(-10)),
                "date": maybe(lambda: dt.date(1970, 1, 1) + dt.timedelta(days=rng.randint(-40000, 40000))),
                "time": maybe(lambda: (dt.datetime.min + dt.timedelta(microseconds=rng.randrange(86400 * 10**6))).time()),
                "ts": maybe(lambda: EPOCH + dt.timedelta(microseconds=rng.randint(-(2 * 10**15), 2 * 10**15))),
                "tstz": maybe(
                    lambda: (EPOCH + dt.timedelta(microseconds=rng.randint(-(2 * 10**15), 2 * 10**15))).replace(
                        tzinfo=dt.timezone.utc
                    )
                ),
                "tsns": maybe(lambda: rng.randint(-(2 * 10**18), 2 * 10**18)),
                # Long strings and binaries exercise truncate(16) on both sides.
                "s": maybe(lambda: random_text(rng, 30)),
                "u": maybe(lambda: uuid.UUID(int=rng.getrandbits(128)).bytes),
                "fx": maybe(lambda: rng.randbytes(5)),
                "bin": maybe(lambda: rng.randbytes(rng.randint(0, 24)) if k % 97 else b"\xff" * 20),
                "st": maybe(lambda: {"a": maybe(lambda: rng.randint(-500, 500), 20), "name": maybe(lambda: random_text(rng, 20), 20)}),
                "lst": maybe(lambda: [maybe(lambda: rng.randint(-100, 100), 15) for _ in range(rng.randint(0, 3))]),
                "m": maybe(lambda: [(f"k{j}", maybe(float_value, 15)) for j in range(rng.randint(0, 2))]),
            }
        )
    return rows


def to_table(rows: list[dict], schema: Schema = SCHEMA) -> pa.Table:
    arrow_schema = schema_to_pyarrow(schema)
    columns = {}
    for field in arrow_schema:
        values = [r[field.name] for r in rows]
        if field.name == "u":
            columns[field.name] = pa.ExtensionArray.from_storage(field.type, pa.array(values, pa.binary(16)))
        else:
            columns[field.name] = pa.array(values, field.type)
    return pa.Table.from_pydict(columns, schema=arrow_schema)


def run_write(tmp_path: Path, rows: list[dict], props: dict[str, str] | None = None, row_group_bytes: int | None = None):
    src = tmp_path / "input.parquet"
    pq.write_table(to_table(rows), src)
    out = tmp_path / "lakesync.parquet"
    (tmp_path / "schema.json").write_text(schema_json(SCHEMA))
    args = ["write", "--schema", str(tmp_path / "schema.json"), "--input", str(src), "--output", str(out)]
    all_props = dict(props or {})
    if row_group_bytes:
        all_props["write.parquet.row-group-size-bytes"] = str(row_group_bytes)
    for k, v in all_props.items():
        args += ["--prop", f"{k}={v}"]
    ours = json.loads(probe(*args).stdout)
    return out, ours


def pyiceberg_stats(path: Path, props: dict[str, str]):
    return data_file_statistics_from_parquet_metadata(
        pq.read_metadata(path), compute_statistics_plan(SCHEMA, props), parquet_path_to_id_mapping(SCHEMA)
    )


def decode(field_id: int, raw: bytes):
    return from_bytes(SCHEMA.find_field(field_id).field_type, raw)


def leaf_values(rows: list[dict], field_id: int) -> list:
    """The non-null values of a struct leaf or top-level column."""
    if field_id == 19:
        return [r["st"]["a"] for r in rows if r["st"] is not None and r["st"]["a"] is not None]
    if field_id == 20:
        return [r["st"]["name"] for r in rows if r["st"] is not None and r["st"]["name"] is not None]
    name = SCHEMA.find_field(field_id).name
    return [r[name] for r in rows if r[name] is not None]


def test_field_ids_and_layout_in_the_written_file(tmp_path: Path):
    rows = generate_rows(200, 1)
    out, _ = run_write(tmp_path, rows)
    pf = pq.ParquetFile(out)
    # Every leaf's path (as pyiceberg maps paths to ids) carries the Iceberg id in the Parquet schema.
    expected = parquet_path_to_id_mapping(SCHEMA)
    found = {}

    def walk(field: pa.Field, path: list[str]):
        fid = int(field.metadata[b"PARQUET:field_id"])
        t = field.type
        if pa.types.is_struct(t):
            for child in t:
                walk(child, path + [child.name])
        elif pa.types.is_map(t):
            walk(t.key_field, path + ["key_value", "key"])
            walk(t.item_field, path + ["key_value", "value"])
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            walk(t.value_field, path + ["list", "element"])
        else:
            found[".".join(path)] = fid
        return fid

    top_ids = {f.name: walk(f, [f.name]) for f in pf.schema_arrow}
    assert found == expected
    assert top_ids == {f.name: f.field_id for f in SCHEMA.fields}
    # The Parquet column paths are the spec's (3-level lists, key_value maps).
    paths = {pf.metadata.schema.column(i).path for i in range(pf.metadata.num_columns)}
    assert paths == set(expected)
    # The values survive the trip.
    back = pq.read_table(out)
    assert back.num_rows == len(rows)
    for name in ["i", "l", "s", "date", "ts", "dec38", "st", "lst"]:
        assert back.column(name).to_pylist() == [r[name] for r in rows], name


@pytest.mark.parametrize(
    "props",
    [
        {},
        {
            "write.metadata.metrics.default": "counts",
            "write.metadata.metrics.column.s": "truncate(4)",
            "write.metadata.metrics.column.l": "full",
            "write.metadata.metrics.column.bin": "full",
            "write.metadata.metrics.column.d": "none",
        },
    ],
    ids=["default", "modes"],
)
def test_metrics_match_pyiceberg(tmp_path: Path, props: dict[str, str]):
    rows = generate_rows(3000, 2)
    out, ours = run_write(tmp_path, rows, props, row_group_bytes=64 * 1024)
    theirs = pyiceberg_stats(out, props).to_serialized_dict()
    plan = compute_statistics_plan(SCHEMA, props)

    assert ours["record_count"] == theirs["record_count"] == len(rows)
    assert ours["file_size_in_bytes"] == out.stat().st_size
    assert ours["split_offsets"] == theirs["split_offsets"]
    assert len(ours["split_offsets"]) == pq.ParquetFile(out).metadata.num_row_groups > 1

    tracked = [fid for fid in ALL_LEAVES if plan[fid].mode.type.value != "none"]
    untracked = [fid for fid in ALL_LEAVES if fid not in tracked]
    for key in ["value_counts", "null_value_counts"]:
        assert {int(k): v for k, v in ours[key].items()} == {fid: theirs[key][fid] for fid in tracked}, key
    # Java (and lakesync) record no column size for a column in mode none; pyiceberg still does.
    assert {int(k): v for k, v in ours["column_sizes"].items()} == {fid: theirs["column_sizes"][fid] for fid in tracked}
    assert all(str(fid) not in ours["value_counts"] for fid in untracked)

    # Bounds: wherever pyiceberg has one, ours decodes to the same value.
    for kind in ["lower_bounds", "upper_bounds"]:
        ours_b = {int(k): bytes.fromhex(v) for k, v in ours[kind].items()}
        for fid, raw in theirs[kind].items():
            assert fid in ours_b, f"{kind} missing for field {fid}"
            a, b = decode(fid, ours_b[fid]), decode(fid, raw)
            if fid == 13:
                # pyiceberg reads timestamp_ns statistics through datetime and keeps whole
                # microseconds (floored); check ours against the rows and pyiceberg at its precision.
                values = leaf_values(rows, 13)
                assert a == (min(values) if kind == "lower_bounds" else max(values))
                assert b == a // 1000 * 1000, (kind, a, b)
            elif isinstance(a, float):
                assert a == b or (math.isnan(a) and math.isnan(b)), (kind, fid, a, b)
            else:
                assert a == b, (kind, fid, a, b)
        # Top-level fields with bounds on our side are the ones pyiceberg bounds too.
        assert {fid for fid in ours_b if fid in TOP_PRIMITIVES} == set(theirs[kind])
        # No bounds inside lists or maps.
        assert not {22, 24, 25} & set(ours_b)

    # What pyiceberg does not compute: NaN counts from the rows.
    expect_nan = {
        4: sum(1 for r in rows if r["f"] is not None and math.isnan(r["f"])),
        5: sum(1 for r in rows if r["d"] is not None and math.isnan(r["d"])),
        25: sum(1 for r in rows if r["m"] for _, v in r["m"] if v is not None and math.isnan(v)),
    }
    for fid, count in expect_nan.items():
        if fid in tracked:
            assert ours["nan_value_counts"][str(fid)] == count, fid
        else:
            assert str(fid) not in ours["nan_value_counts"]

    # Struct leaves keep bounds (as Java does) in the default mode: check them against the rows.
    if not props:
        a_vals = leaf_values(rows, 19)
        assert decode(19, bytes.fromhex(ours["lower_bounds"]["19"])) == min(a_vals)
        assert decode(19, bytes.fromhex(ours["upper_bounds"]["19"])) == max(a_vals)
        names = leaf_values(rows, 20)  # at most 20 code points: truncated to 16
        lo = min(n.encode() for n in names).decode()
        assert decode(20, bytes.fromhex(ours["lower_bounds"]["20"])) == lo[:16]
        # Float bounds ignore NaN; -0.0 sorts below 0.0.
        finite = [v for v in leaf_values(rows, 5) if not math.isnan(v)]
        assert decode(5, bytes.fromhex(ours["lower_bounds"]["5"])) == min(finite)
        assert decode(5, bytes.fromhex(ours["upper_bounds"]["5"])) == max(finite)


def write_plain(path: Path, table: pa.Table, **kwargs):
    pq.write_table(table, path, **kwargs)


def read_back(tmp_path: Path, src: Path, schema: Schema, *extra: str) -> tuple[pa.Table, dict]:
    out = tmp_path / "read.parquet"
    (tmp_path / "read_schema.json").write_text(schema_json(schema))
    info = json.loads(probe("read", "--schema", str(tmp_path / "read_schema.json"), "--input", str(src), "--output", str(out), *extra).stdout)
    return pq.read_table(out), info


def test_reader_reads_pyarrow_files_with_field_ids_and_positions(tmp_path: Path):
    rows = generate_rows(5000, 3)
    src = tmp_path / "pyarrow.parquet"
    write_plain(src, to_table(rows), row_group_size=700)
    back, info = read_back(tmp_path, src, SCHEMA, "--batch-size", "300")
    assert info["matched_by_field_id"] is True
    assert info["rows"] == len(rows)
    assert back.column("_pos").to_pylist() == list(range(len(rows)))
    expected = to_table(rows)
    for name in expected.column_names:
        got = back.column(name).to_pylist()
        want = expected.column(name).to_pylist()
        if name in ("f", "d"):
            assert [None if v is None else ("nan" if math.isnan(v) else v) for v in got] == [
                None if v is None else ("nan" if math.isnan(v) else v) for v in want
            ], name
        elif name == "m":
            norm = lambda col: [None if v is None else [(k, "nan" if x is not None and math.isnan(x) else x) for k, x in v] for v in col]
            assert norm(got) == norm(want)
        elif name == "u":
            assert got == [r["u"] for r in rows]
        else:
            assert got == want, name

    # A subset of row groups keeps the file positions of its rows.
    sub, info = read_back(tmp_path, src, SCHEMA, "--row-groups", "1,3")
    assert sub.column("_pos").to_pylist() == list(range(700, 1400)) + list(range(2100, 2800))
    assert sub.column("i").to_pylist() == [r["i"] for r in rows[700:1400] + rows[2100:2800]]

    # Renamed and promoted through the ids: i (int) read as long under another name.
    evolved = Schema(
        NestedField(2, "renamed_i", LongType(), required=True),
        NestedField(4, "f_as_double", DoubleType()),
        NestedField(6, "dec9_wider", DecimalType(12, 2)),
        NestedField(99, "added", StringType()),
    )
    ev, _ = read_back(tmp_path, src, evolved)
    assert ev.column("renamed_i").to_pylist() == [r["i"] for r in rows]
    assert ev.column("dec9_wider").to_pylist() == [r["dec9"] for r in rows]
    assert ev.column("added").null_count == len(rows)
    assert ev.schema.field("renamed_i").type == pa.int64()


def test_reader_reads_pyarrow_files_without_field_ids(tmp_path: Path):
    rows = generate_rows(500, 4)
    table = to_table(rows)
    # Strip every field id: as files from systems that know nothing of Iceberg.
    columns = [table.column(i).combine_chunks() for i in range(table.num_columns)]
    plain = pa.table({f.name: (c.storage if isinstance(c.type, pa.ExtensionType) else c) for f, c in zip(table.schema, columns)})
    plain = plain.cast(pa.schema([_strip_ids(f) for f in plain.schema]))
    src = tmp_path / "noids.parquet"
    write_plain(src, plain)
    assert set(re.findall(r"field_id=(-?\d+)", str(pq.ParquetFile(src).schema))) == {"-1"}

    # By name (no mapping given).
    back, info = read_back(tmp_path, src, SCHEMA)
    assert info["matched_by_field_id"] is False
    for name in ["i", "l", "s", "ts", "tstz", "st", "lst", "u"]:
        assert back.column(name).to_pylist() == [r[name] for r in rows], name

    # Through a name mapping, with the table's columns renamed since the file was written.
    renamed = Schema(
        NestedField(2, "int_col", IntegerType(), required=True),
        NestedField(18, "person", StructType(NestedField(19, "age", IntegerType()), NestedField(20, "name", StringType()))),
        NestedField(21, "numbers", ListType(22, LongType(), element_required=False)),
    )
    mapping = json.loads(create_mapping_from_schema(SCHEMA).model_dump_json())
    (tmp_path / "mapping.json").write_text(json.dumps(mapping))
    back, _ = read_back(tmp_path, src, renamed, "--name-mapping", str(tmp_path / "mapping.json"))
    assert back.column("int_col").to_pylist() == [r["i"] for r in rows]
    assert back.column("person").to_pylist() == [None if r["st"] is None else {"age": r["st"]["a"], "name": r["st"]["name"]} for r in rows]
    assert back.column("numbers").to_pylist() == [r["lst"] for r in rows]


def _strip_ids(field: pa.Field) -> pa.Field:
    t = field.type
    if pa.types.is_struct(t):
        t = pa.struct([_strip_ids(c) for c in t])
    elif pa.types.is_map(t):
        t = pa.map_(_strip_ids(t.key_field), _strip_ids(t.item_field))
    elif pa.types.is_large_list(t):
        t = pa.large_list(_strip_ids(t.value_field))
    elif pa.types.is_list(t):
        t = pa.list_(_strip_ids(t.value_field))
    return pa.field(field.name, t, field.nullable)


def test_reader_converts_legacy_timestamp_encodings(tmp_path: Path):
    values = [EPOCH + dt.timedelta(milliseconds=v) for v in (-86_400_001, -1, 0, 1_510_871_468_123)]
    schema = Schema(NestedField(1, "t", TimestampType()))
    def table_of(unit: str) -> pa.Table:
        arrow = pa.schema([pa.field("t", pa.timestamp(unit), metadata={b"PARQUET:field_id": b"1"})])
        return pa.table({"t": pa.array(values, pa.timestamp("us")).cast(pa.timestamp(unit))}, schema=arrow)

    for name, (unit, kwargs) in {
        "ms": ("us", {"coerce_timestamps": "ms"}),
        "int96": ("us", {"use_deprecated_int96_timestamps": True}),
        "ns": ("ns", {"version": "2.6"}),
    }.items():
        src = tmp_path / f"{name}.parquet"
        write_plain(src, table_of(unit), store_schema=False, **kwargs)
        back, _ = read_back(tmp_path, src, schema)
        assert back.column("t").to_pylist() == values, name


def test_corrupt_file_is_a_clean_error(tmp_path: Path):
    rows = generate_rows(100, 5)
    src = tmp_path / "good.parquet"
    write_plain(src, to_table(rows))
    data = src.read_bytes()
    bad = tmp_path / "truncated.parquet"
    bad.write_bytes(data[: len(data) // 2])
    (tmp_path / "s.json").write_text(schema_json(SCHEMA))
    result = probe("read", "--schema", str(tmp_path / "s.json"), "--input", str(bad), "--output", str(tmp_path / "x.parquet"), check=False)
    assert result.returncode == 1
    kind, message = result.stderr.strip().split("\t")[1:3]
    assert kind == "corrupt data"
    assert str(bad) in message
