"""`lakesync table compact` (issue 16): data files with deleted rows or too small are rewritten with
their deletes applied, in one `replace` snapshot, and every reader sees the same rows before and after
(lakesync, pyiceberg where it reads the table, DuckDB), also after later deletes of every kind; the
changelog sees no change in the compaction; a concurrent delete makes the compaction plan again; a
kill -9 midway leaves only orphans, which remove-orphans cleans.

Rows come from the seeded generator of tests/interop/test_tables_written_by_lakesync.py (every type
its readers share); expected values are those rows, never lakesync's output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
import oracles as O  # noqa: E402
import test_tables_written_by_lakesync as W  # noqa: E402

pytestmark = O.needs_lakesync

ROWS = W.ALL_ROWS[:800]


def ids(rows) -> set[int]:
    return {W.col(r, "id") for r in rows}


def compact(cli: O.Cli, name: str, *args) -> dict:
    return json.loads(cli.ok("table", "compact", name, "--json", *args))


def make_table(cli: O.Cli, name: str, version: int, partition=("bucket(id, 2)",), extra=()) -> None:
    W.create_table(cli, name, version, list(partition), extra=extra)
    for k in range(4):  # four commits: files with four data sequence numbers
        W.append_parquet(cli, name, [ROWS[k * 200:(k + 1) * 200]])


def compare(cli: O.Cli, name: str, rows, version: int, pyiceberg: bool = True, known=None) -> None:
    W.compare_all_readers(cli, name, rows, version=version, pyiceberg=pyiceberg, duckdb_known_error=known)


def live(cli: O.Cli, name: str):
    return W.live_files(cli, name)


@pytest.mark.parametrize("version", [2, 3])
def test_compaction_applies_position_deletes_and_dvs_and_readers_agree(tmp_path, version):
    cli = O.Cli(tmp_path)
    name = "db.c"
    make_table(cli, name, version)
    cli.ok("table", "delete", name, "--where", "id < 150 OR (id >= 400 AND id < 420)")
    cli.ok("table", "delete", name, "--where", "b = true AND id >= 600")
    rows = [r for r in ROWS if not (W.col(r, "id") < 150 or 400 <= W.col(r, "id") < 420
                                    or (W.col(r, "b") is True and W.col(r, "id") >= 600))]
    compare(cli, name, rows, version)
    data_before, deletes_before = live(cli, name)
    assert len(data_before) == 8 and deletes_before
    before_snapshot = cli.current_snapshot(name)["snapshot-id"]

    # A dry run names the files and changes nothing.
    plan = compact(cli, name, "--dry-run")
    assert plan["snapshot_id"] is None and plan["rewritten_data_files"] == 8, plan
    assert cli.current_snapshot(name)["snapshot-id"] == before_snapshot

    done = compact(cli, name)
    assert done["rewritten_data_files"] == 8 and done["written_records"] == len(rows), done
    snap = cli.current_snapshot(name)
    assert snap["summary"]["operation"] == "replace"
    assert int(snap["summary"]["total-records"]) == len(rows)
    data_after, deletes_after = live(cli, name)
    # One file per bucket, no delete file left (every one applied only to rewritten files).
    assert len(data_after) == 2 and deletes_after == [], deletes_after
    assert done["removed_delete_files"] == len(deletes_before)
    # The new files keep the read snapshot's data sequence number.
    assert {e["sequence_number"] for e in data_after} == {cli.current_snapshot(name)["sequence-number"] - 1}
    compare(cli, name, rows, version)
    # Time travel to before the compaction reads the same rows.
    got = O.normalise_rows(cli.scan_jsonl(name, "--snapshot-id", before_snapshot), W.COLUMNS, "jsonl")
    O.assert_same_rows(got, W.expected(rows), "scan of the snapshot before the compaction")

    # Deletes after the compaction (a DV on v3, a position delete file on v2) hit the new files.
    cli.ok("table", "delete", name, "--where", "id >= 700")
    rows = [r for r in rows if W.col(r, "id") < 700]
    compare(cli, name, rows, version)
    # With no file small (a one-byte target) and a ratio no file reaches, nothing is rewritten.
    again = compact(cli, name, "--min-deleted-ratio", "1", "--target-file-size", "1")
    assert again["snapshot_id"] is None and again["rewritten_data_files"] == 0, again


def test_equality_deletes_are_applied_and_later_ones_still_hit_the_rewritten_rows(tmp_path):
    """v2, unpartitioned: equality deletes become applied and their files go; an equality delete
    committed after the compaction deletes rewritten rows (their data sequence number is older), and
    ids re-appended after an equality delete are not resurrected or lost. pyiceberg refuses tables with
    equality deletes, so it reads only the states without any."""
    cli = O.Cli(tmp_path)
    name = "db.eq"
    make_table(cli, name, 2, partition=())
    eq = ["--mode", "equality", "--equality-columns", "id"]
    cli.ok("table", "delete", name, "--where", "id < 100 OR i < -300", *eq)
    gone = {W.col(r, "id") for r in ROWS if W.col(r, "id") < 100 or (W.col(r, "i") or 0) < -300}
    back = [r for r in ROWS if W.col(r, "id") in sorted(gone)[:30]]  # re-inserted after the delete
    W.append_parquet(cli, name, [back])
    rows = [r for r in ROWS if W.col(r, "id") not in gone] + back
    compare(cli, name, rows, 2, pyiceberg=False)

    done = compact(cli, name)
    assert done["rewritten_data_files"] == 5 and done["written_records"] == len(rows), done
    _, deletes = live(cli, name)
    assert deletes == [], "the equality delete file applied only to rewritten files"
    compare(cli, name, rows, 2)  # pyiceberg reads it again

    cli.ok("table", "delete", name, "--where", "id >= 300 AND id < 350", *eq)
    rows = [r for r in rows if not 300 <= W.col(r, "id") < 350]
    compare(cli, name, rows, 2, pyiceberg=False)
    # A second compaction applies that one too.
    compact(cli, name, "--min-deleted-ratio", "0.01")
    assert live(cli, name)[1] == []
    compare(cli, name, rows, 2)


def test_where_threshold_sort_order_and_target_size(tmp_path):
    cli = O.Cli(tmp_path)
    name = "db.s"
    make_table(cli, name, 3, partition=("identity(b)",), extra=("--sort", "i desc nulls last", "--sort", "id"))
    # Only the files of partition b = true are candidates.
    done = compact(cli, name, "--where", "b = true")
    data, _ = live(cli, name)
    rewritten = [e for e in data if e["snapshot_id"] == cli.current_snapshot(name)["snapshot-id"]]
    assert len(rewritten) == 1 and rewritten[0]["data_file"]["partition"]["b"] is True, done
    assert len(data) == 1 + 2 * 4, "the other partitions' eight files are untouched"
    # The new file is sorted by the table's sort order and says so.
    f = rewritten[0]["data_file"]
    assert f["sort_order_id"] == cli.metadata(name)["default-sort-order-id"]
    t = pq.read_table(O.local_path(f["file_path"]), columns=["i", "id"]).to_pylist()
    keys = [((r["i"] is None), -(r["i"] or 0), r["id"]) for r in t]
    assert keys == sorted(keys)
    compare(cli, name, ROWS, 3)

    # Big files with few deletes are left alone; --min-deleted-ratio decides.
    cli.ok("table", "delete", name, "--where", "i > 350")
    rows = [r for r in ROWS if not (W.col(r, "i") is not None and W.col(r, "i") > 350)]
    with_dv = {e["data_file"]["referenced_data_file"] for e in live(cli, name)[1]}
    assert compact(cli, name, "--target-file-size", "1", "--min-deleted-ratio", "0.9")["rewritten_data_files"] == 0
    done = compact(cli, name, "--target-file-size", "1", "--min-deleted-ratio", "0.01")
    assert set(done["rewritten_files"]) == with_dv, done
    assert live(cli, name)[1] == []
    compare(cli, name, rows, 3)
    code, err = cli.fail("table", "compact", name, "--where", "nope = 1")
    assert code == O.EXIT_INVALID and "nope" in err and "--where" in err, err


def test_changelog_sees_no_change_in_a_compaction(tmp_path):
    cli = O.Cli(tmp_path)
    name = "db.cl"
    make_table(cli, name, 3, partition=())
    cli.ok("table", "delete", name, "--where", "id < 50")
    before = cli.current_snapshot(name)["snapshot-id"]
    compact(cli, name)
    compacted = cli.current_snapshot(name)["snapshot-id"]
    assert compacted != before
    cli.ok("table", "delete", name, "--where", "id >= 750")
    out = cli.ok("changes", "--source", "iceberg", "--table", name, "--format", "jsonl",
                 "--start-snapshot-id", str(compacted))  # inclusive: the compaction is in range
    changes = [json.loads(line) for line in out.splitlines()]
    assert {c["_commit_snapshot_id"] for c in changes} == {cli.current_snapshot(name)["snapshot-id"]}
    assert sorted(c["id"] for c in changes) == list(range(750, 800))
    assert {c["_change_type"] for c in changes} == {"DELETE"}


def test_a_delete_committed_during_the_compaction_makes_it_plan_again(tmp_path):
    """The compaction is held at its commit (failpoint commit.pause) while a delete adds a deletion
    vector to a file it rewrites; released, it finds the conflict, plans again from the new state and
    commits; the deleted rows stay deleted."""
    cli = O.Cli(tmp_path)
    name = "db.race"
    make_table(cli, name, 3, partition=())
    release = tmp_path / "release"
    env = dict(cli.env, LAKESYNC_FAILPOINTS=f"commit.pause=wait:{release}")
    proc = subprocess.Popen([str(O.LAKESYNC), "--log-level", "info", "table", "compact", name, "--json"], env=env,
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        while not list(tmp_path.glob("release.reached.*")):
            assert proc.poll() is None, proc.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "the compaction did not reach its commit"
            time.sleep(0.02)  # polling a condition (a file), not timing anything
        cli.ok("table", "delete", name, "--where", "id < 10")
        release.touch()
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err[-3000:]
    done = json.loads(out)
    assert done["attempts"] == 2 and "gained deletes" in err, (done, err[-2000:])
    compare(cli, name, [r for r in ROWS if W.col(r, "id") >= 10], 3)
    assert live(cli, name)[1] == []


@pytest.mark.parametrize("point", ["compact.after-write", "before-commit"])
def test_kill_during_compaction_leaves_only_orphans(tmp_path, point):
    cli = O.Cli(tmp_path)
    name = "db.k"
    make_table(cli, name, 3)
    cli.ok("table", "delete", name, "--where", "id < 100")
    rows = [r for r in ROWS if W.col(r, "id") >= 100]
    metadata = cli.metadata(name)
    root = Path(O.local_path(metadata["location"]))
    before = set(O.list_files(root))
    killed = subprocess.run([str(O.LAKESYNC), "table", "compact", name],
                            env=dict(cli.env, LAKESYNC_FAILPOINTS=f"{point}=kill"), cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert cli.metadata(name)["current-snapshot-id"] == metadata["current-snapshot-id"]
    compare(cli, name, rows, 3)
    leftovers = set(O.list_files(root)) - before
    assert any(f.endswith(".parquet") for f in leftovers), leftovers
    # remove-orphans takes them (and the abandoned attempt's record); the table reads the same.
    out = json.loads(cli.ok("table", "remove-orphans", name, "--older-than", "now", "--apply", "--json"))
    deleted = {str(Path(O.local_path(f)).relative_to(root)) for f in out["deleted"]}
    assert deleted >= {f for f in leftovers if f.endswith(".parquet")}, (deleted, leftovers)
    assert set(O.list_files(root)) - before <= {f for f in leftovers if "lakesync-pending" in f}
    compare(cli, name, rows, 3)
    # The compaction, run again, completes.
    assert compact(cli, name)["snapshot_id"] is not None
    compare(cli, name, rows, 3)


def test_a_time_budget_of_zero_compacts_exactly_one_bin_and_the_next_run_the_rest(tmp_path):
    """`--max-duration 0` (deterministic: the budget is spent before the second bin on any machine):
    one bin is rewritten and committed, the others are reported as left; readers agree; the next run
    without a budget rewrites exactly the files left."""
    cli = O.Cli(tmp_path)
    name = "db.b"
    make_table(cli, name, 3)  # two partitions (bucket(id, 2)): two bins
    cli.ok("table", "delete", name, "--where", "id < 100")
    rows = [r for r in ROWS if W.col(r, "id") >= 100]
    plan = compact(cli, name, "--dry-run")
    assert plan["bins"] == 2, plan
    first = compact(cli, name, "--max-duration", "0")
    assert first["bins"] == 1 and first["bins_left"] == 1 and first["snapshot_id"] is not None, first
    assert first["rewritten_data_files"] + first["files_left"] == plan["rewritten_data_files"], (first, plan)
    assert set(first["rewritten_files"]) < set(plan["rewritten_files"])
    compare(cli, name, rows, 3)
    second = compact(cli, name)
    assert second["bins_left"] == 0 and second["rewritten_data_files"] == first["files_left"], second
    assert set(second["rewritten_files"]) == set(plan["rewritten_files"]) - set(first["rewritten_files"])
    compare(cli, name, rows, 3)


def lineage_from_files(cli: O.Cli, name: str) -> dict[int, tuple[int, int]]:
    """id -> (_row_id, _last_updated_sequence_number) of every row of the live data files, by the
    spec's rules from fastavro (manifests) and pyarrow (the files): a stored value where the file has
    the column and it is not null, else first_row_id + position and the file's data sequence number."""
    out = {}
    for e in live(cli, name)[0]:
        f = e["data_file"]
        t = pq.read_table(O.local_path(f["file_path"]))
        stored_ids = t["_row_id"].to_pylist() if "_row_id" in t.column_names else [None] * t.num_rows
        seq_col = "_last_updated_sequence_number"
        stored_seqs = t[seq_col].to_pylist() if seq_col in t.column_names else [None] * t.num_rows
        for pos, row_id in enumerate(t["id"].to_pylist()):
            out[row_id] = (stored_ids[pos] if stored_ids[pos] is not None else f["first_row_id"] + pos,
                           stored_seqs[pos] if stored_seqs[pos] is not None else e["sequence_number"])
    return out


