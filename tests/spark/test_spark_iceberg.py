"""Spark 4.0 with Iceberg 1.10 as the reference reader and writer for lakesync's Iceberg tables.

Heavy (one JVM for the session, seconds per Spark query): run by CI within `scripts/test.sh`; alone:
`scripts/test-spark.sh`. Every table lives in a catalog both sides open: lakesync's SQL catalog on
SQLite, which Spark opens with Iceberg's own JdbcCatalog (and, once, a filesystem/Hadoop catalog).

1. Tables lakesync writes (`table create/append/delete`, `apply`): v2 position deletes, v3 deletion
   vectors, v2 equality deletes, identity/bucket/truncate/day partitions, nested types. Spark's rows
   must equal the rows computed here from the generated data and `lakesync scan --format jsonl`,
   at the current snapshot, at older snapshots (time travel) and with filters Spark prunes with
   lakesync's partition values and column metrics.
2. Tables Spark writes: v2 and v3, merge-on-read (DELETE/UPDATE/MERGE producing position delete
   files and deletion vectors, checked in the snapshot summaries) and copy-on-write. `lakesync scan`
   must equal the rows computed here by mirroring each statement in Python, and Spark's own read,
   at every snapshot.
3. One v3 table both write in turn, so each merges deletion vectors the other wrote.

Expected rows never come from lakesync: from the generated data, and Spark is compared to them too.
"""

from __future__ import annotations

import collections
import datetime as dt
import random

import pytest

import oracles as O
import spark_runner as SR
from spark_tables import (COLUMNS, SPARK_COLUMNS, Lake, canonical, col, generate_rows, project, select_list,
                    spark_ddl, with_values)

pytestmark = [O.needs_lakesync, SR.needs_spark]
pa = pytest.importorskip("pyarrow")

N_ROWS = 2000
ROWS = generate_rows(N_ROWS, seed=20261130)


def assert_reads(lake: Lake, name: str, rows: list[tuple], what: str, columns=COLUMNS, *,
                 snapshot_id: int | None = None, spark: bool = True, lakesync: bool = True) -> None:
    """lakesync and Spark both read `rows` (canonical, in `columns` order)."""
    want = canonical(rows, columns)
    if lakesync:
        extra = ("--snapshot-id", snapshot_id) if snapshot_id is not None else ()
        O.assert_same_rows(lake.lakesync_rows(name, columns, *extra), want, f"{what}: lakesync scan")
    if spark:
        O.assert_same_rows(lake.spark_rows(name, columns, snapshot_id=snapshot_id), want, f"{what}: Spark")


def create(lake: Lake, name: str, version: int, partition=(), columns=COLUMNS, identifier_fields=None) -> None:
    schema = O.schema_file(lake.workdir / f"{name}.schema.yaml", columns, identifier_fields)
    args = ["table", "create", name, "--schema", schema, "--format-version", version]
    for term in partition:
        args += ["--partition", term]
    lake.cli.ok(*args)


_INPUTS = collections.Counter()


def append(lake: Lake, name: str, batches: list[list[tuple]], columns=COLUMNS) -> int:
    """Appends each batch as a Parquet file, in one commit; returns the new snapshot id."""
    paths = []
    for batch in batches:
        _INPUTS[lake.workdir] += 1
        paths.append(O.write_parquet(lake.workdir / f"in-{_INPUTS[lake.workdir]}.parquet", batch, columns))
    out = lake.cli.ok("table", "append", name, *paths)
    assert f"appended {sum(map(len, batches))} rows" in out, out
    return lake.cli.current_snapshot(name)["snapshot-id"]


def delete_kind_counts(summary: dict) -> tuple[int, int, int]:
    """(added DVs, added position delete files, added equality delete files) of a snapshot."""
    return (int(summary.get("added-dvs", 0)), int(summary.get("added-position-delete-files", 0)),
            int(summary.get("added-equality-delete-files", 0)))


# ---------------------------------------------------------------------------------------------
# 1. lakesync writes, Spark reads


def _pred_delete1(row) -> bool:
    i, b, dec9 = col(row, "i"), col(row, "b"), col(row, "dec9")
    return (i is not None and i < -250) or (b is False and dec9 is not None and dec9 > 0)


def _pred_delete2(row) -> bool:
    s, st = col(row, "s"), col(row, "st")
    return (s is not None and s.startswith("a")) or (st is not None and st[0] == 3)


