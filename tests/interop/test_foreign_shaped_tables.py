"""Tables shaped the way other engines and migration tools leave them, read by the real `lakesync`.

A corpus generator (no checked-in tables): each test writes its tables with independent writers --
pyarrow for the Parquet files, pyiceberg for the table metadata and commits, DuckDB where it writes
Iceberg -- and holds `lakesync scan`, `lakesync changes --source iceberg` and `lakesync apply` against
the values it wrote and against pyiceberg's and DuckDB's reads of the same tables:

- Hive-style data files: Parquet files without their identity-partition column and without field
  ids, registered with a fast append whose data-file entries carry the partition tuple (what
  metadata-only migrations of Hive tables do), for an identity partition of every primitive type,
  null partition values included. The spec's column projection fills the column from the partition
  tuple; the name mapping (`schema.name-mapping.default`) finds the other columns.
- Files whose columns are found only through the name mapping (renamed columns, no field ids).
- Columns added later with an `initial-default` (v3), and promoted types (int -> long,
  float -> double, decimal precision; date -> timestamp on v3).
- Nested fields: sub-fields added to structs, list elements and map values after files were
  written, a struct field moved, and a file whose columns and sub-fields are in another order.
- v1 tables whose snapshots list their manifests inline (no manifest list).

Where an oracle itself misreads a table, the test shows what it returned and holds lakesync against
the values written and the other oracle.
"""

from __future__ import annotations

import collections
import datetime as dt
import decimal
import json
import os
import random
import uuid
from pathlib import Path

import pytest

import oracles as O

pytestmark = O.needs_lakesync

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("pyiceberg")

UTC = dt.timezone.utc


# ---------------------------------------------------------------------------------------------
# Writing foreign-shaped tables


def columns_of(metadata: dict) -> list[dict]:
    [schema] = [s for s in metadata["schemas"] if s["schema-id"] == metadata["current-schema-id"]]
    return schema["fields"]


def table_location(tbl) -> str:
    return O.local_path(tbl.metadata.location)


