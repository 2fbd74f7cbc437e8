"""End-to-end paths the other suites did not cover (issue 19), each checked with an independent reader:

- nested structs, lists and maps through `lakesync apply` (v2 position deletes, v3 deletion vectors)
  and through a Delta CDF job, read back with pyiceberg;
- a v3 table with equality deletes (apply --delete-strategy equality), read by DuckDB (pyiceberg 0.12
  cannot read equality deletes);
- `table upgrade` of a v2 table that has position deletes, then new deletes as deletion vectors,
  read with pyiceberg and the delete files inspected with fastavro;
- timestamptz input with non-UTC offsets (JSON Lines and CSV), read with pyiceberg;
- row lineage (v3 next-row-id / first-row-id) across appends and apply, checked with fastavro on the
  manifest lists and with the metadata JSON.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import oracles as O  # noqa: E402

pytestmark = O.needs_lakesync
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
fastavro = pytest.importorskip("fastavro")
pytest.importorskip("pyiceberg")

from test_tables_written_by_lakesync import COLUMNS as ALL_COLUMNS, generate_rows  # noqa: E402

NESTED = ["id", "st", "li", "ls", "mp"]
NESTED_COLUMNS = [c for c in ALL_COLUMNS if c["name"] in NESTED]
_INDEX = [next(k for k, c in enumerate(ALL_COLUMNS) if c["name"] == n) for n in NESTED]
CHANGE_COLUMNS = NESTED_COLUMNS + [{"name": "op", "type": "string", "required": True},
                                   {"name": "seq", "type": "long", "required": True}]


def nested_rows(n: int, seed: int, first_id: int = 0) -> list[tuple]:
    return [tuple(r[k] for k in _INDEX) for r in generate_rows(n, seed=seed, first_id=first_id)]


def pyiceberg_rows(cli: O.Cli, table: str, columns: list[dict]) -> list[tuple]:
    arrow = O.sql_catalog(cli).load_table(table).scan().to_arrow()
    return O.arrow_rows(arrow, columns)


def create(cli: O.Cli, tmp_path: Path, name: str, columns: list[dict], version: int, key: str = "id") -> None:
    cli.ok("namespace", "create", name.split(".")[0])
    schema = O.schema_file(tmp_path / f"{name}.schema.yaml", columns, [key])
    cli.ok("table", "create", name, "--schema", schema, "--format-version", str(version))


# ---------------------------------------------------------------------------------------------
# Nested types through apply


@pytest.mark.parametrize("version", [2, 3])
def test_nested_types_through_apply(tmp_path, version):
    cli = O.Cli(tmp_path)
    create(cli, tmp_path, "db.nested", NESTED_COLUMNS, version)
    base = nested_rows(120, seed=1)
    model = {r[0]: r for r in base}
    changes = [r + ("INSERT", 0) for r in base]
    path = O.write_parquet(tmp_path / "c1.parquet", changes, CHANGE_COLUMNS)
    cli.ok("apply", "--table", "db.nested", "--changes", path, "--change-type-column", "op",
           "--sequence-number-column", "seq")
    # Updates that change every nested column (new values from another seed), deletes, new keys.
    fresh = nested_rows(60, seed=2)
    changes = []
    for k, r in enumerate(fresh[:40]):
        key = base[k * 3][0]
        changes.append(model[key] + ("UPDATE_BEFORE", 1))
        model[key] = (key,) + r[1:]
        changes.append(model[key] + ("UPDATE_AFTER", 1))
    for r in base[1:60:4]:
        if r[0] in model and all(r[0] != base[k * 3][0] for k in range(40)):
            changes.append(model.pop(r[0]) + ("DELETE", 1))
    for r in nested_rows(20, seed=3, first_id=10_000):
        model[r[0]] = r
        changes.append(r + ("INSERT", 1))
    path = O.write_parquet(tmp_path / "c2.parquet", changes, CHANGE_COLUMNS)
    cli.ok("apply", "--table", "db.nested", "--changes", path, "--change-type-column", "op",
           "--sequence-number-column", "seq")
    want = O.normalise_rows(list(model.values()), NESTED_COLUMNS, "python")
    check_nested(cli, "db.nested", want, f"a v{version} table with nested columns after apply")


def check_nested(cli: O.Cli, table: str, want: list[tuple], what: str) -> None:
    # pyiceberg 0.12 reads a null list<struct> as an empty list (oracles.reader_view); DuckDB reads
    # the nulls the files hold.
    O.assert_same_rows(pyiceberg_rows(cli, table, NESTED_COLUMNS), O.reader_view(want, NESTED_COLUMNS, "pyiceberg"),
                       f"pyiceberg reading {what}")
    metadata_location = O.sql_catalog(cli).load_table(table).metadata_location
    O.assert_same_rows(O.duckdb_rows(O.duckdb_connection(), metadata_location, NESTED_COLUMNS), want,
                       f"DuckDB reading {what}")
    O.assert_same_rows(O.normalise_rows(cli.scan_jsonl(table), NESTED_COLUMNS, "jsonl"), want,
                       f"lakesync scan of {what}")


def test_nested_types_through_a_delta_job(tmp_path):
    deltalake = pytest.importorskip("deltalake")
    source = tmp_path / "delta"
    rows = nested_rows(80, seed=4)
    deltalake.write_deltalake(str(source), O.arrow_table(rows, NESTED_COLUMNS),
                              configuration={"delta.enableChangeDataFeed": "true"})
    deltalake.write_deltalake(str(source), O.arrow_table(nested_rows(30, seed=5, first_id=5_000), NESTED_COLUMNS),
                              mode="append")
    deltalake.DeltaTable(str(source)).delete("id % 7 = 0")
    job = O.write_yaml(tmp_path / "job.yaml", {
        "name": "nested-job",
        "source": {"type": "delta_lake_cdc", "table": str(source), "start_version": 0, "initial_snapshot": True},
        "sink": {"table": "db.nested_job", "equality_columns": ["id"], "table_properties": {"format-version": "3"}}})
    cli = O.Cli(tmp_path)
    cli.ok("run", job, "--once")
    deltalake.write_deltalake(str(source), O.arrow_table(nested_rows(10, seed=6, first_id=9_000), NESTED_COLUMNS),
                              mode="append")
    deltalake.DeltaTable(str(source)).delete("id % 5 = 1")
    cli.ok("run", job, "--once")
    want = O.arrow_rows(deltalake.DeltaTable(str(source)).to_pyarrow_table(), NESTED_COLUMNS)
    assert len(want) > 80
    check_nested(cli, "db.nested_job", want, "the Delta job's target (against deltalake reading the source)")


# ---------------------------------------------------------------------------------------------
# v3 + equality deletes

FLAT = [{"name": "id", "type": "long", "required": True}, {"name": "name", "type": "string", "required": False},
        {"name": "qty", "type": "int", "required": False}]
FLAT_CHANGES = FLAT + [{"name": "op", "type": "string", "required": True}]


def test_v3_equality_deletes_read_by_duckdb(tmp_path):
    cli = O.Cli(tmp_path)
    create(cli, tmp_path, "db.eq", FLAT, 3)
    model = {i: (i, f"n{i}", i % 13) for i in range(300)}
    cli.ok("table", "append", "db.eq", O.write_parquet(tmp_path / "base.parquet", list(model.values()), FLAT))
    changes = []
    for i in range(0, 300, 7):
        changes.append(model.pop(i) + ("DELETE",))
    for i in range(1, 300, 11):
        if i in model:
            model[i] = (i, f"updated{i}", -i)
            changes.append(model[i] + ("UPDATE_AFTER",))
    for i in range(1000, 1010):
        model[i] = (i, None, None)
        changes.append(model[i] + ("INSERT",))
    out = cli.ok("apply", "--table", "db.eq", "--changes",
                 O.write_parquet(tmp_path / "c.parquet", changes, FLAT_CHANGES), "--change-type-column", "op",
                 "--delete-strategy", "equality", "--upsert", "--json")
    [t] = json.loads(out)["tables"]
    assert t["delete_files"] >= 1, t
    summary = cli.current_snapshot("db.eq")["summary"]
    assert int(summary.get("added-equality-delete-files", 0)) >= 1, summary
    assert "added-dvs" not in summary, summary
    want = O.normalise_rows(list(model.values()), FLAT, "python")
    con = O.duckdb_connection()
    got = O.duckdb_rows(con, O.sql_catalog(cli).load_table("db.eq").metadata_location, FLAT)
    O.assert_same_rows(got, want, "DuckDB reading a v3 table with equality deletes")
    O.assert_same_rows(O.normalise_rows(cli.scan_jsonl("db.eq"), FLAT, "jsonl"), want, "lakesync scan")


# ---------------------------------------------------------------------------------------------
# table upgrade with existing position deletes, then deletion vectors


def live_delete_files(cli: O.Cli, table: str) -> list[dict]:
    """The live delete-file entries of the current snapshot (fastavro on the manifest list and manifests)."""
    snapshot = cli.current_snapshot(table)
    out = []
    with open(O.local_path(snapshot["manifest-list"]), "rb") as f:
        manifests = list(fastavro.reader(f))
    for m in manifests:
        if m.get("content", 0) != 1:
            continue
        with open(O.local_path(m["manifest_path"]), "rb") as f:
            for e in fastavro.reader(f):
                if e["status"] != 2:
                    out.append(e["data_file"])
    return out


def upgraded_table(tmp_path) -> tuple[O.Cli, dict]:
    """A v2 table with position deletes (ids 0-19 deleted), upgraded to v3."""
    cli = O.Cli(tmp_path)
    create(cli, tmp_path, "db.up", FLAT, 2)
    rows = {i: (i, f"n{i}", i % 13) for i in range(200)}
    cli.ok("table", "append", "db.up", O.write_parquet(tmp_path / "base.parquet", list(rows.values()), FLAT))
    cli.ok("table", "delete", "db.up", "--where", "id < 20")
    for i in range(20):
        rows.pop(i)
    before = live_delete_files(cli, "db.up")
    assert before and all(d["file_format"].upper() == "PARQUET" for d in before), before
    cli.ok("table", "upgrade", "db.up", "--format-version", "3")
    assert cli.metadata("db.up")["format-version"] == 3
    return cli, rows


def test_upgrade_keeps_the_position_deletes(tmp_path):
    cli, rows = upgraded_table(tmp_path)
    want = O.normalise_rows(list(rows.values()), FLAT, "python")
    O.assert_same_rows(pyiceberg_rows(cli, "db.up", FLAT), want, "pyiceberg right after the upgrade")
    O.assert_same_rows(O.normalise_rows(cli.scan_jsonl("db.up"), FLAT, "jsonl"), want, "lakesync scan")


def test_new_deletion_vectors_after_the_upgrade_carry_the_position_deletes(tmp_path):
    cli, rows = upgraded_table(tmp_path)
    # New deletes in the same data file: one deletion vector, which must carry the 20 earlier positions.
    cli.ok("table", "delete", "db.up", "--where", "id >= 190")
    for i in range(190, 200):
        rows.pop(i)
    dvs = [d for d in live_delete_files(cli, "db.up") if d["file_format"].upper() == "PUFFIN"]
    assert len(dvs) == 1, dvs
    assert dvs[0]["record_count"] == 30, f"the DV holds {dvs[0]['record_count']} positions, not 20 + 10"
    want = O.normalise_rows(list(rows.values()), FLAT, "python")
    O.assert_same_rows(pyiceberg_rows(cli, "db.up", FLAT), want, "pyiceberg after deletes as DVs")
    O.assert_same_rows(O.normalise_rows(cli.scan_jsonl("db.up"), FLAT, "jsonl"), want, "lakesync scan")


# ---------------------------------------------------------------------------------------------
# timestamptz with non-UTC offsets

TSTZ = [{"name": "id", "type": "long", "required": True}, {"name": "at", "type": "timestamptz", "required": False}]
OFFSETS = ["2024-03-10T01:30:00+05:30", "2024-03-10T01:30:00-08:00", "2024-03-09T20:00:00Z",
           "1969-12-31T23:59:59.999999+00:00", "2000-02-29T00:00:00.5-03:30", "2038-01-19T03:14:08+14:00",
           "1970-01-01T00:00:00-12:00"]


def _utc(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(dt.timezone.utc)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "apply"])
def test_timestamptz_with_offsets(tmp_path, fmt):
    cli = O.Cli(tmp_path)
    create(cli, tmp_path, "db.tz", TSTZ, 3)
    if fmt == "csv":
        path = tmp_path / "in.csv"
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["id", "at"])
            w.writerows(enumerate(OFFSETS))
    else:
        path = tmp_path / "in.jsonl"
        path.write_text("".join(json.dumps({"id": k, "at": v, **({"op": "INSERT"} if fmt == "apply" else {})}) + "\n"
                                for k, v in enumerate(OFFSETS)))
    if fmt == "apply":
        cli.ok("apply", "--table", "db.tz", "--changes", path, "--change-type-column", "op")
    else:
        cli.ok("table", "append", "db.tz", path)
    arrow = O.sql_catalog(cli).load_table("db.tz").scan().to_arrow()
    got = {r["id"]: r["at"] for r in arrow.to_pylist()}
    want = {k: _utc(v) for k, v in enumerate(OFFSETS)}
    assert got == want
    scanned = {r["id"]: _utc(r["at"]) for r in cli.scan_jsonl("db.tz")}
    assert scanned == want


# ---------------------------------------------------------------------------------------------
# Row lineage


def test_row_lineage_across_appends_and_apply(tmp_path):
    cli = O.Cli(tmp_path)
    create(cli, tmp_path, "db.rl", FLAT, 3)
    assert cli.metadata("db.rl").get("next-row-id", 0) == 0
    added = []
    first = 0
    for n, size in enumerate([10, 25, 7]):
        rows = [(first + i, f"r{first + i}", i) for i in range(size)]
        cli.ok("table", "append", "db.rl", O.write_parquet(tmp_path / f"a{n}.parquet", rows, FLAT))
        first += size
        added.append(size)
    changes = [(i, f"u{i}", 0, "UPDATE_AFTER") for i in range(0, 12, 3)] + [(500, "new", 1, "INSERT")]
    cli.ok("apply", "--table", "db.rl", "--changes", O.write_parquet(tmp_path / "c.parquet", changes, FLAT_CHANGES),
           "--change-type-column", "op", "--upsert")
    metadata = cli.metadata("db.rl")
    snapshots = sorted(metadata["snapshots"], key=lambda s: s["sequence-number"])
    assert len(snapshots) == 4
    next_row_id = 0
    for s in snapshots:
        # Each snapshot's rows are numbered from where the table was; added-rows counts them.
        assert s["first-row-id"] == next_row_id, s
        with open(O.local_path(s["manifest-list"]), "rb") as f:
            entries = list(fastavro.reader(f))
        new = [m for m in entries if m["added_snapshot_id"] == s["snapshot-id"] and m.get("content", 0) == 0]
        assigned = sorted((m["first_row_id"], m["added_rows_count"] + m["existing_rows_count"]) for m in new)
        cursor = s["first-row-id"]
        for start, count in assigned:  # new data manifests get consecutive ranges from first-row-id
            assert start == cursor, (assigned, s)
            cursor += count
        assert cursor - s["first-row-id"] <= s["added-rows"], (assigned, s)
        next_row_id += s["added-rows"]
    assert [s["added-rows"] for s in snapshots[:3]] == added
    assert snapshots[3]["added-rows"] == 5  # four updated rows rewritten and one insert
    assert metadata["next-row-id"] == next_row_id == sum(added) + 5
