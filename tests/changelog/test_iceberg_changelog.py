"""`lakesync changes --source iceberg` against independently computed changelogs.

Tables are written by pyiceberg (appends, copy-on-write deletes, overwrites, upserts), by DuckDB's
iceberg extension (merge-on-read DELETE/UPDATE: v2 position delete files, v3 deletion vectors) and by
`lakesync apply` (position deletes on v2 and v3, equality deletes). The expected change set of each
snapshot is the multiset difference of the table read at its parent and at the snapshot by pyiceberg
or DuckDB (DuckDB where equality deletes are involved, which pyiceberg cannot read), paired into
UPDATE_BEFORE/UPDATE_AFTER by key when the table has identifier fields.

Streaming: a writer commits while `changes --follow --poll-interval 1` runs; every change is seen
exactly once and in order, and a reader killed with SIGKILL resumes from its --position-file without
loss or duplicates.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
import oracles as O  # noqa: E402

pytestmark = O.needs_lakesync

META = ["_change_type", "_change_ordinal", "_commit_snapshot_id", "_commit_snapshot_sequence_number",
        "_commit_timestamp"]


# ---------------------------------------------------------------------------------------------
# Reading lakesync's changelog


def changes(cli: O.Cli, table: str, *args) -> list[dict]:
    out = cli.ok("changes", "--source", "iceberg", "--table", table, "--format", "jsonl", *args)
    return [json.loads(line) for line in out.splitlines()]


def by_snapshot(rows: list[dict], columns: list[str]) -> dict[int, collections.Counter]:
    out: dict[int, collections.Counter] = collections.defaultdict(collections.Counter)
    for r in rows:
        out[r["_commit_snapshot_id"]][(r["_change_type"],) + tuple(r[c] for c in columns)] += 1
    return dict(out)


# ---------------------------------------------------------------------------------------------
# The oracle: diff consecutive snapshots read by an independent reader


def expected_change_set(before: list[tuple], after: list[tuple], key_index: list[int] | None) -> collections.Counter:
    """Multiset difference of two table states, updates paired by key (keys unique per state)."""
    b, a = collections.Counter(before), collections.Counter(after)
    deleted, inserted = b - a, a - b
    out: collections.Counter = collections.Counter()
    if key_index is None:
        for row, n in deleted.items():
            out[("DELETE",) + row] += n
        for row, n in inserted.items():
            out[("INSERT",) + row] += n
        return out
    key = lambda row: tuple(row[i] for i in key_index)  # noqa: E731
    inserted_keys = collections.Counter(key(r) for r in inserted.elements())
    deleted_keys = collections.Counter(key(r) for r in deleted.elements())
    for row in deleted.elements():
        out[("UPDATE_BEFORE" if inserted_keys[key(row)] else "DELETE",) + row] += 1
    for row in inserted.elements():
        out[("UPDATE_AFTER" if deleted_keys[key(row)] else "INSERT",) + row] += 1
    return out


def lineage(metadata: dict) -> list[dict]:
    """Main-branch snapshots, oldest first."""
    by_id = {s["snapshot-id"]: s for s in metadata["snapshots"]}
    out, sid = [], metadata.get("current-snapshot-id")
    while sid is not None and sid in by_id and sid != -1:
        out.append(by_id[sid])
        sid = by_id[sid].get("parent-snapshot-id")
    return out[::-1]


def expected_changelog(metadata: dict, read_at, key_index) -> dict[int, collections.Counter]:
    """read_at(snapshot_id or None) -> rows. Replace snapshots and empty change sets leave no entry."""
    out = {}
    previous = []
    for snap in lineage(metadata):
        rows = read_at(snap["snapshot-id"])
        if snap["summary"]["operation"] != "replace":
            want = expected_change_set(previous, rows, key_index)
            if want:
                out[snap["snapshot-id"]] = want
        previous = rows
    return out


def pyiceberg_reader(tbl, columns: list[str]):
    def read(sid):
        arrow = tbl.scan(snapshot_id=sid, selected_fields=tuple(columns)).to_arrow()
        return [tuple(r[c] for c in columns) for r in arrow.to_pylist()]
    return read


def duckdb_reader(metadata_location: str, columns: list[str]):
    con = O.duckdb_connection()
    select = ", ".join(columns)

    def read(sid):
        sql = f"SELECT {select} FROM iceberg_scan('{metadata_location}', snapshot_from_id => {sid})"
        return [tuple(r) for r in con.execute(sql).fetchall()]
    return read


def assert_changelog(got: dict, want: dict, what: str) -> None:
    assert set(got) == set(want), (
        f"{what}: snapshots with changes differ: lakesync {sorted(got)} vs oracle {sorted(want)}")
    for sid in want:
        if got[sid] != want[sid]:
            extra, missing = got[sid] - want[sid], want[sid] - got[sid]
            raise AssertionError(f"{what}: snapshot {sid}: unexpected {list(extra.items())[:5]}, "
                                 f"missing {list(missing.items())[:5]}")


def check_ordering(rows: list[dict]) -> None:
    """Snapshots come in sequence-number order; ordinals count the snapshots read, from 0."""
    seqs = [r["_commit_snapshot_sequence_number"] for r in rows]
    assert seqs == sorted(seqs)
    ordinals = [r["_change_ordinal"] for r in rows]
    assert ordinals == sorted(ordinals)


# ---------------------------------------------------------------------------------------------
# Tables written by pyiceberg


def pyiceberg_table(cli: O.Cli, name: str, with_key: bool):
    import pyarrow as pa
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    catalog = O.sql_catalog(cli)
    ns = name.split(".")[0]
    try:
        catalog.create_namespace(ns)
    except Exception:  # noqa: BLE001 - exists
        pass
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "v", StringType()),
                    identifier_field_ids=[1] if with_key else [])
    tbl = catalog.create_table(name, schema=schema, properties={"format-version": "2"})
    arrow_schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])
    return catalog, tbl, arrow_schema


@pytest.mark.parametrize("with_key", [True, False], ids=["keyed", "keyless"])
def test_pyiceberg_appends_deletes_overwrites_upserts(tmp_path, with_key):
    pytest.importorskip("pyiceberg")
    import pyarrow as pa
    from pyiceberg.expressions import EqualTo, GreaterThanOrEqual, LessThan

    cli = O.Cli(tmp_path)
    name = "ns.py_keyed" if with_key else "ns.py_keyless"
    catalog, tbl, schema = pyiceberg_table(cli, name, with_key)
    rows = lambda pairs: pa.Table.from_pylist([{"id": i, "v": v} for i, v in pairs], schema)  # noqa: E731
    tbl.append(rows([(i, f"a{i}") for i in range(0, 200)]))
    tbl.append(rows([(i, f"b{i}") for i in range(200, 300)]))
    tbl.delete(LessThan("id", 20))                       # copy-on-write: rewrites the first file
    tbl.overwrite(rows([(i, f"o{i}") for i in range(250, 260)]), overwrite_filter=GreaterThanOrEqual("id", 250))
    tbl.delete(EqualTo("id", 100))
    if with_key:
        tbl.upsert(rows([(5, "new"), (30, "u30"), (31, "a31"), (400, "n400")]))  # 31 unchanged
    tbl = catalog.load_table(name)

    cols = ["id", "v"]
    got_rows = changes(cli, name)
    check_ordering(got_rows)
    got = by_snapshot(got_rows, cols)
    metadata = cli.metadata(name)
    want = expected_changelog(metadata, pyiceberg_reader(tbl, cols), [0] if with_key else None)
    assert len(want) >= 5
    assert_changelog(got, want, f"pyiceberg-written {name}")
    # pyiceberg commits an overwrite or upsert as a delete snapshot then an append snapshot, so its
    # updates are a DELETE and a later INSERT (pairing happens only within one snapshot). The
    # copy-on-write delete of 20 rows from a 200-row file must show as exactly 20 DELETEs.
    kinds = {k[0] for c in got.values() for k in c}
    assert kinds == {"INSERT", "DELETE"}
    cow = got[lineage(metadata)[2]["snapshot-id"]]
    assert sum(cow.values()) == 20 and {k[0] for k in cow} == {"DELETE"}

    # Bounds: start and end inclusive (Beam's meaning), by id and by time.
    snaps = lineage(metadata)
    s1, s2, s3 = (s["snapshot-id"] for s in snaps[1:4])
    part = by_snapshot(changes(cli, name, "--start-snapshot-id", s2, "--end-snapshot-id", s3), cols)
    assert set(part) == {s2, s3} & set(want)
    for sid in part:
        assert part[sid] == want[sid]
    lo, hi = snaps[2]["timestamp-ms"], snaps[3]["timestamp-ms"]
    by_time = by_snapshot(changes(cli, name, "--start-timestamp", lo, "--end-timestamp", hi), cols)
    assert set(by_time) == {s["snapshot-id"] for s in snaps if lo <= s["timestamp-ms"] <= hi} & set(want)
    assert {s2, s3} & set(want) <= set(by_time)
    # --columns picks metadata columns in order.
    picked = changes(cli, name, "--columns", "_commit_snapshot_sequence_number,_change_type", "--end-snapshot-id",
                     snaps[0]["snapshot-id"])
    assert list(picked[0]) == ["id", "v", "_commit_snapshot_sequence_number", "_change_type"]
    assert len(picked) == 200


def test_range_and_flag_errors(tmp_path):
    pytest.importorskip("pyiceberg")
    import pyarrow as pa

    cli = O.Cli(tmp_path)
    name = "ns.errs"
    catalog, tbl, schema = pyiceberg_table(cli, name, True)
    tbl.append(pa.Table.from_pylist([{"id": 1, "v": "a"}], schema))
    tbl.append(pa.Table.from_pylist([{"id": 2, "v": "a"}], schema))
    tbl.append(pa.Table.from_pylist([{"id": 3, "v": "a"}], schema))
    first, second, third = (s["snapshot-id"] for s in lineage(cli.metadata(name)))
    base = ["changes", "--source", "iceberg", "--table", name, "--format", "jsonl"]
    code, err = cli.fail(*base, "--start-snapshot-id", 42)
    assert code == O.EXIT_NOT_FOUND and "42" in err
    code, err = cli.fail(*base, "--start-snapshot-id", third, "--end-snapshot-id", second)
    assert code == O.EXIT_INVALID and "not an ancestor" in err
    code, err = cli.fail(*base, "--start-version", 1)
    assert code == O.EXIT_INVALID and "--start-version" in err
    code, err = cli.fail(*base, "--columns", "_commit_version")
    assert code == O.EXIT_INVALID and "_commit_version" in err
    code, err = cli.fail(*base, "--starting-strategy", "latest", "--start-snapshot-id", first)
    assert code == O.EXIT_INVALID and "--starting-strategy" in err
    code, err = cli.fail(*base, "--poll-interval", 5)
    assert code == O.EXIT_INVALID and "--follow" in err
    code, err = cli.fail("changes", "--source", "iceberg", "--table", name, "--follow", "--format", "csv")
    assert code == O.EXIT_INVALID and "jsonl" in err
    code, err = cli.fail(*base, "--start-timestamp", "yesterday")
    assert code == O.EXIT_INVALID and "yesterday" in err
    code, err = cli.fail("changes", "--source", "iceberg", "--table", "ns.nope")
    assert code == O.EXIT_NOT_FOUND
    # Format version 1 has no sequence numbers.
    v1 = catalog.create_table("ns.v1", schema=tbl.schema(), properties={"format-version": "1"})
    v1.append(pa.Table.from_pylist([{"id": 1, "v": "a"}], schema))
    code, err = cli.fail("changes", "--source", "iceberg", "--table", "ns.v1")
    assert code == O.EXIT_INVALID and "format version 1" in err
    # Expired history: after expiring the first snapshot, reading from the start is refused.
    tbl = catalog.load_table(name)
    tbl.maintenance.expire_snapshots().by_id(first).commit()  # pyiceberg 0.12 (pinned) can
    code, err = cli.fail(*base)
    assert code == O.EXIT_INVALID and "expired" in err
    code, err = cli.fail(*base, "--start-snapshot-id", second)  # inclusive: needs the expired parent
    assert code == O.EXIT_INVALID and "expired" in err
    # Starting at the child of the oldest retained snapshot works.
    assert [r["id"] for r in changes(cli, name, "--start-snapshot-id", third)] == [3]


# ---------------------------------------------------------------------------------------------
# Tables written by DuckDB (merge-on-read)


@pytest.mark.parametrize("version", [2, 3])
def test_duckdb_merge_on_read(tmp_path, version):
    pytest.importorskip("flask")
    cli = O.Cli(tmp_path)
    name = "ns.duck"
    catalog = O.sql_catalog(cli)
    if version == 3:
        cli.ok("namespace", "create", "ns")
        schema = O.schema_file(tmp_path / "schema.yaml", [
            {"name": "id", "type": "long", "required": True}, {"name": "v", "type": "string"},
            {"name": "n", "type": "int"}])
        cli.ok("table", "create", name, "--schema", schema, "--format-version", 3, "--partition", "bucket(id, 3)")
    url, stop = O.rest_catalog_over(catalog)
    try:
        con = O.duckdb_connection(httpfs=True)
        O.duckdb_attach_rest(con, url)
        if version == 2:
            con.execute("CREATE SCHEMA ice.ns")
            con.execute(f"CREATE TABLE ice.{name} (id BIGINT, v VARCHAR, n INTEGER)")
        con.execute(f"INSERT INTO ice.{name} SELECT i, 'a' || i, i % 10 FROM range(0, 500) t(i)")
        con.execute(f"INSERT INTO ice.{name} SELECT i, 'b' || i, i % 10 FROM range(500, 800) t(i)")
        con.execute(f"DELETE FROM ice.{name} WHERE id % 7 = 0")
        con.execute(f"UPDATE ice.{name} SET v = 'upd', n = n + 100 WHERE id BETWEEN 100 AND 160")
        con.execute(f"DELETE FROM ice.{name} WHERE id % 5 = 1")  # files that already have deletes
        con.execute(f"UPDATE ice.{name} SET n = -1 WHERE id BETWEEN 600 AND 620")
    finally:
        stop()
    metadata = cli.metadata(name)
    assert metadata["format-version"] == version
    formats = {e["data_file"]["file_format"].upper() for e in O.manifest_entries(metadata)
               if e["data_file"]["content"] == 1}
    assert formats == ({"PUFFIN"} if version == 3 else {"PARQUET"}), formats

    cols = ["id", "v", "n"]
    location = catalog.load_table(name).metadata_location
    want = expected_changelog(metadata, duckdb_reader(location, cols), None)  # no identifier fields
    got_rows = changes(cli, name)
    check_ordering(got_rows)
    assert_changelog(by_snapshot(got_rows, cols), want, f"DuckDB-written v{version}")
    # Default output: the table columns, then all five metadata columns in the documented order.
    assert list(got_rows[0]) == cols + META


# ---------------------------------------------------------------------------------------------
# Tables written by lakesync apply


def write_change_file(path: Path, changes_: list[tuple]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(
        [{"id": i, "v": v, "op": op, "seq": s} for (op, i, v, s) in changes_],
        pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string()),
                   pa.field("op", pa.string(), nullable=False), pa.field("seq", pa.int64(), nullable=False)]))
    pq.write_table(table, path)
    return path


def apply(cli: O.Cli, name: str, path: Path, version: int, strategy: str, position: int) -> None:
    cli.ok("apply", "--table", name, "--changes", path, "--mode", "merge-on-read", "--change-type-column", "op",
           "--sequence-number-column", "seq", "--equality-columns", "id",
           "--table-properties", f"format-version={version}", "--delete-strategy", strategy,
           "--sink-id", "s", "--source-position", position, "--json")


@pytest.mark.parametrize("version,strategy", [(2, "position"), (3, "position"), (2, "equality")])
def test_lakesync_apply_written(tmp_path, version, strategy):
    import random

    cli = O.Cli(tmp_path)
    cli.ok("namespace", "create", "ns")
    name = "ns.applied"
    r = random.Random(version * 10 + len(strategy))
    live: dict[int, str] = {}
    for position in range(1, 6):
        # Distinct keys per commit, kinds consistent with what is live: keys stay unique in the table,
        # so the oracle's pairing by key is unambiguous.
        unique = []
        for k, i in enumerate(r.sample(range(400), 300)):
            if i in live and r.random() < 0.3:
                unique.append(("DELETE", i, live.pop(i), position))
            else:
                v = f"p{position}-{k}"
                unique.append(("UPDATE_AFTER" if i in live else "INSERT", i, v, position))
                live[i] = v
        apply(cli, name, write_change_file(tmp_path / f"c{position}.parquet", unique), version, strategy, position)
    metadata = cli.metadata(name)
    contents = {(e["data_file"]["content"], e["data_file"]["file_format"].upper())
                for e in O.manifest_entries(metadata) if e["data_file"]["content"] != 0}
    assert contents == ({(2, "PARQUET")} if strategy == "equality" else
                        {(1, "PUFFIN" if version == 3 else "PARQUET")}), contents
    cols = ["id", "v"]
    catalog = O.sql_catalog(cli)
    location = catalog.load_table(name).metadata_location
    key = [0] if metadata["schemas"][-1].get("identifier-field-ids") else None
    want = expected_changelog(metadata, duckdb_reader(location, cols), key)
    got_rows = changes(cli, name)
    check_ordering(got_rows)
    got = by_snapshot(got_rows, cols)
    assert_changelog(got, want, f"lakesync apply v{version} {strategy}")
    assert key == [0], "apply declares the equality columns as identifier fields"
    assert {k[0] for c in got.values() for k in c} == {"INSERT", "DELETE", "UPDATE_BEFORE", "UPDATE_AFTER"}
    check_parquet_output(cli, name, got_rows, tmp_path)


def check_parquet_output(cli: O.Cli, name: str, rows: list[dict], tmp_path: Path) -> None:
    """`--format parquet` holds the JSON Lines rows, in order, with _change_type a string column (the
    writer takes it as codes: ChangelogOptions::change_type_as_dictionary), its statistics those of the
    values, and the same bytes at one and two threads."""
    pq = pytest.importorskip("pyarrow.parquet")
    files = []
    for threads in (1, 2):
        out = tmp_path / f"changes-{threads}.parquet"
        cli.ok("--threads", threads, "changes", "--source", "iceberg", "--table", name, "--format", "parquet",
               "--output", out)
        files.append(out.read_bytes())
    assert files[0] == files[1], "the Parquet output differs between one and two threads"
    table = pq.read_table(tmp_path / "changes-1.parquet")
    assert str(table.schema.field("_change_type").type) == "string", table.schema
    assert not table.schema.field("_change_type").nullable
    assert table.column("_change_type").to_pylist() == [r["_change_type"] for r in rows]
    for column in ("id", "v", "_commit_snapshot_id", "_change_ordinal"):
        assert table.column(column).to_pylist() == [r[column] for r in rows], column
    metadata = pq.ParquetFile(tmp_path / "changes-1.parquet").metadata
    at = table.schema.get_field_index("_change_type")
    first = 0
    for g in range(metadata.num_row_groups):
        chunk = metadata.row_group(g).column(at)
        values = [r["_change_type"] for r in rows[first:first + metadata.row_group(g).num_rows]]
        first += metadata.row_group(g).num_rows
        assert chunk.statistics.has_min_max and (chunk.statistics.min, chunk.statistics.max) == (min(values), max(values))
        assert chunk.statistics.null_count == 0
        assert "RLE_DICTIONARY" in chunk.encodings, chunk.encodings


# ---------------------------------------------------------------------------------------------
# Streaming


def start_follow(cli: O.Cli, name: str, out: Path, position_file: Path) -> subprocess.Popen:
    cmd = [str(O.LAKESYNC), "changes", "--source", "iceberg", "--table", name, "--format", "jsonl", "--follow",
           "--poll-interval", "1", "--starting-strategy", "earliest", "--position-file", str(position_file),
           "--output", str(out)]
    if position_file.exists():
        cmd = [c for c in cmd if c not in ("--starting-strategy", "earliest")]
    return subprocess.Popen(cmd, env=cli.env, cwd=cli.workdir, stderr=subprocess.PIPE, text=True)


def read_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    lines = path.read_text().split("\n")
    return [json.loads(line) for line in lines[:-1] if line]  # a torn last line is dropped


def wait_for(pred, timeout=60.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(0.2)
    return False


def test_follow_sees_each_change_once_and_resumes_after_kill(tmp_path):
    pytest.importorskip("pyiceberg")
    import pyarrow as pa

    cli = O.Cli(tmp_path)
    name = "ns.stream"
    catalog, tbl, schema = pyiceberg_table(cli, name, True)
    out1, out2, position = tmp_path / "run1.jsonl", tmp_path / "run2.jsonl", tmp_path / "position"
    written: list[int] = []

    def commit(k: int):
        ids = list(range(k * 100, k * 100 + 100))
        catalog.load_table(name).append(pa.Table.from_pylist([{"id": i, "v": f"r{k}"} for i in ids], schema))
        written.extend(ids)

    proc = start_follow(cli, name, out1, position)
    try:
        for k in range(4):
            commit(k)
            time.sleep(0.3)
        assert wait_for(lambda: len(read_jsonl(out1)) == 400), f"saw {len(read_jsonl(out1))} of 400"
        for k in range(4, 8):
            commit(k)
        time.sleep(0.5)
        os.kill(proc.pid, signal.SIGKILL)  # wherever it is
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    # Keep what the first run wrote up to its recorded position: the contract of the position file.
    seq = int(position.read_text().split(":")[0])
    kept = [r for r in read_jsonl(out1) if r["_commit_snapshot_sequence_number"] <= seq]
    for k in range(8, 10):
        commit(k)
    proc = start_follow(cli, name, out2, position)
    try:
        assert wait_for(lambda: len(kept) + len(read_jsonl(out2)) >= 1000), (
            f"saw {len(kept) + len(read_jsonl(out2))} of 1000")
        time.sleep(1.5)  # one more poll: nothing else may arrive
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
    rows = kept + read_jsonl(out2)
    ids = [r["id"] for r in rows]
    assert sorted(ids) == sorted(written), "every change exactly once"
    assert len(ids) == len(set(ids))
    assert {r["_change_type"] for r in rows} == {"INSERT"}
    seqs = [r["_commit_snapshot_sequence_number"] for r in rows]
    assert seqs == sorted(seqs), "in snapshot order"
    # Ids of one append share a snapshot; appends arrive in commit order.
    firsts = [r["id"] // 100 for r in rows]
    assert firsts == sorted(firsts)


def test_follow_records_each_snapshot_after_its_rows_and_stops_on_signal(tmp_path):
    """--follow rewrites the position file once a snapshot's rows are written, snapshot after snapshot;
    SIGTERM and SIGINT end it with status 0 and the last snapshot recorded, and a second run resumes
    after it. Every wait is for an observable state (the position file's content), never a delay."""
    pytest.importorskip("pyiceberg")
    import pyarrow as pa

    cli = O.Cli(tmp_path)
    name = "ns.recorded"
    catalog, _, schema = pyiceberg_table(cli, name, True)
    out1, out2, position = tmp_path / "run1.jsonl", tmp_path / "run2.jsonl", tmp_path / "position"

    def commit(k: int) -> str:
        tbl = catalog.load_table(name)
        tbl.append(pa.Table.from_pylist([{"id": k * 10 + i, "v": f"r{k}"} for i in range(3)], schema))
        s = catalog.load_table(name).current_snapshot()
        return f"{s.sequence_number}:{s.snapshot_id}\n"

    def recorded() -> str:
        return position.read_text() if position.exists() else ""

    def run_until(out: Path, commits: range, sig: int) -> str:
        proc = start_follow(cli, name, out, position)
        try:
            for k in commits:
                want = commit(k)
                assert wait_for(lambda: recorded() == want, timeout=30), f"position {recorded()!r}, want {want!r}"
                # Recorded only once the snapshot's rows are written: they are all in the output already.
                assert {r["id"] for r in read_jsonl(out)} >= {k * 10 + i for i in range(3)}
            proc.send_signal(sig)
            assert proc.wait(timeout=30) == 0, proc.stderr.read()
        finally:
            if proc.poll() is None:
                proc.kill()
        return want

    last = run_until(out1, range(0, 3), signal.SIGTERM)
    assert recorded() == last, "a stop keeps the last snapshot recorded"
    assert [r["id"] for r in read_jsonl(out1)] == [k * 10 + i for k in range(3) for i in range(3)]
    last = run_until(out2, range(3, 4), signal.SIGINT)
    assert recorded() == last
    assert [r["id"] for r in read_jsonl(out2)] == [30, 31, 32], "the second run resumes after the first"