def write_parquet(path: Path, table) -> Path:
    """A plain pyarrow Parquet file: no Iceberg field ids, as Hive, Spark without Iceberg or any
    Parquet tool writes it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, str(path))
    return path


def register_files(tbl, files: list[tuple[Path, object]]):
    """Fast-appends Parquet files to `tbl` with pyiceberg, each data-file entry carrying the given
    partition tuple (a pyiceberg Record), the way metadata-only migrations register Hive files.
    Returns the reloaded table."""
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat

    with tbl.transaction() as tx:
        with tx.update_snapshot().fast_append() as append:
            for path, partition in files:
                rows = pq.read_metadata(str(path)).num_rows
                append.append_data_file(DataFile.from_args(
                    content=DataFileContent.DATA, file_path=f"file://{path}", file_format=FileFormat.PARQUET,
                    partition=partition, record_count=rows, file_size_in_bytes=os.path.getsize(path),
                    spec_id=tbl.metadata.default_spec_id, sort_order_id=None, equality_ids=None,
                    key_metadata=None))
    return tbl


def set_name_mapping(tbl, mapping: list[dict] | None = None):
    """Sets `schema.name-mapping.default`: the given mapping, or one built from the current schema."""
    from pyiceberg.table.name_mapping import create_mapping_from_schema

    text = json.dumps(mapping) if mapping is not None else create_mapping_from_schema(tbl.schema()).model_dump_json()
    with tbl.transaction() as tx:
        tx.set_properties({"schema.name-mapping.default": text})


def metadata_location(catalog, name: str) -> str:
    return catalog.load_table(name).metadata_location


def rows_by_lakesync(cli: O.Cli, name: str, columns: list[dict], *extra) -> list[tuple]:
    return O.normalise_rows(cli.scan_jsonl(name, *extra), columns, "jsonl")


class Misreads:
    """What an oracle got wrong, shown in the test output instead of failing the test."""

    def __init__(self):
        self.seen: list[str] = []

    def read(self, oracle: str, read, want: list[tuple], what: str) -> bool:
        """Checks `read()` against `want`; an oracle that fails to read the table misreads it too."""
        try:
            got = read()
        except Exception as e:  # noqa: BLE001 - any failure of the oracle is what gets shown
            self.seen.append(f"{oracle} cannot read {what}: {type(e).__name__}: {str(e)[:300]}")
            print(self.seen[-1])
            return False
        return self.check(oracle, got, want, what)

    def check(self, oracle: str, got: list[tuple], want: list[tuple], what: str) -> bool:
        if collections.Counter(got) == collections.Counter(want):
            return True
        extra = list((collections.Counter(got) - collections.Counter(want)).items())[:3]
        missing = list((collections.Counter(want) - collections.Counter(got)).items())[:3]
        self.seen.append(f"{oracle} misreads {what}: {len(got)} rows for {len(want)}; "
                         f"unexpected {extra}, missing {missing}")
        print(self.seen[-1])
        return False


# One identity partition per primitive type: (Iceberg type, pyiceberg type factory, values written).
# None is a null partition value (Hive's __HIVE_DEFAULT_PARTITION__).
def _partition_types():
    from pyiceberg.types import (BinaryType, BooleanType, DateType, DecimalType, DoubleType, FixedType, FloatType,
                                 IntegerType, LongType, StringType, TimestampType, TimestamptzType, TimeType,
                                 UUIDType)

    return {
        "int": ("int", IntegerType, [-7, 2**31 - 1, None]),
        "long": ("long", LongType, [-(2**40), 3]),
        "decimal": ("decimal(9, 2)", lambda: DecimalType(9, 2), [decimal.Decimal("-12.34"), decimal.Decimal("1234567.89"),
                                                                  None]),
        "date": ("date", DateType, [dt.date(1969, 12, 31), dt.date(2024, 2, 29)]),
        "time": ("time", TimeType, [dt.time(0, 0), dt.time(23, 59, 59, 999999), None]),
        "timestamp": ("timestamp", TimestampType, [dt.datetime(1960, 1, 1, 0, 0, 0, 1), dt.datetime(2024, 3, 1, 12)]),
        "timestamptz": ("timestamptz", TimestamptzType, [dt.datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC),
                                                         dt.datetime(2024, 3, 1, tzinfo=UTC), None]),
        "string": ("string", StringType, ["eu", "日本 a/b=c", ""]),
        "binary": ("binary", BinaryType, [b"\x00\xff", b"", None]),
        "fixed": ("fixed[4]", lambda: FixedType(4), [b"abcd", b"\x00\x01\x02\x03"]),
        "uuid": ("uuid", UUIDType, [uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"), None]),
        "boolean": ("boolean", BooleanType, [True, False, None]),
        "float": ("float", FloatType, [-1.5, 0.25]),
        "double": ("double", DoubleType, [2.5, -1e300, None]),
    }


PARTITION_TYPES = list(_partition_types())


def hive_table(cli: O.Cli, name: str, kind: str, identifier: bool = False):
    """A v2 table (id long, payload string, part <kind>) partitioned by identity(part), its data in
    Hive-style files `part=<value>/` that hold only id and payload. Returns (catalog, table, the
    rows written as (id, payload, part) in Python values)."""
    from pyiceberg.partitioning import PartitionField, PartitionSpec, partition_record_value
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.typedef import Record
    from pyiceberg.types import LongType, NestedField, StringType

    iceberg_type, make_type, values = _partition_types()[kind]
    catalog = O.sql_catalog(cli)
    ns = name.split(".")[0]
    if (ns,) not in catalog.list_namespaces():
        catalog.create_namespace(ns)
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "payload", StringType()),
                    NestedField(3, "part", make_type(), required=identifier),
                    identifier_field_ids=[1, 3] if identifier else [])
    spec = PartitionSpec(PartitionField(3, 1000, IdentityTransform(), "part"))
    tbl = catalog.create_table(name, schema=schema, partition_spec=spec, properties={"format-version": "2"})
    set_name_mapping(tbl)
    tbl = catalog.load_table(name)
    files, written = [], []
    next_id = 0
    for k, value in enumerate(v for v in values if v is not None or not identifier):
        ids = list(range(next_id, next_id + 20 + k))
        next_id = ids[-1] + 1
        payloads = [f"{kind}-{k}-{i}" if i % 7 else None for i in ids]
        data = pa.table({"id": pa.array(ids, pa.int64()), "payload": pa.array(payloads, pa.string())})
        path = write_parquet(Path(table_location(tbl)) / "data" / f"part={k}" / f"{uuid.uuid4()}.parquet", data)
        record = Record(partition_record_value(spec.fields[0], value, schema))
        files.append((path, record))
        written += [(i, p, value) for i, p in zip(ids, payloads)]
    register_files(tbl, files)
    return catalog, catalog.load_table(name), written


# ---------------------------------------------------------------------------------------------
# Scans of Hive-style tables


@pytest.mark.parametrize("kind", PARTITION_TYPES)
def test_hive_style_files_read_their_identity_partition_values(tmp_path, kind):
    cli = O.Cli(tmp_path)
    name = f"hive.t_{kind}"
    catalog, tbl, written = hive_table(cli, name, kind)
    metadata = cli.metadata(name)
    columns = columns_of(metadata)
    assert [c["name"] for c in columns] == ["id", "payload", "part"]
    # The files really are Hive-style: no partition column, no field ids.
    for entry in O.manifest_entries(metadata):
        schema = pq.read_schema(O.local_path(entry["data_file"]["file_path"]))
        assert schema.names == ["id", "payload"]
        assert all(f.metadata is None or b"PARQUET:field_id" not in f.metadata for f in schema)
    want = O.normalise_rows(written, columns, "arrow")
    misreads = Misreads()
    pyiceberg_ok = misreads.read("pyiceberg", lambda: O.arrow_rows(tbl.scan().to_arrow(), columns), want,
                                 f"Hive-style {kind} partitions")
    duck_ok = misreads.read("DuckDB", lambda: O.duckdb_rows(O.duckdb_connection(), tbl.metadata_location, columns),
                            want, f"Hive-style {kind} partitions")
    assert pyiceberg_ok or duck_ok, "both oracles misread the table: " + "; ".join(misreads.seen)

    got = rows_by_lakesync(cli, name, columns)
    O.assert_same_rows(got, want, f"lakesync scan of Hive-style {kind} partitions")
    # Filters and projections on the partition column see the values too.
    non_null = [w for w in written if w[2] is not None]
    probe = non_null[-1][2]
    literal = {
        "string": lambda v: "'" + v.replace("'", "''") + "'",
        "boolean": lambda v: "true" if v else "false",
        "date": lambda v: f"DATE '{v.isoformat()}'",
    }.get(kind)
    if literal is not None:
        sel = [columns[2], columns[0]]
        got = rows_by_lakesync(cli, name, sel, "--filter", f"part = {literal(probe)}", "--select", "part,id")
        want_sel = O.normalise_rows([(w[2], w[0]) for w in written if w[2] == probe],
                                    [columns[2], columns[0]], "arrow")
        O.assert_same_rows(got, want_sel, f"--filter on the {kind} partition column")
    got = rows_by_lakesync(cli, name, [c for c in columns if c["name"] == "part"], "--filter", "part IS NULL",
                           "--select", "part")
    assert len(got) == sum(1 for w in written if w[2] is None)


# ---------------------------------------------------------------------------------------------
# The changelog and apply over Hive-style files


def lakesync_changes(cli: O.Cli, name: str) -> list[dict]:
    out = cli.ok("changes", "--source", "iceberg", "--table", name, "--format", "jsonl")
    return [json.loads(line) for line in out.splitlines()]


def lineage(metadata: dict) -> list[dict]:
    by_id = {s["snapshot-id"]: s for s in metadata["snapshots"]}
    out, sid = [], metadata.get("current-snapshot-id")
    while sid is not None and sid in by_id:
        out.append(by_id[sid])
        sid = by_id[sid].get("parent-snapshot-id")
    return out[::-1]


def expected_changes(metadata: dict, read_at, key_index: list[int] | None) -> dict[int, collections.Counter]:
    """Per snapshot, the multiset difference of the table read at its parent and at it, paired into
    updates by key when the table has one (the rows of one key are unique in every state)."""
    out, previous = {}, []
    for snap in lineage(metadata):
        rows = read_at(snap["snapshot-id"])
        before, after = collections.Counter(previous), collections.Counter(rows)
        deleted, inserted = before - after, after - before
        key = (lambda row: tuple(row[i] for i in key_index)) if key_index else (lambda row: object())  # noqa: E731
        deleted_keys = {key(r) for r in deleted}
        inserted_keys = {key(r) for r in inserted}
        want = collections.Counter()
        for row, n in deleted.items():
            want[("UPDATE_BEFORE" if key(row) in inserted_keys else "DELETE",) + row] += n
        for row, n in inserted.items():
            want[("UPDATE_AFTER" if key(row) in deleted_keys else "INSERT",) + row] += n
        if want and snap["summary"]["operation"] != "replace":
            out[snap["snapshot-id"]] = want
        previous = rows
    return out


def changes_by_snapshot(rows: list[dict], columns: list[dict]) -> dict[int, collections.Counter]:
    out: dict[int, collections.Counter] = collections.defaultdict(collections.Counter)
    values = O.normalise_rows([{c["name"]: r[c["name"]] for c in columns} for r in rows], columns, "jsonl")
    for r, v in zip(rows, values):
        out[r["_commit_snapshot_id"]][(r["_change_type"],) + v] += 1
    return dict(out)


@pytest.mark.parametrize("kind", ["string", "date", "decimal", "long"])
def test_changelog_of_hive_style_files(tmp_path, kind):
    """The changelog of a table whose data files lack their partition column: fast appends of
    Hive-style files, `lakesync apply` deleting and updating rows in them (position deletes), and a
    pyiceberg delete of a whole partition. Every change row carries the partition value of its file,
    as pyiceberg reads each snapshot."""
    from pyiceberg import expressions as E
    from pyiceberg.partitioning import partition_record_value
    from pyiceberg.typedef import Record

    cli = O.Cli(tmp_path)
    name = f"hive.c_{kind}"
    catalog, tbl, written = hive_table(cli, name, kind, identifier=True)
    # A second fast append: more Hive-style rows in the first partition.
    first_part, last_part = written[0][2], written[-1][2]
    more_ids = list(range(500, 530))
    path = write_parquet(Path(table_location(tbl)) / "data" / "part=more" / f"{uuid.uuid4()}.parquet",
                         pa.table({"id": pa.array(more_ids, pa.int64()),
                                   "payload": pa.array([f"more-{i}" for i in more_ids], pa.string())}))
    spec = tbl.spec()
    tbl = register_files(tbl, [(path, Record(partition_record_value(spec.fields[0], first_part, tbl.schema())))])
    written += [(i, f"more-{i}", first_part) for i in more_ids]
    # lakesync apply: deletes and updates of keys that live in Hive-style files, and inserts.
    live = {(i, part): payload for i, payload, part in written}
    apply_random_changes(cli, name, live, random.Random(len(kind)), tbl.schema().as_arrow().field("part").type,
                         new_part=first_part, position=1)
    # The last partition's files removed whole, by pyiceberg at the metadata level. (pyiceberg's own
    # delete() reads the files to decide, and fails on them: its delete path does not fill in
    # partition values, "Field is required, and could not be found in the file".)
    tbl = catalog.load_table(name)
    dropped = [task.file for task in tbl.scan(row_filter=E.EqualTo("part", last_part)).plan_files()]
    assert dropped
    with tbl.transaction() as tx:
        with tx.update_snapshot().overwrite() as overwrite:
            for data_file in dropped:
                overwrite.delete_data_file(data_file)
    tbl = catalog.load_table(name)
    metadata = cli.metadata(name)
    columns = columns_of(metadata)
    assert len(lineage(metadata)) == 4

    # The oracle is DuckDB: pyiceberg 0.12 cannot read a required column that a file lacks even when
    # the partition tuple holds it (shown here, then DuckDB's snapshot reads are diffed instead).
    con = O.duckdb_connection()
    location = tbl.metadata_location
    Misreads().read("pyiceberg", lambda: O.arrow_rows(tbl.scan().to_arrow(), columns),
                    O.duckdb_rows(con, location, columns), "a required identity-partition column the files lack")

    def duckdb_at(sid):
        sql = (f"SELECT {O.duckdb_select_list(columns)} FROM iceberg_scan('{location}', "
               f"snapshot_from_id => {sid})")
        return O.normalise_rows(con.execute(sql).fetchall(), columns, "duckdb")

    want = expected_changes(metadata, duckdb_at, [0, 2])
    got = changes_by_snapshot(lakesync_changes(cli, name), columns)
    assert set(got) == set(want), f"snapshots with changes: lakesync {sorted(got)}, DuckDB diffs {sorted(want)}"
    for sid in want:
        assert got[sid] == want[sid], (f"snapshot {sid}: unexpected {list((got[sid] - want[sid]).items())[:3]}, "
                                       f"missing {list((want[sid] - got[sid]).items())[:3]}")
    kinds = {k[0] for c in got.values() for k in c}
    assert {"INSERT", "DELETE", "UPDATE_BEFORE", "UPDATE_AFTER"} <= kinds, kinds


def apply_random_changes(cli: O.Cli, name: str, live: dict, r: random.Random, part_type, new_part, position: int,
                         version_suffix: str = "") -> dict:
    """Deletes a sixth and updates a sixth of the live (id, part) keys and inserts ten new rows with
    `lakesync apply` (keys id, part; position deletes); updates `live` to the expected state and
    returns the apply's JSON summary of the table."""
    changes = []
    for (i, part) in r.sample(sorted(live, key=repr), len(live) // 3):
        if r.random() < 0.5:
            changes.append({"id": i, "payload": live.pop((i, part)), "part": part, "op": "DELETE", "seq": 1})
        else:
            live[(i, part)] = f"updated-{i}"
            changes.append({"id": i, "payload": f"updated-{i}", "part": part, "op": "UPDATE_AFTER", "seq": 1})
    for i in range(1000, 1010):
        live[(i, new_part)] = f"inserted-{i}"
        changes.append({"id": i, "payload": f"inserted-{i}", "part": new_part, "op": "INSERT", "seq": 1})
    path = write_changes(cli.workdir / f"changes-{position}{version_suffix}.parquet", changes, part_type)
    out = json.loads(cli.ok("apply", "--table", name, "--changes", path, "--mode", "merge-on-read",
                            "--change-type-column", "op", "--sequence-number-column", "seq",
                            "--equality-columns", "id,part", "--delete-strategy", "position", "--sink-id", "s",
                            "--source-position", position, "--json"))
    [summary] = out["tables"]
    assert summary["missing_deletes"] == 0, summary
    return summary


def write_changes(path: Path, changes: list[dict], part_type) -> Path:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("payload", pa.string()),
                        pa.field("part", part_type, nullable=False), pa.field("op", pa.string(), nullable=False),
                        pa.field("seq", pa.int64(), nullable=False)])
    pq.write_table(pa.Table.from_pylist(changes, schema=schema), str(path))
    return path


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("kind", ["string", "date", "long"])
def test_apply_resolves_keys_in_hive_style_files(tmp_path, kind, version):
    """Keys (id, part) whose part lives only in the partition tuple are resolved to positions: the
    updates and deletes become position deletes (v2) or deletion vectors (v3) on the Hive-style files,
    with nothing left over and nothing missing."""
    cli = O.Cli(tmp_path)
    name = f"hive.a_{kind}"
    catalog, tbl, written = hive_table(cli, name, kind, identifier=True)
    if version == 3:
        cli.ok("table", "upgrade", name, "--format-version", 3)
    live = {(i, part): payload for i, payload, part in written}
    apply_random_changes(cli, name, live, random.Random(len(kind) * 10 + version),
                         tbl.schema().as_arrow().field("part").type, new_part=written[0][2], position=1)
    metadata = cli.metadata(name)
    deletes = {(e["data_file"]["content"], e["data_file"]["file_format"].upper())
               for e in O.manifest_entries(metadata) if e["data_file"]["content"] != 0}
    assert deletes == {(1, "PUFFIN" if version == 3 else "PARQUET")}, deletes
    columns = columns_of(metadata)
    want = O.normalise_rows([(i, payload, part) for (i, part), payload in live.items()], columns, "arrow")
    O.assert_same_rows(rows_by_lakesync(cli, name, columns), want, f"lakesync scan after apply (v{version})")
    tbl = catalog.load_table(name)
    misreads = Misreads()
    pyiceberg_ok = misreads.read("pyiceberg", lambda: O.arrow_rows(tbl.scan().to_arrow(), columns), want,
                                 f"the applied v{version} table")
    duck_ok = misreads.read("DuckDB", lambda: O.duckdb_rows(O.duckdb_connection(), tbl.metadata_location, columns),
                            want, f"the applied v{version} table")
    assert pyiceberg_ok or duck_ok, "; ".join(misreads.seen)