DELETES = [("i < -250 OR (b = false AND dec9 > 0)", _pred_delete1),
           ("s LIKE 'a%' OR st.a = 3", _pred_delete2)]

_SOME_IDS = sorted(random.Random(5).sample(range(N_ROWS), 30))

# partition terms, a Spark filter that its planning prunes with lakesync's partition values and
# metrics, and the same filter in Python.
PARTITIONINGS = {
    "unpartitioned": ([], "l > 0 AND dt >= DATE '1999-12-31'",
                      lambda r: col(r, "l") is not None and col(r, "l") > 0 and col(r, "dt") is not None
                      and col(r, "dt") >= dt.date(1999, 12, 31)),
    "identity": (["cat"], "cat = 'ab'", lambda r: col(r, "cat") == "ab"),
    "bucket": (["bucket(id, 4)"], f"id IN ({', '.join(map(str, _SOME_IDS))})", lambda r: col(r, "id") in _SOME_IDS),
    "truncate": (["truncate(cat, 2)", "truncate(i, 100)"], "cat = '日本語' AND i >= 100",
                 lambda r: col(r, "cat") == "日本語" and col(r, "i") is not None and col(r, "i") >= 100),
    "day": (["day(tstz)"], "tstz < TIMESTAMP '2000-01-01 00:00:00'",
            lambda r: col(r, "tstz") is not None and col(r, "tstz") < 946_684_800_000_000),
}


@pytest.mark.parametrize("partitioning", list(PARTITIONINGS))
@pytest.mark.parametrize("version", [2, 3])
def test_lakesync_position_deletes_and_dvs_read_by_spark(tmp_path, spark, version, partitioning):
    terms, spark_filter, filter_py = PARTITIONINGS[partitioning]
    lake = Lake(tmp_path, spark)
    name = "db.t"
    create(lake, name, version, terms)
    snap1 = append(lake, name, [ROWS[:700], ROWS[700:1200]])
    snap2 = append(lake, name, [ROWS[1200:]])

    live = list(ROWS)
    states = [(snap1, ROWS[:1200]), (snap2, list(ROWS))]
    for where, predicate in DELETES:
        gone = [r for r in live if predicate(r)]
        assert 0 < len(gone) < len(live)
        out = lake.cli.ok("table", "delete", name, "--where", where)
        assert f"deleted {len(gone)} rows" in out, out
        live = [r for r in live if not predicate(r)]
        summary = lake.summary(name)
        dvs, pos_files, eq_files = delete_kind_counts(summary)
        # The delete really is merge-on-read of the kind the format version calls for.
        assert (dvs > 0 and pos_files == 0) if version == 3 else (dvs == 0 and pos_files > 0), summary
        # A DV that replaces an older one carries all its positions, so compare totals.
        assert eq_files == 0 and int(summary["total-position-deletes"]) == N_ROWS - len(live), summary
        assert_reads(lake, name, live, f"v{version} {partitioning} after DELETE WHERE {where}")
        states.append((lake.cli.current_snapshot(name)["snapshot-id"], list(live)))

    # Time travel: Spark reads every older snapshot as it was.
    for snapshot_id, rows in states[:-1]:
        assert_reads(lake, name, rows, f"snapshot {snapshot_id}", snapshot_id=snapshot_id, lakesync=False)

    # A filter Spark plans with lakesync's partition values and column metrics keeps every match.
    want = canonical([r for r in live if filter_py(r)], COLUMNS)
    assert want, "the filter must match some rows"
    O.assert_same_rows(lake.spark_rows(name, COLUMNS, where=spark_filter), want, f"Spark WHERE {spark_filter}")


