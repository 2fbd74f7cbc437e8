"""`lakesync table compact` and the table's sort order (issue 16): a sort field inside a struct is
honoured, and a bin bigger than the sort memory (`--sort-memory`) is sorted through spilled runs and
comes out sorted and equal, with the temporary files gone afterwards (also after a failure while
merging). Tables and sort orders are made by pyiceberg; the order of the new file is checked with
pyarrow against Python's sort, the rows with pyiceberg and DuckDB against the rows appended."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
import oracles as O  # noqa: E402

pytestmark = O.needs_lakesync

ARROW_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False),
                          pa.field("st", pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])),
                          pa.field("s", pa.string())])


def make_table(cli: O.Cli, name: str, sort_source: str) -> dict:
    """pyiceberg creates the table (v2) with the sort order `sort_source` desc nulls first, then id;
    returns the field ids by name."""
    from pyiceberg.schema import Schema
    from pyiceberg.table.sorting import NullOrder, SortDirection, SortField, SortOrder
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import IntegerType, LongType, NestedField, StringType, StructType

    cli.ok("namespace", "create", name.split(".")[0], "--if-not-exists")
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "st", StructType(NestedField(3, "a", IntegerType(), required=False),
                                        NestedField(4, "b", StringType(), required=False)), required=False),
        NestedField(5, "s", StringType(), required=False))
    source = {"st.a": 3, "s": 5}[sort_source]
    order = SortOrder(SortField(source_id=source, transform=IdentityTransform(), direction=SortDirection.DESC,
                                null_order=NullOrder.NULLS_FIRST),
                      SortField(source_id=1, transform=IdentityTransform(), direction=SortDirection.ASC,
                                null_order=NullOrder.NULLS_LAST))
    table = O.sql_catalog(cli).create_table(name, schema=schema, sort_order=order)
    return {f: table.schema().find_field(f).field_id for f in ("id", "st", "st.a", "s")}


def rows_for(ids: range, rng: random.Random) -> list[dict]:
    out = []
    for i in ids:
        st = None if rng.random() < 0.1 else {"a": None if rng.random() < 0.1 else rng.randint(-40, 40),
                                              "b": f"b{rng.randint(0, 9)}"}
        out.append({"id": i, "st": st, "s": None if rng.random() < 0.05 else f"s-{rng.randint(0, 10**6):07d}-{i}"})
    return out


def append(cli: O.Cli, name: str, rows: list[dict]) -> None:
    path = cli.workdir / f"in-{len(list(cli.workdir.glob('in-*')))}.parquet"
    pq.write_table(pa.Table.from_pylist(rows, ARROW_SCHEMA), path)
    cli.ok("table", "append", name, path)


def canonical(rows) -> list[tuple]:
    return sorted((r["id"], None if r["st"] is None else (r["st"]["a"], r["st"]["b"]), r["s"]) for r in rows)


def check_readers(cli: O.Cli, name: str, rows: list[dict]) -> None:
    want = canonical(rows)
    table = O.sql_catalog(cli).load_table(name)
    assert canonical(table.scan().to_arrow().to_pylist()) == want, "pyiceberg"
    con = O.duckdb_connection()
    got = con.execute(f"SELECT id, st, s FROM iceberg_scan('{table.metadata_location}')").fetchall()
    assert canonical({"id": i, "st": st, "s": s} for i, st, s in got) == want, "DuckDB"


def compacted_files(cli: O.Cli, name: str) -> list[dict]:
    m = cli.metadata(name)
    entries = O.manifest_entries(m)
    return [e["data_file"] for e in entries
            if e["data_file"]["content"] == 0 and e["snapshot_id"] == m["current-snapshot-id"]]


def assert_sorted(path: str, before) -> None:
    """Each row of the file may come right before the next: `before(r, next)` by the sort order."""
    got = pq.read_table(O.local_path(path)).to_pylist()
    for n, (r, nxt) in enumerate(zip(got, got[1:])):
        assert before(r, nxt), f"rows {n} and {n + 1} of the compacted file are out of order: {r} {nxt}"


def desc_nulls_first_then_id(x, y, ida, idb) -> bool:
    if x is None or y is None:
        return x is None and (y is not None or ida <= idb)
    return x > y or (x == y and ida <= idb)


def st_a(r):  # a null struct makes st.a null
    return None if r["st"] is None else r["st"]["a"]


def test_a_sort_field_inside_a_struct_is_honoured(tmp_path):
    cli = O.Cli(tmp_path)
    name = "db.nested"
    ids = make_table(cli, name, "st.a")
    m = cli.metadata(name)
    [order] = [o for o in m["sort-orders"] if o["order-id"] == m["default-sort-order-id"]]
    assert order["fields"][0]["source-id"] == ids["st.a"] != ids["st"], order  # the premise: a nested field
    rng = random.Random(16)
    rows = []
    for k in range(4):
        batch = rows_for(range(k * 300, (k + 1) * 300), rng)
        append(cli, name, batch)
        rows += batch
    cli.ok("table", "delete", name, "--where", "id < 100")
    rows = [r for r in rows if r["id"] >= 100]
    done = json.loads(cli.ok("table", "compact", name, "--json"))
    assert done["rewritten_data_files"] == 4 and done["added_data_files"] == 1, done
    [f] = compacted_files(cli, name)
    assert f["sort_order_id"] == m["default-sort-order-id"], f
    assert_sorted(f["file_path"], lambda r, n: desc_nulls_first_then_id(st_a(r), st_a(n), r["id"], n["id"]))
    check_readers(cli, name, rows)


def test_a_bin_bigger_than_the_sort_memory_is_sorted_through_spilled_runs(tmp_path):
    spill = tmp_path / "tmp"
    spill.mkdir()
    cli = O.Cli(tmp_path, env={"TMPDIR": str(spill)})
    name = "db.big"
    make_table(cli, name, "s")
    rng = random.Random(7)
    rows = []
    for k in range(3):
        batch = rows_for(range(k * 8000, (k + 1) * 8000), rng)
        append(cli, name, batch)
        rows += batch
    before = O.sql_catalog(cli).load_table(name).metadata_location

    # Merging fails (failpoint): nothing committed, the spill files are gone.
    failing = O.Cli(tmp_path, env={"TMPDIR": str(spill), "LAKESYNC_FAILPOINTS": "compact.sort-merge=1"})
    code, err = failing.fail("table", "compact", name, "--sort-memory", "65536")
    assert "compact.sort-merge" in err, err
    assert O.sql_catalog(cli).load_table(name).metadata_location == before
    assert O.list_files(spill) == [], "temporary files left after the failure"

    result = json.loads(cli.ok("table", "compact", name, "--sort-memory", "65536", "--json"))
    assert result["rewritten_data_files"] == 3 and result["written_records"] == len(rows), result
    assert result["sort_spilled_runs"] > 1, result  # the bin (24,000 rows) did not fit: sorted in runs
    assert O.list_files(spill) == [], "temporary files left after the compaction"
    files = compacted_files(cli, name)
    assert len(files) == 1, files
    assert_sorted(files[0]["file_path"], lambda r, n: desc_nulls_first_then_id(r["s"], n["s"], r["id"], n["id"]))
    check_readers(cli, name, rows)