# ---------------------------------------------------------------------------------------------
# Name mapping, defaults, promotions


def edit_metadata(catalog, name: str, edit) -> str:
    """Commits `edit(metadata dict)` as a new metadata file and swaps the catalog row the way the SQL
    catalogs do: for metadata changes pyiceberg 0.12 cannot write (v3 fields, inline manifests)."""
    from sqlalchemy import text

    base = catalog.load_table(name).metadata_location
    with open(O.local_path(base), encoding="utf-8") as f:
        metadata = json.load(f)
    edit(metadata)
    version = int(Path(O.local_path(base)).name.split("-")[0]) + 1
    location = f"{metadata['location']}/metadata/{version:05d}-{uuid.uuid4()}.metadata.json"
    with open(O.local_path(location), "x", encoding="utf-8") as f:
        json.dump(metadata, f)
    ns, table = name.rsplit(".", 1)
    with catalog.engine.begin() as conn:
        swapped = conn.execute(text(
            "UPDATE iceberg_tables SET metadata_location = :new, previous_metadata_location = :old "
            "WHERE catalog_name = :catalog AND table_namespace = :ns AND table_name = :name "
            "AND metadata_location = :old"),
            {"new": location, "old": base, "catalog": catalog.name, "ns": ns, "name": table}).rowcount
    assert swapped == 1
    return location