@pytest.mark.parametrize("partitioning", ["unpartitioned", "identity", "bucket"])
def test_lakesync_equality_deletes_read_by_spark(tmp_path, spark, partitioning):
    """v2 equality deletes (which pyiceberg cannot read): they remove matching rows of older data
    files only, never rows appended after them (sequence numbers), in every partition."""
    terms = PARTITIONINGS[partitioning][0]
    lake = Lake(tmp_path, spark)
    name = "db.eq"
    create(lake, name, 2, terms)
    append(lake, name, [ROWS[:600], ROWS[600:1000]])
    live = list(ROWS[:1000])

    # Delete by key.
    gone = [r for r in live if _pred_delete1(r)]
    out = lake.cli.ok("table", "delete", name, "--where", DELETES[0][0], "--mode", "equality",
                      "--equality-columns", "id")
    assert f"deleted {len(gone)} rows" in out, out
    summary = lake.summary(name)
    assert delete_kind_counts(summary)[2] > 0 and int(summary["added-equality-deletes"]) == len(gone), summary
    live = [r for r in live if not _pred_delete1(r)]
    assert_reads(lake, name, live, "after the equality delete by id")

    # Rows appended later with the deleted keys (new values) are not deleted by the older deletes.
    reborn = generate_rows(len(gone[:80]), seed=77, ids=[col(r, "id") for r in gone[:80]])
    append(lake, name, [reborn, ROWS[1000:1400]])
    live += reborn + ROWS[1000:1400]
    assert_reads(lake, name, live, "after re-appending deleted keys")

    # Delete by a non-key column: all older rows with cat 'ab' (in every partition), none later.
    gone = [r for r in live if col(r, "cat") == "ab"]
    lake.cli.ok("table", "delete", name, "--where", "cat = 'ab'", "--mode", "equality", "--equality-columns", "cat")
    live = [r for r in live if col(r, "cat") != "ab"]
    assert gone and delete_kind_counts(lake.summary(name))[2] > 0
    append(lake, name, [generate_rows(50, seed=78, first_id=5000)])
    live += generate_rows(50, seed=78, first_id=5000)
    assert any(col(r, "cat") == "ab" for r in live), "some later rows must have cat 'ab' again"
    assert_reads(lake, name, live, "after the equality delete by cat and another append")


def test_lakesync_compacted_table_read_by_spark(tmp_path, spark):
    """`lakesync table compact` of a v2 table with position and equality deletes: Spark reads the
    compacted table (new files carry the read snapshot's data sequence number) and applies an
    equality delete committed after the compaction to the rewritten rows."""
    lake = Lake(tmp_path, spark)
    name = "db.compacted"
    create(lake, name, 2, ["bucket(id, 2)"])
    append(lake, name, [ROWS[:400]])
    append(lake, name, [ROWS[400:800]])
    lake.cli.ok("table", "delete", name, "--where", DELETES[0][0])
    lake.cli.ok("table", "delete", name, "--where", "id >= 700", "--mode", "equality", "--equality-columns", "id")
    live = [r for r in ROWS[:700] if not _pred_delete1(r)]
    out = lake.cli.ok("table", "compact", name)
    assert "compacted" in out, out
    assert lake.summary(name)["operation"] == "replace"
    assert_reads(lake, name, live, "after the compaction")
    lake.cli.ok("table", "delete", name, "--where", "id < 100", "--mode", "equality", "--equality-columns", "id")
    live = [r for r in live if col(r, "id") >= 100]
    assert_reads(lake, name, live, "after an equality delete over the compacted files")


def test_row_lineage_kept_by_compaction_as_spark_reads_it(tmp_path, spark):
    """v3 row lineage (spec "Row Lineage"): Spark's Iceberg runtime reads `_row_id` and
    `_last_updated_sequence_number` of every row equal to `lakesync scan --row-lineage` before a
    lakesync compaction, and the same values after it (the rewritten files store them)."""
    lake = Lake(tmp_path, spark)
    name = "db.lineage"
    create(lake, name, 3, ["bucket(id, 2)"])
    append(lake, name, [ROWS[:400]])
    append(lake, name, [ROWS[400:800]])
    lake.cli.ok("table", "delete", name, "--where", "id < 50")

    def by_spark(snapshot_id: int) -> dict:
        out = lake.workdir / f"lineage-{snapshot_id}"
        lake.spark.query_to_parquet(f"SELECT id, _row_id, _last_updated_sequence_number FROM {lake.table(name)} "
                                    f"VERSION AS OF {snapshot_id}", out)
        t = SR.read_parquet_dir(out)
        return dict(zip(t["id"].to_pylist(), zip(t["_row_id"].to_pylist(),
                                                  t["_last_updated_sequence_number"].to_pylist())))

    def by_lakesync() -> dict:
        return {r["id"]: (r["_row_id"], r["_last_updated_sequence_number"])
                for r in lake.cli.scan_jsonl(name, "--row-lineage", "--select", "id")}

    before_snapshot = lake.cli.metadata(name)["current-snapshot-id"]
    before = by_lakesync()
    assert len(before) == 750 and by_spark(before_snapshot) == before
    assert "compacted" in lake.cli.ok("table", "compact", name)
    after_snapshot = lake.cli.metadata(name)["current-snapshot-id"]
    assert after_snapshot != before_snapshot
    assert by_lakesync() == before
    assert by_spark(after_snapshot) == before