def lineage_from_scan(cli: O.Cli, name: str) -> dict[int, tuple[int, int]]:
    return {r["id"]: (r["_row_id"], r["_last_updated_sequence_number"])
            for r in cli.scan_jsonl(name, "--row-lineage")}


def test_compaction_keeps_row_lineage_and_later_rows_get_fresh_ids(tmp_path):
    """v3 (spec "Row Lineage"): rows rewritten by compaction keep their _row_id and
    _last_updated_sequence_number — `scan --row-lineage` shows the same values per row before and
    after, and pyarrow finds them stored in the new files' reserved columns — and rows appended after
    the compaction get ids that no row had."""
    cli = O.Cli(tmp_path)
    name = "db.l"
    make_table(cli, name, 3)
    cli.ok("table", "delete", name, "--where", "id < 100 OR (id >= 400 AND id < 420)")
    live_ids = ids(ROWS) - set(range(100)) - set(range(400, 420))
    expected = {k: v for k, v in lineage_from_files(cli, name).items() if k in live_ids}
    assert len({v[0] for v in expected.values()}) == len(expected) == len(live_ids)
    assert len({v[1] for v in expected.values()}) == 4  # four appends, four sequence numbers
    assert lineage_from_scan(cli, name) == expected
    done = compact(cli, name)
    assert done["snapshot_id"] is not None and done["rewritten_data_files"] == 8, done
    assert lineage_from_scan(cli, name) == expected
    assert lineage_from_files(cli, name) == expected
    new_files = [e["data_file"]["file_path"] for e in live(cli, name)[0]]
    assert all("_row_id" in pq.read_schema(O.local_path(f)).names for f in new_files)
    compare(cli, name, [r for r in ROWS if W.col(r, "id") in live_ids], 3)
    # Rows appended now get fresh ids, above every id handed out so far.
    extra = [r for r in W.ALL_ROWS if W.col(r, "id") >= 800][:50]
    W.append_parquet(cli, name, [extra])
    after = lineage_from_scan(cli, name)
    fresh = {after[W.col(r, "id")][0] for r in extra}
    assert len(fresh) == 50 and not fresh & {v[0] for v in expected.values()}
    assert min(fresh) > max(v[0] for v in expected.values())
    assert {k: v for k, v in after.items() if k in expected} == expected


