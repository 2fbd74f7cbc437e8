"""Files of attempts that never committed: recorded before they are written, deleted by the next writer.

A `lakesync apply` killed (SIGKILL) at each writer failpoint leaves files the table does not reference
and its pending-files record; the next apply to the table (by the same sink or any other writer)
deletes exactly those files and the record, keeps everything the table references (including the
files of an attempt killed after its commit landed), and the table holds every change once.
"""

from __future__ import annotations

import decimal
import io
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
import oracles as O  # noqa: E402

pytestmark = O.needs_lakesync

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
fastavro = pytest.importorskip("fastavro")

COLUMNS = [
    {"name": "id", "type": "long", "required": True},
    {"name": "region", "type": "string", "required": False},
    {"name": "amount", "type": "decimal(12, 2)", "required": False},
]
D = decimal.Decimal


def referenced(metadata_location: str) -> set[str]:
    """Local paths of every file a table references (metadata files in its log, every snapshot's
    manifest list, manifests and the files they name)."""
    path = Path(O.local_path(metadata_location))
    metadata = json.loads(path.read_text())
    out = {str(path)} | {O.local_path(e["metadata-file"]) for e in metadata.get("metadata-log", [])}
    for snapshot in metadata.get("snapshots", []):
        out.add(O.local_path(snapshot["manifest-list"]))
        for m in fastavro.reader(io.BytesIO(Path(O.local_path(snapshot["manifest-list"])).read_bytes())):
            out.add(O.local_path(m["manifest_path"]))
            for e in fastavro.reader(io.BytesIO(Path(O.local_path(m["manifest_path"])).read_bytes())):
                out.add(O.local_path(e["data_file"]["file_path"]))
    return out


def unreferenced(cli: O.Cli, table: str) -> tuple[set[str], set[str]]:
    """(files under the table's folder the table does not reference, pending-files records)."""
    [row] = [r for r in O.catalog_rows(cli.catalog_db) if r[2] == table.split(".")[1]]
    location = Path(O.local_path(row[3])).parent.parent
    files = {str(p) for p in location.rglob("*") if p.is_file()}
    records = {f for f in files if "/lakesync-pending/" in f}
    return files - records - referenced(row[3]), records


def batch(path: Path, b: int) -> Path:
    rows = [{"id": 1000 * b + i, "region": ["eu", "us"][i % 2], "amount": D("1.00"), "op": "INSERT", "seq": b}
            for i in range(30)]
    rows += [{"id": b, "region": "eu", "amount": D("7.77"), "op": "UPDATE_AFTER", "seq": b},
             {"id": 50 + b, "region": None, "amount": None, "op": "DELETE", "seq": b}]
    schema = pa.schema([("id", pa.int64()), ("region", pa.string()), ("amount", pa.decimal128(12, 2)),
                        ("op", pa.string()), ("seq", pa.int64())])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


# Partitioned: data and delete files in partition folders, each recorded by location before it is
# created. Unpartitioned: they lie in the data folder and, like the manifests and manifest lists, are
# named by the record's token from its first write on ("after-manifest" kills right after the first
# manifest, with no record write since the attempt began).
@pytest.mark.parametrize("partitioned", [True, False], ids=["partitioned", "unpartitioned"])
@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("failpoint", ["after-data-files", "after-manifest", "before-commit", "after-commit"])
def test_the_next_apply_deletes_what_a_killed_apply_left(tmp_path, failpoint, version, partitioned):
    cli = O.Cli(tmp_path)
    cli.ok("namespace", "create", "db")
    schema = O.schema_file(tmp_path / "schema.yaml", COLUMNS, ["id"])
    cli.ok("table", "create", "db.t", "--schema", schema, *(["--partition", "region"] if partitioned else []),
           "--format-version", str(version))
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"id": i, "region": ["eu", "us"][i % 2], "amount": f"{i}.00"}) + "\n"
                            for i in range(100)))
    cli.ok("table", "append", "db.t", rows)

    def apply(b: int):
        return cli.run("apply", "--table", "db.t", "--changes", batch(tmp_path / f"b{b}.parquet", b),
                       "--change-type-column", "op", "--sequence-number-column", "seq", "--equality-columns", "id",
                       "--sink-id", "s", "--source-position", str(b))

    cli.env["LAKESYNC_FAILPOINT"] = failpoint
    killed = apply(1)
    del cli.env["LAKESYNC_FAILPOINT"]
    assert killed.returncode == -9, f"the failpoint did not fire: {killed.stderr[-2000:]}"
    left, records = unreferenced(cli, "db.t")
    assert len(records) == 1, "the killed attempt left no pending-files record"
    if failpoint != "after-commit":
        assert left, "the kill left no unreferenced file: the test proved nothing"

    # The next run of the sink: batch 1 again (applied now, or skipped when its commit had landed),
    # then batch 2.
    assert apply(1).returncode == 0
    assert apply(2).returncode == 0
    left, records = unreferenced(cli, "db.t")
    assert not left, f"orphans after the next run: {sorted(left)}"
    assert not records, f"pending-files records after the next run: {sorted(records)}"
    got = {r["id"]: r["amount"] for r in cli.scan_jsonl("db.t")}
    want = {i: f"{i}.00" for i in range(100)}
    for b in (1, 2):
        want.update({1000 * b + i: "1.00" for i in range(30)})
        want[b] = "7.77"
        want.pop(50 + b)
    assert got == want
    assert len(cli.scan_jsonl("db.t")) == len(want), "duplicated rows"


def test_a_failed_apply_leaves_no_file(tmp_path):
    """Not a kill: a commit that fails (here: a bad value in an UPDATE_BEFORE row of the second file)
    deletes what it wrote and its record."""
    cli = O.Cli(tmp_path)
    cli.ok("namespace", "create", "db")
    schema = O.schema_file(tmp_path / "schema.yaml", COLUMNS, ["id"])
    cli.ok("table", "create", "db.t", "--schema", schema, "--format-version", "3")
    before = sorted(p for p in cli.warehouse.rglob("*") if p.is_file() and p.name != "catalog.db")
    good = tmp_path / "good.jsonl"
    good.write_text("".join(json.dumps({"id": i, "amount": "1.00", "op": "INSERT", "seq": i}) + "\n" for i in range(50)))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": 3, "amount": "x", "op": "UPDATE_BEFORE", "seq": 99}) + "\n")
    rc, stderr = cli.fail("apply", "--table", "db.t", "--changes", good, "--changes", bad, "--change-type-column", "op",
                          "--sequence-number-column", "seq")
    assert "bad.jsonl" in stderr and "row 1" in stderr, stderr
    after = sorted(p for p in cli.warehouse.rglob("*") if p.is_file() and p.name != "catalog.db")
    assert after == before