# --- lakesync apply (the CDC sink), every delete strategy --------------------------------------

CHANGE_COLUMNS = [{**c, "required": False} for c in COLUMNS] + [
    {"name": "op", "type": "string", "required": False},
    {"name": "seq", "type": "long", "required": False},
]


def change_batches(seed: int) -> list[list[tuple]]:
    """Three batches of changes (each: canonical COLUMNS row + (op, seq)): inserts, updates as
    before/after pairs (some moving the row to another `cat`), deletes, keys updated twice, keys
    inserted and deleted in the same batch."""
    r = random.Random(seed)
    state: dict[int, tuple] = {}
    next_id = 0
    batches = []
    for b in range(3):
        out = []
        born_and_gone = set()
        seq = b * 1000

        def emit(op, row):
            nonlocal seq
            seq += 1
            out.append(row + (op, seq))

        n_new = 900 if b == 0 else 120
        for row in generate_rows(n_new, seed=seed * 10 + b, first_id=next_id):
            emit("c", row)
        next_id += n_new
        if b:
            keys = r.sample(sorted(state), 260)
            for k in keys[:120]:  # update
                new = generate_rows(1, seed=r.getrandbits(32), ids=[k])[0]
                emit("ub", state[k])
                emit("u", new)
                state[k] = new
            for k in keys[120:160]:  # updated twice
                for _ in range(2):
                    new = generate_rows(1, seed=r.getrandbits(32), ids=[k])[0]
                    emit("ub", state[k])
                    emit("u", new)
                    state[k] = new
            for k in keys[160:]:  # delete
                emit("d", state.pop(k))
            for row in generate_rows(20, seed=seed * 10 + b + 5, first_id=next_id):  # born and gone
                emit("c", row)
                emit("d", row)
                born_and_gone.add(row[0])
            next_id += 20
        for row in out:
            if row[-2] == "c" and row[0] not in born_and_gone:
                state[row[0]] = row[:-2]
        batches.append((out, dict(state)))
    return batches


APPLY_SETUPS = {
    # name: (format version, delete strategy, partition terms, catalog kind)
    "v3-position-identity": (3, "position", ["cat"], "sql"),
    "v2-position-bucket": (2, "position", ["bucket(id, 4)"], "sql"),
    "v2-equality-identity": (2, "equality", ["cat"], "sql"),
    # lakesync commits through its REST client to `catalog serve`; Spark reads through RESTCatalog.
    "v3-position-bucket-rest": (3, "position", ["bucket(id, 4)"], "rest"),
}


@pytest.mark.parametrize("setup", list(APPLY_SETUPS))
def test_lakesync_apply_read_by_spark(tmp_path, spark, setup):
    version, strategy, terms, kind = APPLY_SETUPS[setup]
    lake = Lake(tmp_path, spark, kind)
    name = "db.cdc"
    create(lake, name, version, terms, identifier_fields=["id"])
    snapshots = []
    for k, (changes, state) in enumerate(change_batches(seed=31)):
        path = O.write_parquet(tmp_path / f"changes-{k}.parquet", changes, CHANGE_COLUMNS)
        lake.cli.ok("apply", "--table", name, "--changes", path, "--change-type-column", "op",
                    "--change-type-map", "c=INSERT,ub=UPDATE_BEFORE,u=UPDATE_AFTER,d=DELETE",
                    "--sequence-number-column", "seq", "--equality-columns", "id",
                    "--delete-strategy", strategy, "--sink-id", "spark-oracle", "--source-position", k + 1)
        summary = lake.summary(name)
        if k:
            dvs, pos_files, eq_files = delete_kind_counts(summary)
            kind = {"position": (dvs if version == 3 else pos_files), "equality": eq_files}[strategy]
            assert kind > 0, f"apply {k}: no {strategy} deletes written for v{version}: {summary}"
        rows = list(state.values())
        assert_reads(lake, name, rows, f"{setup} after apply {k + 1}")
        snapshots.append((lake.cli.current_snapshot(name)["snapshot-id"], rows))
    for snapshot_id, rows in snapshots[:-1]:
        assert_reads(lake, name, rows, f"{setup} snapshot {snapshot_id}", snapshot_id=snapshot_id, lakesync=False)


# ---------------------------------------------------------------------------------------------
# 2. Spark writes, lakesync reads