def test_upgrade_to_v3_with_position_and_equality_deletes_then_dvs_then_compaction(tmp_path):
    """`table upgrade --format-version 3` of a v2 table holding position delete files (one per
    partition, naming several data files) and equality deletes: every reader agrees right after the
    upgrade, after a deletion vector is written over the older position deletes, and after a
    compaction, which applies them all (pyiceberg, which refuses equality deletes, reads the states
    without them)."""
    cli = O.Cli(tmp_path)
    name = "db.up"
    make_table(cli, name, 2)
    cli.ok("table", "delete", name, "--where", "id < 150 OR (id >= 390 AND id < 410)")
    rows = [r for r in ROWS if not (W.col(r, "id") < 150 or 390 <= W.col(r, "id") < 410)]
    compare(cli, name, rows, 2)
    cli.ok("table", "upgrade", name, "--format-version", "3")
    compare(cli, name, rows, 3)
    cli.ok("table", "delete", name, "--where", "id >= 500 AND id < 520", "--mode", "equality",
           "--equality-columns", "id")
    rows = [r for r in rows if not 500 <= W.col(r, "id") < 520]
    compare(cli, name, rows, 3, pyiceberg=False)
    _, deletes = live(cli, name)
    kinds = {(e["data_file"]["content"], e["data_file"]["file_format"].upper()) for e in deletes}
    assert kinds == {(1, "PARQUET"), (2, "PARQUET")}, kinds

    # A deletion vector for files that have v2 position deletes carries them (one vector per file).
    cli.ok("table", "delete", name, "--where", "id >= 180 AND id < 200 OR id >= 760")
    rows = [r for r in rows if not (180 <= W.col(r, "id") < 200 or W.col(r, "id") >= 760)]
    compare(cli, name, rows, 3, pyiceberg=False)

    done = compact(cli, name)
    assert done["written_records"] == len(rows), done
    assert live(cli, name)[1] == []
    compare(cli, name, rows, 3)
    cli.ok("table", "delete", name, "--where", "id >= 700")
    compare(cli, name, [r for r in rows if W.col(r, "id") < 700], 3)