def add_schema(metadata: dict, fields: list[dict]) -> None:
    """A new current schema with `fields` (Iceberg JSON)."""
    schema_id = max(s["schema-id"] for s in metadata["schemas"]) + 1
    metadata["schemas"].append({"type": "struct", "schema-id": schema_id, "fields": fields})
    metadata["current-schema-id"] = schema_id
    metadata["last-column-id"] = max(metadata["last-column-id"], *(f["id"] for f in fields))


def test_files_without_field_ids_are_read_through_the_name_mapping(tmp_path):
    """Columns renamed since the files were written and nested fields in another order are found
    by the names the mapping lists for each field id."""
    from pyiceberg.schema import Schema
    from pyiceberg.typedef import Record
    from pyiceberg.types import (DecimalType, IntegerType, ListType, LongType, NestedField, StringType,
                                 StructType)

    cli = O.Cli(tmp_path)
    catalog = O.sql_catalog(cli)
    catalog.create_namespace("m")
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "customer", StringType()),
                    NestedField(3, "amount", DecimalType(10, 2)),
                    NestedField(4, "addr", StructType(NestedField(5, "city", StringType()),
                                                      NestedField(6, "zip", IntegerType()))),
                    NestedField(7, "tags", ListType(8, StringType(), element_required=False)),
                    NestedField(9, "note", StringType()))
    tbl = catalog.create_table("m.t", schema=schema, properties={"format-version": "2"})
    ids = {name: tbl.schema().find_field(name).field_id
           for name in ("id", "customer", "amount", "addr", "addr.city", "addr.zip", "tags", "tags.element")}
    set_name_mapping(tbl, [  # (pyiceberg assigned its own field ids at create)
        {"field-id": ids["id"], "names": ["id"]},
        {"field-id": ids["customer"], "names": ["customer", "cust_name"]},
        {"field-id": ids["amount"], "names": ["amount"]},
        {"field-id": ids["addr"], "names": ["addr", "address"], "fields": [
            {"field-id": ids["addr.city"], "names": ["city"]}, {"field-id": ids["addr.zip"], "names": ["zip", "zip_code"]}]},
        {"field-id": ids["tags"], "names": ["tags"], "fields": [{"field-id": ids["tags.element"], "names": ["element"]}]},
    ])
    tbl = catalog.load_table("m.t")
    r = random.Random(5)
    written, files = [], []
    for k in range(3):
        rows = []
        for i in range(k * 100, k * 100 + 60 + k):
            rows.append({
                "id": i, "cust_name": r.choice(["ana", "bo", None, "日本"]),
                "amount": decimal.Decimal(r.randint(-10**6, 10**6)).scaleb(-2) if r.random() < 0.9 else None,
                "address": {"zip_code": r.randint(0, 99999), "city": r.choice(["Paris", None])} if r.random() < 0.9
                else None,
                "tags": [r.choice(["x", None]) for _ in range(r.randint(0, 2))] if r.random() < 0.9 else None,
            })
        arrow_schema = pa.schema([
            ("id", pa.int64()), ("cust_name", pa.string()), ("amount", pa.decimal128(10, 2)),
            ("address", pa.struct([("zip_code", pa.int32()), ("city", pa.string())])),
            ("tags", pa.list_(pa.string()))])
        path = write_parquet(Path(table_location(tbl)) / "data" / f"imported-{k}.parquet",
                             pa.Table.from_pylist(rows, schema=arrow_schema))
        files.append((path, Record()))
        written += [(w["id"], w["cust_name"], w["amount"],
                     None if w["address"] is None else (w["address"]["city"], w["address"]["zip_code"]),
                     None if w["tags"] is None else tuple(w["tags"]), None) for w in rows]
    tbl = register_files(tbl, files)
    columns = columns_of(cli.metadata("m.t"))
    want = O.normalise_rows(written, columns, "arrow")
    O.assert_same_rows(rows_by_lakesync(cli, "m.t", columns), want, "lakesync scan through the name mapping")
    misreads = Misreads()
    tbl = catalog.load_table("m.t")
    ok = misreads.read("pyiceberg", lambda: O.arrow_rows(tbl.scan().to_arrow(), columns),
                       O.reader_view(want, columns, "pyiceberg"), "files without field ids")
    ok = misreads.read("DuckDB", lambda: O.duckdb_rows(O.duckdb_connection(), tbl.metadata_location, columns), want,
                       "files without field ids") or ok
    assert ok, "; ".join(misreads.seen)
    # A filter on a mapped nested field, and a projection.
    sel = [c for c in columns if c["name"] in ("id", "customer")]
    got = rows_by_lakesync(cli, "m.t", sel, "--filter", "addr.zip < 50000 AND customer = 'bo'",
                           "--select", "id,customer")
    want_sel = [(w[0], w[1]) for w in want if w[3] is not None and w[3][1] is not None and w[3][1] < 50000
                and w[1] == "bo"]
    assert want_sel
    O.assert_same_rows(got, want_sel, "--filter through the name mapping")