SPARK_SETUPS = {
    # name: (format version, write mode, PARTITIONED BY, catalog kind)
    "v2-merge-on-read-identity": (2, "merge-on-read", "cat", "sql"),
    "v3-merge-on-read-bucket": (3, "merge-on-read", "bucket(4, id)", "sql"),
    "v3-merge-on-read-day-hadoop": (3, "merge-on-read", "days(tstz)", "hadoop"),
    "v2-copy-on-write-truncate": (2, "copy-on-write", "truncate(2, cat)", "sql"),
    "v3-copy-on-write-unpartitioned": (3, "copy-on-write", "", "sql"),
    # Spark through Iceberg's RESTCatalog, lakesync through its REST client, one `catalog serve`.
    "v3-merge-on-read-identity-rest": (3, "merge-on-read", "cat", "rest"),
}

UPDATE_WHERE = "cat = 'ab' OR id % 17 = 0"


def _update_where(row) -> bool:
    return col(row, "cat") == "ab" or col(row, "id") % 17 == 0


def _updated(row) -> tuple:
    """The Python mirror of SET s = concat('u-', coalesce(s, '')), i = coalesce(i, 0) + 1000,
    st = named_struct('a', 7, 'b', st.b, 'inner', st.inner) (a null st gives (7, null, null))."""
    st = col(row, "st")
    return with_values(row, s="u-" + (col(row, "s") or ""), i=(col(row, "i") or 0) + 1000,
                       st=(7, None, None) if st is None else (7, st[1], st[2]))


def spark_load(lake: Lake, rows: list[tuple], columns: list[dict], table: str, path) -> None:
    """Appends canonical rows to a Spark table through a Parquet file pyarrow writes."""
    O.write_parquet(path, rows, columns)
    lake.spark.run("spark.read.parquet(args['path']).writeTo(args['table']).append()",
                   path=str(path), table=table)


def spark_snapshots(lake: Lake, table: str) -> list[dict]:
    return lake.sql(f"SELECT snapshot_id, operation, summary FROM {table}.snapshots ORDER BY committed_at")


def check_write_kind(lake: Lake, name: str, mode: str, version: int, what: str) -> None:
    """The latest snapshot wrote what the table's mode says: DVs (v3) or position delete files (v2)
    for merge-on-read, rewritten data files and no deletes for copy-on-write."""
    summary = lake.summary(name)
    dvs, pos_files, eq_files = delete_kind_counts(summary)
    assert eq_files == 0, summary
    if mode == "merge-on-read":
        ok = (dvs > 0 and pos_files == 0) if version == 3 else (dvs == 0 and pos_files > 0)
    else:
        ok = dvs == 0 and pos_files == 0 and int(summary.get("deleted-data-files", 0)) > 0
    assert ok, f"{what}: Spark did not write {mode} deletes for v{version}: {summary}"