# ---------------------------------------------------------------------------------------------
# rewrite-manifests


def manifests_of_current(cli: O.Cli, name: str) -> list[dict]:
    return O.read_avro_records(cli.current_snapshot(name)["manifest-list"])


@pytest.mark.parametrize("version", [2, 3])
def test_rewrite_manifests_groups_by_spec_and_content_and_changes_no_row(tmp_path, version):
    cli = O.Cli(tmp_path)
    name = "db.m"
    make_table(cli, name, version)
    cli.ok("table", "delete", name, "--where", "id < 30")
    cli.ok("table", "delete", name, "--where", "id >= 780")
    rows = [r for r in ROWS if 30 <= W.col(r, "id") < 780]
    before = manifests_of_current(cli, name)
    assert len(before) >= 6, len(before)
    plan = json.loads(cli.ok("table", "rewrite-manifests", name, "--dry-run", "--json"))
    assert plan["snapshot_id"] is None and plan["manifests_rewritten"] == len(before), plan
    pre = cli.current_snapshot(name)
    done = json.loads(cli.ok("table", "rewrite-manifests", name, "--json"))
    assert done["manifests_created"] == 2 and done["snapshot_id"], done
    snap = cli.current_snapshot(name)
    assert snap["summary"]["operation"] == "replace" and snap["summary"]["manifests-created"] == "2"
    assert snap["summary"]["total-records"] == pre["summary"]["total-records"]
    after = manifests_of_current(cli, name)
    assert sorted(m["content"] for m in after) == [0, 1]
    # The same live files with the same sequence numbers.
    def entries(snapshot_id):
        return sorted((e["data_file"]["file_path"], e["sequence_number"], e["snapshot_id"],
                       e["data_file"].get("referenced_data_file"))
                      for e in O.manifest_entries(cli.metadata(name), snapshot_id))
    assert entries(snap["snapshot-id"]) == entries(pre["snapshot-id"])
    compare(cli, name, rows, version)
    # Nothing to do any more (one manifest per group).
    again = json.loads(cli.ok("table", "rewrite-manifests", name, "--json"))
    assert again["snapshot_id"] is None and again["manifests_rewritten"] == 0, again
    # Later commits and a compaction read right on top of the rewritten manifests; the changelog sees
    # no change in the rewrite.
    cli.ok("table", "delete", name, "--where", "id >= 700")
    rows = [r for r in rows if W.col(r, "id") < 700]
    compare(cli, name, rows, version)
    changes = [json.loads(line) for line in cli.ok("changes", "--source", "iceberg", "--table", name, "--format",
                                                  "jsonl", "--start-snapshot-id", str(snap["snapshot-id"])).splitlines()]
    assert sorted(c["id"] for c in changes) == list(range(700, 780))
    compact(cli, name)
    compare(cli, name, rows, version)