def test_columns_added_with_initial_defaults_v3(tmp_path):
    """Files written before a column was added read its initial-default (v3); files written after it
    hold their own values."""
    cli = O.Cli(tmp_path)
    cli.ok("namespace", "create", "d")
    schema = O.schema_file(tmp_path / "s.yaml", [{"name": "id", "type": "long", "required": True},
                                                 {"name": "v", "type": "string", "required": False}])
    cli.ok("table", "create", "d.t", "--schema", schema, "--format-version", 3)
    first = [(i, f"v{i}") for i in range(50)]
    cli.ok("table", "append", "d.t", O.write_jsonl(tmp_path / "a.jsonl", first,
                                                  [{"name": "id", "type": "long"}, {"name": "v", "type": "string"}]))
    catalog = O.sql_catalog(cli)
    edit_metadata(catalog, "d.t", lambda m: add_schema(m, [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "v", "required": False, "type": "string"},
        {"id": 3, "name": "region", "required": False, "type": "string", "initial-default": "eu",
         "write-default": "eu"},
        {"id": 4, "name": "level", "required": True, "type": "int", "initial-default": 5, "write-default": 5},
        {"id": 5, "name": "at", "required": False, "type": "date", "initial-default": "2024-02-29"},
    ]))
    columns = columns_of(cli.metadata("d.t"))
    second = [(i, f"w{i}", "us" if i % 3 else None, i, None) for i in range(50, 80)]
    cli.ok("table", "append", "d.t", O.write_jsonl(tmp_path / "b.jsonl", second, columns))
    want = O.normalise_rows([(i, v, "eu", 5, dt.date(2024, 2, 29)) for i, v in first] + second, columns, "arrow")
    O.assert_same_rows(rows_by_lakesync(cli, "d.t", columns), want, "lakesync scan with initial defaults")
    misreads = Misreads()
    location = catalog.load_table("d.t").metadata_location
    ok = misreads.read("pyiceberg", lambda: O.arrow_rows(catalog.load_table("d.t").scan().to_arrow(), columns),
                       want, "initial-default")
    ok = misreads.read("DuckDB", lambda: O.duckdb_rows(O.duckdb_connection(), location, columns), want,
                       "initial-default") or ok
    assert ok, "; ".join(misreads.seen)