@pytest.mark.parametrize("setup", list(SPARK_SETUPS))
def test_spark_writes_lakesync_reads(tmp_path, spark, setup):
    version, mode, partitioned_by, kind = SPARK_SETUPS[setup]
    lake = Lake(tmp_path, spark, kind)
    name = "db.sp"
    table = lake.table(name)
    cols = SPARK_COLUMNS
    lake.sql(f"CREATE TABLE {table} ({spark_ddl(cols)}) USING iceberg"
             + (f" PARTITIONED BY ({partitioned_by})" if partitioned_by else "")
             + f" TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='{mode}',"
             f" 'write.update.mode'='{mode}', 'write.merge.mode'='{mode}')")
    live = {col(r, "id"): r for r in ROWS[:1200]}
    history = []

    def check(what: str) -> None:
        rows = project(list(live.values()), cols)
        # Spark against the Python mirror first: if it disagrees, the mirror is wrong, not lakesync.
        O.assert_same_rows(lake.spark_rows(name, cols), canonical(rows, cols), f"{setup} {what}: Spark")
        O.assert_same_rows(lake.lakesync_rows(name, cols), canonical(rows, cols), f"{setup} {what}: lakesync scan")
        history.append((lake.cli.current_snapshot(name)["snapshot-id"], rows, what))

    spark_load(lake, project(ROWS[:700], cols), cols, table, tmp_path / "in-1.parquet")
    spark_load(lake, project(ROWS[700:1200], cols), cols, table, tmp_path / "in-2.parquet")
    check("after two appends")

    lake.sql(f"DELETE FROM {table} WHERE {DELETES[0][0]}")
    live = {k: r for k, r in live.items() if not _pred_delete1(r)}
    check_write_kind(lake, name, mode, version, "DELETE")
    check("after DELETE")

    lake.sql(f"UPDATE {table} SET s = concat('u-', coalesce(s, '')), i = coalesce(i, 0) + 1000, "
             f"st = named_struct('a', 7, 'b', st.b, 'inner', st.inner) WHERE {UPDATE_WHERE}")
    live = {k: (_updated(r) if _update_where(r) else r) for k, r in live.items()}
    check_write_kind(lake, name, mode, version, "UPDATE")
    check("after UPDATE")

    # MERGE from a change set: deletes and updates of existing keys, inserts of new ones.
    r = random.Random(3)
    keys = r.sample(sorted(live), 300)
    deletes, updates = keys[:100], keys[100:]
    news = generate_rows(200, seed=99, first_id=10_000)
    changed = generate_rows(len(updates), seed=98, ids=updates)
    source = ([live[k] + ("d",) for k in deletes] + [c + ("u",) for c in changed] + [n + ("i",) for n in news])
    source_cols = cols + [{"name": "op", "type": "string", "required": False}]
    O.write_parquet(tmp_path / "merge.parquet", [project([s[:-1]], cols)[0] + (s[-1],) for s in source],
                    source_cols)
    set_list = ", ".join(f"t.`{c['name']}` = s.`{c['name']}`" for c in cols)
    lake.spark.run(
        "spark.read.parquet(args['path']).createOrReplaceTempView('merge_source')\n"
        "spark.sql(args['merge']).collect()",
        path=str(tmp_path / "merge.parquet"),
        merge=(f"MERGE INTO {table} t USING merge_source s ON t.id = s.id "
               f"WHEN MATCHED AND s.op = 'd' THEN DELETE "
               f"WHEN MATCHED AND s.op = 'u' THEN UPDATE SET {set_list} "
               f"WHEN NOT MATCHED AND s.op = 'i' THEN INSERT ({select_list(cols)}) "
               f"VALUES ({', '.join('s.`%s`' % c['name'] for c in cols)})"))
    for k in deletes:
        del live[k]
    live.update((col(c, "id"), c) for c in changed)
    live.update((col(n, "id"), n) for n in news)
    check_write_kind(lake, name, mode, version, "MERGE")
    check("after MERGE")

    # Every older snapshot reads as it was, in lakesync.
    for snapshot_id, rows, what in history[:-1]:
        O.assert_same_rows(lake.lakesync_rows(name, cols, "--snapshot-id", snapshot_id), canonical(rows, cols),
                           f"{setup} lakesync scan --snapshot-id of the snapshot {what}")
    assert len(spark_snapshots(lake, table)) == len(lake.cli.history(name))


# ---------------------------------------------------------------------------------------------
# 3. Both write one v3 table in turn


def _local(location: str) -> str:
    # Spark writes "file:/tmp/..." (one slash), lakesync "file:///tmp/...".
    return "/" + location.split(":", 1)[1].lstrip("/") if location.startswith("file:") else location


def live_dv_references(metadata: dict) -> list[str]:
    """referenced_data_file of every live delete file of the current snapshot (fastavro)."""
    import fastavro

    def records(location):
        with open(_local(location), "rb") as f:
            return list(fastavro.reader(f))

    [snapshot] = [s for s in metadata["snapshots"] if s["snapshot-id"] == metadata["current-snapshot-id"]]
    out = []
    for manifest in records(snapshot["manifest-list"]):
        if manifest.get("content", 0) != 1:
            continue
        out += [_local(e["data_file"]["referenced_data_file"]) for e in records(manifest["manifest_path"])
                if e["status"] != 2 and e["data_file"]["content"] == 1]
    return out


def test_lakesync_and_spark_merge_each_others_deletion_vectors(tmp_path, spark):
    """A lakesync v3 table (with uuid and fixed columns, which Spark cannot declare) that Spark and
    lakesync delete from in turn: each must merge the deletion vector the other wrote for a data
    file into one new vector, and both must read the same rows throughout."""
    lake = Lake(tmp_path, spark)
    name = "db.turns"
    table = lake.table(name)
    create(lake, name, 3, ["bucket(id, 2)"])
    append(lake, name, [ROWS[:1000]])
    lake.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read', "
             "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')")
    live = list(ROWS[:1000])

    def ids_where(predicate) -> str:  # lakesync's filters have no modulo: list the ids
        return ", ".join(str(col(r, "id")) for r in ROWS[:1000] if predicate(r))

    steps = [
        ("spark", "id % 5 = 0", lambda r: col(r, "id") % 5 == 0),
        ("lakesync", f"id IN ({ids_where(lambda r: col(r, 'id') % 5 == 1)})", lambda r: col(r, "id") % 5 == 1),
        ("spark", "id % 5 = 2 AND b = true", lambda r: col(r, "id") % 5 == 2 and col(r, "b") is True),
        ("lakesync", f"cat = 'zz' OR id IN ({ids_where(lambda r: col(r, 'id') % 7 == 3)})",
         lambda r: col(r, "cat") == "zz" or col(r, "id") % 7 == 3),
    ]
    for writer, where, predicate in steps:
        if writer == "spark":
            lake.sql(f"DELETE FROM {table} WHERE {where}")
        else:
            lake.cli.ok("table", "delete", name, "--where", where)
        live = [r for r in live if not predicate(r)]
        summary = lake.summary(name)
        assert int(summary.get("added-dvs", 0)) > 0, f"{writer} DELETE wrote no DVs: {summary}"
        # One live DV per data file, whoever wrote the previous one.
        referenced = live_dv_references(lake.cli.metadata(name))
        assert len(referenced) == len(set(referenced)), f"after {writer}: two live DVs for one data file"
        assert_reads(lake, name, live, f"after {writer} DELETE WHERE {where[:60]}")

    # Spark UPDATE writes new rows with uuid and fixed values into lakesync's schema.
    lake.sql(f"UPDATE {table} SET s = 'spark', fx = X'0102030405060708' WHERE id % 10 = 4")
    live = [with_values(r, s="spark", fx=bytes(range(1, 9))) if col(r, "id") % 10 == 4 else r for r in live]
    assert_reads(lake, name, live, "after a Spark UPDATE")


# ---------------------------------------------------------------------------------------------
# 4. v3 row lineage: the row ids lakesync assigns, as Spark reads them, and across writers


def lineage(lake: Lake, name: str) -> dict[int, tuple]:
    """id -> (_row_id, _last_updated_sequence_number, _file, _pos) as Spark reads them."""
    out = lake.workdir / f"lineage-{len(list(lake.workdir.glob('lineage-*')))}"
    lake.spark.query_to_parquet(f"SELECT id, _row_id, _last_updated_sequence_number, _file, _pos "
                                f"FROM {lake.table(name)}", out)
    t = SR.read_parquet_dir(out).to_pydict()
    return {i: (r, s, f, p) for i, r, s, f, p in zip(t["id"], t["_row_id"], t["_last_updated_sequence_number"],
                                                   t["_file"], t["_pos"])}


def check_lineage_shape(rows: dict[int, tuple], what: str, inherited: set[int]) -> None:
    """Row ids are unique and non-null, and in the data files of the `inherited` ids (files written
    without explicit row ids, as lakesync's appends are) they are first_row_id + position. (Spark's
    updates write the preserved ids into their files, so no such rule holds there.)"""
    ids = [v[0] for v in rows.values()]
    assert None not in ids, f"{what}: a row without _row_id"
    assert len(ids) == len(set(ids)), f"{what}: duplicate _row_id values"
    offsets = collections.defaultdict(set)
    files = {rows[k][2] for k in inherited if k in rows}
    for row_id, _, file, pos in rows.values():
        if file in files:
            offsets[file].add(row_id - pos)
    bad = {f: o for f, o in offsets.items() if len(o) != 1}
    assert not bad, f"{what}: row ids are not first_row_id + _pos in {list(bad)[:2]}"