def test_promoted_types(tmp_path):
    """int -> long, float -> double and decimal precision widening (pyiceberg's schema update), files
    written before and after the change."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import DecimalType, DoubleType, FloatType, IntegerType, LongType, NestedField

    cli = O.Cli(tmp_path)
    catalog = O.sql_catalog(cli)
    catalog.create_namespace("p")
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "n", IntegerType()),
                    NestedField(3, "f", FloatType()), NestedField(4, "d", DecimalType(9, 2)))
    tbl = catalog.create_table("p.t", schema=schema, properties={"format-version": "2"})
    old = [(i, -(2**31) + i if i % 2 else i, 0.5 + i, decimal.Decimal(i).scaleb(-2)) for i in range(40)]
    tbl.append(pa.Table.from_pylist([dict(zip(["id", "n", "f", "d"], r)) for r in old],
                                    schema=tbl.schema().as_arrow()))
    tbl = catalog.load_table("p.t")
    with tbl.update_schema() as update:
        update.update_column("n", LongType())
        update.update_column("f", DoubleType())
        update.update_column("d", DecimalType(18, 2))
    tbl = catalog.load_table("p.t")
    new = [(i, 2**40 + i, 1e300, decimal.Decimal(10**15 + i).scaleb(-2)) for i in range(40, 60)]
    tbl.append(pa.Table.from_pylist([dict(zip(["id", "n", "f", "d"], r)) for r in new],
                                    schema=tbl.schema().as_arrow()))
    tbl = catalog.load_table("p.t")
    columns = columns_of(cli.metadata("p.t"))
    assert [c["type"] for c in columns][1:] == ["long", "double", "decimal(18, 2)"]
    want = O.normalise_rows(old + new, columns, "arrow")
    O.assert_same_rows(rows_by_lakesync(cli, "p.t", columns), want, "lakesync scan of promoted columns")
    O.assert_same_rows(O.arrow_rows(tbl.scan().to_arrow(), columns), want, "pyiceberg (oracle check)")
    misreads = Misreads()
    misreads.read("DuckDB", lambda: O.duckdb_rows(O.duckdb_connection(), tbl.metadata_location, columns), want,
                  "promoted columns")


def test_date_promoted_to_timestamp_v3(tmp_path):
    """v3 allows date -> timestamp and timestamp_ns (not the zoned types): old files' dates read as
    midnight, and filters on the promoted column stay right although the files' bounds are still
    4-byte dates."""
    cli = O.Cli(tmp_path)
    cli.ok("namespace", "create", "d")
    columns = [{"name": "id", "type": "long", "required": True}, {"name": "at", "type": "date", "required": False}]
    days = [(i, dt.date(1969, 12, 1) + dt.timedelta(days=97 * i) if i % 5 else None) for i in range(30)]
    catalog = O.sql_catalog(cli)
    for kind in ("timestamp", "timestamp_ns"):
        name = f"d.t_{kind}"
        cli.ok("table", "create", name, "--schema", O.schema_file(tmp_path / "s.yaml", columns), "--format-version", 3)
        cli.ok("table", "append", name, O.write_jsonl(tmp_path / "a.jsonl", days, columns))
        edit_metadata(catalog, name, lambda m: add_schema(m, [
            {"id": 1, "name": "id", "required": True, "type": "long"},
            {"id": 2, "name": "at", "required": False, "type": kind}]))
        promoted = columns_of(cli.metadata(name))
        want = O.normalise_rows([(i, None if d is None else dt.datetime(d.year, d.month, d.day))
                                 for i, d in days], promoted, "arrow")
        O.assert_same_rows(rows_by_lakesync(cli, name, promoted), want, f"lakesync scan of date -> {kind}")
        # The data file's bounds are still 4-byte dates (lakesync ignores them for pruning).
        for bound, at in (("1972-06-01T00:00:00", dt.datetime(1972, 6, 1)), ("1990-01-01T00:00:00",
                                                                               dt.datetime(1990, 1, 1))):
            got = rows_by_lakesync(cli, name, promoted, "--filter", f"at >= '{bound}'")
            cut = O.normalise(at, kind, "arrow")
            O.assert_same_rows(got, [w for w in want if w[1] is not None and w[1] >= cut],
                               f"--filter at >= {bound} on date -> {kind}")
        misreads = Misreads()
        location = catalog.load_table(name).metadata_location
        misreads.read("pyiceberg", lambda: O.arrow_rows(catalog.load_table(name).scan().to_arrow(), promoted), want,
                      f"date -> {kind}")
        misreads.read("DuckDB", lambda: O.duckdb_rows(O.duckdb_connection(), location, promoted), want,
                      f"date -> {kind}")


def test_nested_fields_added_moved_and_reordered_in_files(tmp_path):
    """Sub-fields added to a struct, to a list's element struct and to a map's value struct after
    files were written (old files lack them: null), a struct field moved, and a file written by
    pyarrow with field ids whose columns and sub-fields are in another order and miss some: every
    value is found by its field id."""
    from pyiceberg.schema import Schema
    from pyiceberg.typedef import Record
    from pyiceberg.types import (DoubleType, IntegerType, ListType, LongType, MapType, NestedField, StringType,
                                 StructType)

    cli = O.Cli(tmp_path)
    catalog = O.sql_catalog(cli)
    catalog.create_namespace("n")
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "s", StructType(NestedField(3, "a", IntegerType()), NestedField(4, "b", StringType()))),
        NestedField(5, "l", ListType(6, StructType(NestedField(7, "x", IntegerType()),
                                                   NestedField(8, "y", StringType())), element_required=False)),
        NestedField(9, "m", MapType(10, StringType(), 11, StructType(NestedField(12, "v", IntegerType())),
                                    value_required=False)))
    tbl = catalog.create_table("n.t", schema=schema, properties={"format-version": "2"})
    r = random.Random(11)

    def text():
        return r.choice(["p", "日本", "", None])

    old = [{"id": i,
            "s": {"a": r.randint(-5, 5), "b": text()} if i % 7 else None,
            "l": [{"x": r.randint(0, 9), "y": text()} if r.random() < 0.9 else None for _ in range(r.randint(0, 3))],
            "m": [(f"k{j}", {"v": r.randint(0, 99)} if r.random() < 0.9 else None) for j in range(r.randint(0, 2))]}
           for i in range(40)]
    tbl.append(pa.Table.from_pylist(old, schema=tbl.schema().as_arrow()))
    tbl = catalog.load_table("n.t")
    with tbl.update_schema() as update:
        update.add_column(("s", "c"), LongType())
        update.add_column(("l", "z"), DoubleType())
        update.add_column(("m", "w"), StringType())
    tbl = catalog.load_table("n.t")
    with tbl.update_schema() as update:
        update.move_first("s.b")
    tbl = catalog.load_table("n.t")
    new = [{"id": i,
            "s": {"b": text(), "a": r.randint(-5, 5), "c": 2**40 + i},
            "l": [{"x": r.randint(0, 9), "y": text(), "z": r.random()} for _ in range(r.randint(1, 2))],
            "m": [(f"k{j}", {"v": r.randint(0, 99), "w": text()}) for j in range(r.randint(1, 2))]}
           for i in range(100, 130)]
    tbl.append(pa.Table.from_pylist(new, schema=tbl.schema().as_arrow()))
    tbl = catalog.load_table("n.t")

    # A file another writer laid out its own way: columns (m, id, s, l), struct sub-fields reversed,
    # s.b, l.element.z and m.value.v absent; found by the field ids it carries.
    sch = tbl.schema()
    fid = lambda name: sch.find_field(name).field_id  # noqa: E731

    def field(name, typ, iceberg_id, nullable=True):
        return pa.field(name, typ, nullable=nullable, metadata={b"PARQUET:field_id": str(iceberg_id).encode()})

    l_type, m_type = sch.find_field("l").field_type, sch.find_field("m").field_type
    element = pa.struct([field("y", pa.string(), fid("l.element.y")), field("x", pa.int32(), fid("l.element.x"))])
    value = pa.struct([field("w", pa.string(), fid("m.value.w"))])
    foreign_schema = pa.schema([
        field("m", pa.map_(field("key", pa.string(), m_type.key_id, nullable=False),
                           field("value", value, m_type.value_id)), fid("m")),
        field("id", pa.int64(), fid("id"), nullable=False),
        field("s", pa.struct([field("c", pa.int64(), fid("s.c")), field("a", pa.int32(), fid("s.a"))]), fid("s")),
        field("l", pa.list_(field("element", element, l_type.element_id)), fid("l")),
    ])
    foreign = [{"id": i,
                "s": {"c": -i, "a": r.randint(-5, 5)} if i % 4 else None,
                "l": [{"y": text(), "x": r.randint(0, 9)} for _ in range(r.randint(0, 2))],
                "m": [(f"k{j}", {"w": text()}) for j in range(r.randint(0, 2))]}
               for i in range(200, 225)]
    path = Path(table_location(tbl)) / "data" / "foreign-layout.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(foreign, schema=foreign_schema), str(path))
    tbl = register_files(tbl, [(path, Record())])

    # The values written, in the final schema's order: s (b, a, c), l elements (x, y, z), m values (v, w).
    def want_row(w):
        s = w["s"]
        return (w["id"],
                None if s is None else (s.get("b"), s.get("a"), s.get("c")),
                tuple(None if e is None else (e.get("x"), e.get("y"), e.get("z")) for e in w["l"]),
                tuple(sorted((k, None if v is None else (v.get("v"), v.get("w"))) for k, v in w["m"])))

    columns = columns_of(cli.metadata("n.t"))
    assert [f["name"] for f in columns[1]["type"]["fields"]] == ["b", "a", "c"]
    want = O.normalise_rows([want_row(w) for w in old + new + foreign], columns, "arrow")
    O.assert_same_rows(rows_by_lakesync(cli, "n.t", columns), want, "lakesync scan of added, moved and "
                       "reordered nested fields")
    misreads = Misreads()
    tbl = catalog.load_table("n.t")
    ok = misreads.read("pyiceberg", lambda: O.arrow_rows(tbl.scan().to_arrow(), columns),
                       O.reader_view(want, columns, "pyiceberg"), "nested fields added, moved, reordered")
    ok = misreads.read("DuckDB", lambda: O.duckdb_rows(O.duckdb_connection(), tbl.metadata_location, columns), want,
                       "nested fields added, moved, reordered") or ok
    assert ok, "; ".join(misreads.seen)
    # A filter and a projection on nested fields old and new files answer differently.
    got = rows_by_lakesync(cli, "n.t", columns[:1], "--filter", "s.c IS NULL AND s.a > 0", "--select", "id")
    O.assert_same_rows(got, [(w[0],) for w in want if w[1] is not None and w[1][2] is None and w[1][1] is not None
                             and w[1][1] > 0], "--filter on nested fields")


# ---------------------------------------------------------------------------------------------
# v1 snapshots with inline manifests


def test_v1_snapshots_listing_manifests_inline(tmp_path):
    """v1 snapshots written before manifest lists existed name their manifests in the metadata
    ("manifests"). The table is written by pyiceberg as v1 and its snapshots are then given the
    inline form (the manifest paths from each manifest list); lakesync reads every snapshot as
    pyiceberg read it before the change, and can commit on top after an upgrade."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    cli = O.Cli(tmp_path)
    catalog = O.sql_catalog(cli)
    catalog.create_namespace("v1")
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "s", StringType()))
    tbl = catalog.create_table("v1.t", schema=schema, properties={"format-version": "1"})
    for k in range(3):
        tbl.append(pa.Table.from_pylist([{"id": i, "s": f"s{i}"} for i in range(k * 10, k * 10 + 10)],
                                        schema=tbl.schema().as_arrow()))
        tbl = catalog.load_table("v1.t")
    columns = columns_of(cli.metadata("v1.t"))
    snapshots = [s.snapshot_id for s in tbl.metadata.snapshots]
    want = {sid: O.arrow_rows(tbl.scan(snapshot_id=sid).to_arrow(), columns) for sid in snapshots}

    def inline(metadata):
        assert metadata["format-version"] == 1
        for snap in metadata["snapshots"]:
            entries = O.read_avro_records(snap.pop("manifest-list"))
            snap["manifests"] = [e["manifest_path"] for e in entries]

    edit_metadata(catalog, "v1.t", inline)
    metadata = cli.metadata("v1.t")
    assert all("manifests" in s and "manifest-list" not in s for s in metadata["snapshots"])
    for sid in snapshots:
        O.assert_same_rows(rows_by_lakesync(cli, "v1.t", columns, "--snapshot-id", sid), want[sid],
                           f"snapshot {sid} with inline manifests")
    O.assert_same_rows(rows_by_lakesync(cli, "v1.t", columns), want[snapshots[-1]], "current snapshot")
    # Upgraded and appended to: the new snapshot lists the inline manifests in its manifest list.
    cli.ok("table", "upgrade", "v1.t", "--format-version", 2)
    more = [(i, f"t{i}") for i in range(100, 105)]
    cli.ok("table", "append", "v1.t", O.write_jsonl(tmp_path / "more.jsonl", more, columns))
    O.assert_same_rows(rows_by_lakesync(cli, "v1.t", columns), want[snapshots[-1]] + O.normalise_rows(more, columns,
                                                                                                     "arrow"),
                       "after upgrade and append")
    # The oracles on the current snapshot (a manifest list lakesync wrote over the inline manifests);
    # the table's metadata still holds the inline snapshots, which not every reader accepts.
    misreads = Misreads()
    want_now = want[snapshots[-1]] + O.normalise_rows(more, columns, "arrow")
    location = O.local_path(json.loads(cli.ok("table", "describe", "v1.t", "--json"))["location"])
    metadata_file = sorted(Path(location, "metadata").glob("*.metadata.json"))[-1]
    misreads.read("pyiceberg", lambda: O.arrow_rows(catalog.load_table("v1.t").scan().to_arrow(), columns), want_now,
                  "a table with v1 inline-manifest snapshots")
    misreads.read("DuckDB", lambda: O.duckdb_rows(O.duckdb_connection(), str(metadata_file), columns), want_now,
                  "a table with v1 inline-manifest snapshots")


# ---------------------------------------------------------------------------------------------
# Tables DuckDB writes


def test_apply_and_changelog_on_a_duckdb_written_table(tmp_path):
    """DuckDB 1.5.5 writes Iceberg v2 through a REST catalog (the loopback facade of oracles.py):
    its INSERTs, a merge-on-read DELETE and UPDATE, then `lakesync apply` resolves keys in DuckDB's
    files and merges with its position deletes; DuckDB and pyiceberg read the result, and the
    changelog of every snapshot equals DuckDB's snapshot diffs."""
    pytest.importorskip("flask")
    cli = O.Cli(tmp_path)
    catalog = O.sql_catalog(cli)
    url, stop = O.rest_catalog_over(catalog)
    try:
        con = O.duckdb_connection(httpfs=True)
        O.duckdb_attach_rest(con, url)
        con.execute("CREATE SCHEMA ice.ns")
        con.execute("CREATE TABLE ice.ns.t (id BIGINT, payload VARCHAR, d DATE)")
        con.execute("INSERT INTO ice.ns.t SELECT i, 'p' || i, DATE '2024-01-01' + CAST(i % 40 AS INTEGER) "
                    "FROM range(0, 300) r(i)")
        con.execute("INSERT INTO ice.ns.t SELECT i, 'q' || i, NULL FROM range(300, 400) r(i)")
        con.execute("DELETE FROM ice.ns.t WHERE id % 9 = 0")
        con.execute("UPDATE ice.ns.t SET payload = 'duck' WHERE id BETWEEN 50 AND 70")
    finally:
        stop()
    name = "ns.t"
    columns = columns_of(cli.metadata(name))
    location = catalog.load_table(name).metadata_location
    live = {r[0]: r for r in O.duckdb_rows(O.duckdb_connection(), location, columns)}
    r = random.Random(11)
    changes = []
    for i in r.sample(sorted(live), 120):
        _, payload, d = live[i]
        if r.random() < 0.5:
            changes.append({"id": i, "payload": payload, "d": d, "op": "DELETE", "seq": 1})
            del live[i]
        else:
            changes.append({"id": i, "payload": f"lakesync-{i}", "d": d, "op": "UPDATE_AFTER", "seq": 1})
            live[i] = (i, f"lakesync-{i}", d)
    path = tmp_path / "changes.parquet"
    pq.write_table(pa.Table.from_pylist(changes, schema=pa.schema([
        pa.field("id", pa.int64(), nullable=False), ("payload", pa.string()), ("d", pa.date32()),
        pa.field("op", pa.string(), nullable=False), pa.field("seq", pa.int64(), nullable=False)])), str(path))
    out = json.loads(cli.ok("apply", "--table", name, "--changes", path, "--mode", "merge-on-read",
                            "--change-type-column", "op", "--sequence-number-column", "seq", "--equality-columns",
                            "id", "--delete-strategy", "position", "--sink-id", "s", "--source-position", 1,
                            "--json"))
    [t] = out["tables"]
    assert t["missing_deletes"] == 0, t
    want = list(live.values())
    O.assert_same_rows(rows_by_lakesync(cli, name, columns), want, "lakesync scan after apply")
    location = catalog.load_table(name).metadata_location
    O.assert_same_rows(O.duckdb_rows(O.duckdb_connection(), location, columns), want, "DuckDB after apply")
    O.assert_same_rows(O.arrow_rows(catalog.load_table(name).scan().to_arrow(), columns), want,
                       "pyiceberg after apply")
    # The changelog of every snapshot, DuckDB's and lakesync's, against DuckDB's snapshot diffs.
    con = O.duckdb_connection()
    names = ", ".join(c["name"] for c in columns)

    def duck_at(sid):
        sql = f"SELECT {names} FROM iceberg_scan('{location}', snapshot_from_id => {sid})"
        return O.normalise_rows(con.execute(sql).fetchall(), columns, "duckdb")

    metadata = cli.metadata(name)
    keyed = bool(columns and [s for s in metadata["schemas"] if s["schema-id"] == metadata["current-schema-id"]][0]
                 .get("identifier-field-ids"))
    want_changes = expected_changes(metadata, duck_at, [0] if keyed else None)
    got = changes_by_snapshot(lakesync_changes(cli, name), columns)
    assert set(got) == set(want_changes)
    for sid in want_changes:
        assert got[sid] == want_changes[sid], (f"snapshot {sid}: unexpected {list((got[sid] - want_changes[sid]).items())[:3]}"
                                               f", missing {list((want_changes[sid] - got[sid]).items())[:3]}")