def test_row_lineage_of_lakesync_commits_read_by_spark_and_kept_across_writers(tmp_path, spark):
    """Spec (v3 row lineage): a snapshot's added rows get ids from the table's next-row-id on, each
    data file a consecutive range; an untouched row keeps its id and last-updated sequence number."""
    lake = Lake(tmp_path, spark)
    name = "db.lineage"
    create(lake, name, 3, ["bucket(id, 2)"])
    append(lake, name, [ROWS[:300], ROWS[300:600]])
    append(lake, name, [ROWS[600:1000]])
    first = lineage(lake, name)
    check_lineage_shape(first, "after two lakesync appends", set(range(1000)))
    assert sorted(first[k][0] for k in range(600)) == list(range(600)), "first append: ids 0..599"
    assert sorted(first[k][0] for k in range(600, 1000)) == list(range(600, 1000)), "second append: 600..999"
    assert {first[k][1] for k in range(600)} == {1} and {first[k][1] for k in range(600, 1000)} == {2}

    # A Spark merge-on-read UPDATE keeps the updated rows' ids and gives them its sequence number.
    table = lake.table(name)
    lake.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('write.update.mode'='merge-on-read', "
             "'write.delete.mode'='merge-on-read')")
    updated = {k for k in range(1000) if k % 9 == 0}
    lake.sql(f"UPDATE {table} SET s = 'spark' WHERE id % 9 = 0")
    spark_seq = lake.cli.current_snapshot(name)["sequence-number"]
    second = lineage(lake, name)
    check_lineage_shape(second, "after a Spark UPDATE", set(range(1000)) - updated)
    for k in range(1000):
        assert second[k][0] == first[k][0], f"id {k}: _row_id {first[k][0]} became {second[k][0]}"
        assert second[k][1] == (spark_seq if k in updated else first[k][1]), f"id {k}: sequence {second[k][1]}"

    # lakesync deletes (merging Spark's DVs) and appends after Spark's commit: the new rows take ids
    # from the next-row-id Spark's commit left, the survivors keep theirs.
    next_row_id = lake.cli.metadata(name)["next-row-id"]
    gone = set(range(0, 1000, 4))
    lake.cli.ok("table", "delete", name, "--where", f"id IN ({', '.join(map(str, sorted(gone)))})")
    append(lake, name, [ROWS[1000:1300]])
    third = lineage(lake, name)
    check_lineage_shape(third, "after a lakesync delete and append", set(range(1000, 1300)))
    assert set(third) == (set(range(1000)) - gone) | set(range(1000, 1300))
    for k in set(range(1000)) - gone:
        assert third[k][:2] == second[k][:2], f"id {k}: lineage changed by lakesync's delete"
    new_ids = sorted(third[k][0] for k in range(1000, 1300))
    assert new_ids == list(range(next_row_id, next_row_id + 300)), (new_ids[:3], next_row_id)
    assert_reads(lake, name, [with_values(r, s="spark") if col(r, "id") in updated else r
                              for r in ROWS[:1300] if col(r, "id") not in gone], "after both writers")


def test_spark_reads_a_table_whose_schema_lakesync_evolved(tmp_path, spark):
    """`lakesync table alter` (issue 16): Spark reads the files written before the changes by field id
    (the added column null, the renamed one by id, the widened ones promoted) and the rows after."""
    import pyarrow.parquet as pq

    lake = Lake(tmp_path, spark)
    schema = tmp_path / "ev.schema.yaml"
    schema.write_text("fields:\n  - {name: id, type: long, required: true}\n  - {name: n, type: int}\n"
                      "  - {name: x, type: float}\n  - {name: name, type: string}\nidentifier-fields: [id]\n")
    lake.cli.ok("table", "create", "db.ev", "--schema", schema, "--format-version", 2)
    old = tmp_path / "old.parquet"
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "n": pa.array([10, None], pa.int32()),
                             "x": pa.array([1.5, 2.5], pa.float32()), "name": ["a", "b"]}), old)
    lake.cli.ok("table", "append", "db.ev", old)
    for change in (("add-column", "city", "string"), ("rename-column", "name", "label"), ("widen", "n", "long"),
                   ("widen", "x", "double")):
        lake.cli.ok("table", "alter", "db.ev", *change)
    new = tmp_path / "new.parquet"
    pq.write_table(pa.table({"id": pa.array([3], pa.int64()), "n": pa.array([2**40], pa.int64()), "x": [0.25],
                             "label": ["c"], "city": ["porto"]}), new)
    lake.cli.ok("table", "append", "db.ev", new)

    out = tmp_path / "spark-evolved"
    spark.query_to_parquet(f"SELECT id, n, x, label, city FROM {lake.table('db.ev')}", out)
    got = sorted(SR.read_parquet_dir(out).to_pylist(), key=lambda r: r["id"])
    assert got == [{"id": 1, "n": 10, "x": 1.5, "label": "a", "city": None},
                   {"id": 2, "n": None, "x": 2.5, "label": "b", "city": None},
                   {"id": 3, "n": 2**40, "x": 0.25, "label": "c", "city": "porto"}]
    described = {r["col_name"]: r["data_type"] for r in lake.sql(f"DESCRIBE TABLE {lake.table('db.ev')}")
                 if r["col_name"] and not r["col_name"].startswith("#")}
    assert [described[c] for c in ("id", "n", "x", "label", "city")] == ["bigint", "bigint", "double", "string",
                                                                         "string"]
