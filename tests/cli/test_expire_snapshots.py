"""`lakesync table expire-snapshots` (issue 16): old snapshots leave the metadata in one commit and
the files only they referenced leave the disk; what readers see now does not change (pyiceberg reads
the same rows), tags and the newest snapshots stay, and a sync job whose position was carried by an
expired snapshot resumes exactly (the position moves into the table properties)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
import oracles as O  # noqa: E402

pytestmark = O.needs_lakesync
REPO = Path(__file__).resolve().parents[2]


def pyiceberg_catalog(cli: O.Cli):
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog("lakesync", uri=f"sqlite:///{cli.catalog_db}", warehouse=f"file://{cli.warehouse}")


def referenced_files(table) -> set[str]:
    """Every file the table's snapshots reference, as pyiceberg lists them (manifest lists, manifests,
    data and delete files)."""
    files = set()
    io = table.io
    for snapshot in table.metadata.snapshots:
        files.add(snapshot.manifest_list)
        for manifest in snapshot.manifests(io):
            files.add(manifest.manifest_path)
            for entry in manifest.fetch_manifest_entry(io, discard_deleted=False):
                files.add(entry.data_file.file_path)
    return {f.removeprefix("file://") for f in files}


def files_on_disk(table) -> set[str]:
    root = Path(table.metadata.location.removeprefix("file://"))
    return {str(p) for p in root.rglob("*") if p.is_file() and not p.name.endswith(".metadata.json")}


def rows(table) -> list[tuple]:
    return sorted(tuple(r.values()) for r in table.scan().to_arrow().to_pylist())


def make_history(cli: O.Cli, tmp_path: Path, format_version: int = 3) -> None:
    """A table with five snapshots: three appends, then two deletes (v3: deletion vectors, the second
    replacing the first's for the file they share; v2: position delete files)."""
    for i in range(3):
        f = tmp_path / f"part{i}.parquet"
        pq.write_table(pa.table({"id": pa.array(range(i * 100, i * 100 + 100), pa.int64()),
                                 "v": [f"r{i}-{k}" for k in range(100)]}), f)
        if i == 0:
            cli.ok("namespace", "create", "db")
            cli.ok("table", "create", "db.t", "--schema-from", f, "--format-version", str(format_version))
        cli.ok("table", "append", "db.t", f)
    cli.ok("table", "delete", "db.t", "--where", "id < 10")
    cli.ok("table", "delete", "db.t", "--where", "id >= 290 or id = 10")


def test_expire_keeps_what_readers_see_and_deletes_only_unreferenced_files(tmp_path):
    cli = O.Cli(tmp_path)
    make_history(cli, tmp_path)
    table = pyiceberg_catalog(cli).load_table("db.t")
    before_rows, before_snapshots = rows(table), len(table.metadata.snapshots)
    assert before_snapshots == 5 and len(before_rows) == 279
    before_disk = files_on_disk(table)

    # A dry run says what it would do and changes nothing.
    plan = json.loads(cli.ok("table", "expire-snapshots", "db.t", "--older-than", "now", "--dry-run", "--json"))
    assert len(plan["expired_snapshot_ids"]) == 4 and plan["retained_snapshots"] == 1
    assert plan["files_to_delete"], plan
    assert files_on_disk(table) == before_disk
    assert len(pyiceberg_catalog(cli).load_table("db.t").metadata.snapshots) == before_snapshots

    done = json.loads(cli.ok("table", "expire-snapshots", "db.t", "--older-than", "now", "--json"))
    assert sorted(done["expired_snapshot_ids"]) == sorted(plan["expired_snapshot_ids"])
    assert sorted(done["deleted_files"]) == sorted(plan["files_to_delete"])
    assert done["undeleted_files"] == []
    deleted = {f.removeprefix("file://") for f in done["deleted_files"]}
    after = pyiceberg_catalog(cli).load_table("db.t")
    assert [s.snapshot_id for s in after.metadata.snapshots] == [after.metadata.current_snapshot_id]
    assert rows(after) == before_rows
    assert sorted(r["id"] for r in cli.scan_jsonl("db.t")) == [r[0] for r in before_rows]
    # Every file the remaining snapshot references is there; every data, delete, manifest or manifest
    # list file on disk is referenced (the replaced deletion vectors and old manifests are gone).
    on_disk, referenced = files_on_disk(after), referenced_files(after)
    assert referenced <= on_disk, referenced - on_disk
    assert not {f for f in on_disk - referenced if f.endswith((".parquet", ".avro", ".puffin"))}
    assert deleted == before_disk - on_disk
    # Nothing left to expire.
    again = json.loads(cli.ok("table", "expire-snapshots", "db.t", "--older-than", "now", "--json"))
    assert again["expired_snapshot_ids"] == [] and again["deleted_files"] == []


def test_tags_retain_last_and_age_are_kept(tmp_path):
    """On a v2 table (pyiceberg, which sets the tag here, writes v2 only)."""
    cli = O.Cli(tmp_path)
    make_history(cli, tmp_path, format_version=2)
    table = pyiceberg_catalog(cli).load_table("db.t")
    snapshots = table.metadata.snapshots
    tagged = snapshots[1].snapshot_id
    table.manage_snapshots().create_tag(tagged, "audit").commit()
    tagged_rows = sorted(tuple(r.values()) for r in table.scan(snapshot_id=tagged).to_arrow().to_pylist())
    # Nothing is old enough by default (5 days).
    done = json.loads(cli.ok("table", "expire-snapshots", "db.t", "--json"))
    assert done["expired_snapshot_ids"] == []
    done = json.loads(cli.ok("table", "expire-snapshots", "db.t", "--older-than", "now", "--retain-last", "2", "--json"))
    after = pyiceberg_catalog(cli).load_table("db.t")
    kept = {s.snapshot_id for s in after.metadata.snapshots}
    assert kept == {tagged, snapshots[-1].snapshot_id, snapshots[-2].snapshot_id}, done
    assert sorted(tuple(r.values()) for r in after.scan(snapshot_id=tagged).to_arrow().to_pylist()) == tagged_rows
    assert cli.fail("table", "expire-snapshots", "db.t", "--older-than", "yesterday")[1].count("--older-than") >= 1


def test_a_job_resumes_exactly_after_its_position_snapshot_expired(tmp_path):
    """The job's position lives in its commit's summary and (since the sink writes one) in the table
    properties. Here the property is removed first, as a table written by an older lakesync lacks
    it: expire-snapshots must then move the position into the properties itself. The target is v2
    because pyiceberg, which removes the property, writes v2 only."""
    pytest.importorskip("deltalake")
    import subprocess

    from deltalake import DeltaTable

    cli = O.Cli(tmp_path)
    delta = tmp_path / "orders_delta"
    demo = [sys.executable, str(REPO / "examples" / "demo_delta.py")]
    subprocess.run([*demo, "create", str(delta)], check=True, capture_output=True)
    subprocess.run([*demo, "change", str(delta)], check=True, capture_output=True)
    job = tmp_path / "job.yaml"
    job.write_text((REPO / "examples" / "delta-cdf-to-iceberg-v3-dv.yaml").read_text()
                   .replace("./example-data/orders_delta", str(delta))
                   .replace("format-version: '3'", "format-version: '2'"))
    cli.ok("run", job, "--once")
    table = pyiceberg_catalog(cli).load_table("shop.orders_v3")
    (key,) = [k for k in table.properties if k.startswith("lakesync.source-position.")]
    position = table.properties[key]
    with table.transaction() as tx:
        tx.remove_properties(key)
    # A commit by something else on top of the job's (it deletes one order): the job's position is
    # now only in an older snapshot, which expires.
    gone = min(r["order_id"] for r in table.scan().to_arrow().to_pylist())
    cli.ok("table", "delete", "shop.orders_v3", "--where", f"order_id = {gone}")
    table = pyiceberg_catalog(cli).load_table("shop.orders_v3")
    assert key not in table.properties and len(table.metadata.snapshots) >= 2
    assert key not in (table.current_snapshot().summary.additional_properties or {})
    done = json.loads(cli.ok("table", "expire-snapshots", "shop.orders_v3", "--older-than", "now", "--json"))
    assert done["expired_snapshot_ids"], done
    assert done["positions_kept_in_properties"] == [key.removeprefix("lakesync.source-position.")], done
    table = pyiceberg_catalog(cli).load_table("shop.orders_v3")
    assert len(table.metadata.snapshots) == 1
    assert not any(key in s.summary.additional_properties for s in table.metadata.snapshots)
    assert table.properties[key] == position
    # The job goes on from its position: only the new versions are applied, nothing twice (the order
    # deleted by hand aside).
    subprocess.run([*demo, "change", str(delta)], check=True, capture_output=True)
    cli.ok("run", job, "--once")
    cols = ["order_id", "customer", "region", "amount"]
    expected = sorted(tuple(r[c] for c in cols) for r in DeltaTable(str(delta)).to_pyarrow_table().to_pylist())
    actual = sorted(tuple(r[c] for c in cols) for r in
                    pyiceberg_catalog(cli).load_table("shop.orders_v3").scan().to_arrow().to_pylist())
    assert [r for r in actual if r[0] != gone] == [r for r in expected if r[0] != gone]


def test_remove_orphans_takes_only_unreferenced_files_older_than_the_window(tmp_path):
    """`table remove-orphans`: a dry run by default; --apply deletes unreferenced files older than
    --older-than (3 days by default) and nothing any snapshot references (time travel to the oldest
    snapshot still reads, as pyiceberg sees it)."""
    import os
    import time

    cli = O.Cli(tmp_path)
    make_history(cli, tmp_path)
    table = pyiceberg_catalog(cli).load_table("db.t")
    first = table.metadata.snapshots[0].snapshot_id
    first_rows = sorted(tuple(r.values()) for r in table.scan(snapshot_id=first).to_arrow().to_pylist())
    current_rows = rows(table)
    root = Path(table.metadata.location.removeprefix("file://"))
    old = root / "data" / "stray-old.parquet"
    young = root / "data" / "stray-young.parquet"
    old_manifest = root / "metadata" / "stray-old-m0.avro"
    for f in (old, young, old_manifest):
        f.write_bytes(b"not referenced by anything")
    ten_days_ago = time.time() - 10 * 86400
    os.utime(old, (ten_days_ago, ten_days_ago))
    os.utime(old_manifest, (ten_days_ago, ten_days_ago))
    referenced = referenced_files(table)

    dry = json.loads(cli.ok("table", "remove-orphans", "db.t", "--json"))
    assert {Path(f.removeprefix("file://")) for f in dry["orphans"]} == {old, old_manifest}, dry
    assert any(f.endswith("stray-young.parquet") for f in dry["too_young"]), dry
    assert old.exists() and old_manifest.exists()

    done = json.loads(cli.ok("table", "remove-orphans", "db.t", "--apply", "--json"))
    assert {Path(f.removeprefix("file://")) for f in done["deleted"]} == {old, old_manifest}
    assert not old.exists() and not old_manifest.exists() and young.exists()

    done = json.loads(cli.ok("table", "remove-orphans", "db.t", "--older-than", "now", "--apply", "--json"))
    assert [Path(f.removeprefix("file://")) for f in done["deleted"]] == [young]
    after = pyiceberg_catalog(cli).load_table("db.t")
    assert referenced <= files_on_disk(after)
    assert rows(after) == current_rows
    assert sorted(tuple(r.values()) for r in after.scan(snapshot_id=first).to_arrow().to_pylist()) == first_rows
    # Nothing left: every file under the table is referenced (or table metadata).
    again = json.loads(cli.ok("table", "remove-orphans", "db.t", "--older-than", "now", "--json"))
    assert again["orphans"] == [], again


def expire_killed_at(cli: O.Cli, tmp_path: Path, failpoints: str, *args) -> None:
    import subprocess

    killed = subprocess.run([str(O.LAKESYNC), *map(str, args)], env=dict(cli.env, LAKESYNC_FAILPOINTS=failpoints),
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert killed.returncode == -9, (failpoints, killed.returncode, killed.stderr[-2000:])


def unreferenced(table) -> set[str]:
    """Data, delete, manifest and manifest-list files on disk that no snapshot references."""
    return {f for f in files_on_disk(table) - referenced_files(table) if f.endswith((".parquet", ".avro", ".puffin"))}


@pytest.mark.parametrize("point", ["expire.before-commit", "expire.after-commit", "expire.after-delete"])
def test_kill_during_expiry_leaves_the_table_as_it_read_and_only_orphans(tmp_path, point):
    """kill -9 before the metadata commit, after it (nothing deleted yet), and after the first file
    deleted: readers see the same rows (pyiceberg, lakesync scan), every referenced file is there, what
    is left are orphans, which remove-orphans deletes — itself killed after its first delete and
    rerun — and expiry run again completes."""
    cli = O.Cli(tmp_path)
    make_history(cli, tmp_path)
    table = pyiceberg_catalog(cli).load_table("db.t")
    before_rows, before_disk = rows(table), files_on_disk(table)
    plan = json.loads(cli.ok("table", "expire-snapshots", "db.t", "--older-than", "now", "--dry-run", "--json"))
    doomed = {f.removeprefix("file://") for f in plan["files_to_delete"]}
    assert len(doomed) >= 3, plan

    expire_killed_at(cli, tmp_path, f"{point}=kill", "table", "expire-snapshots", "db.t", "--older-than", "now")
    after = pyiceberg_catalog(cli).load_table("db.t")
    assert rows(after) == before_rows
    assert sorted(r["id"] for r in cli.scan_jsonl("db.t")) == [r[0] for r in before_rows]
    assert referenced_files(after) <= files_on_disk(after)
    if point == "expire.before-commit":
        assert len(after.metadata.snapshots) == 5 and files_on_disk(after) == before_disk
        assert unreferenced(after) == set()
    else:
        assert [s.snapshot_id for s in after.metadata.snapshots] == [after.metadata.current_snapshot_id]
        left = unreferenced(after)
        assert left <= doomed and len(left) == len(doomed) - (1 if point == "expire.after-delete" else 0), left
        # remove-orphans killed after its first delete; a rerun finishes the job.
        expire_killed_at(cli, tmp_path, "remove-orphans.after-delete=kill",
                         "table", "remove-orphans", "db.t", "--older-than", "now", "--apply")
        rest = unreferenced(after)
        assert rest < left and len(rest) == len(left) - 1
        assert rows(pyiceberg_catalog(cli).load_table("db.t")) == before_rows
        done = json.loads(cli.ok("table", "remove-orphans", "db.t", "--older-than", "now", "--apply", "--json"))
        assert {f.removeprefix("file://") for f in done["deleted"]} >= rest, done
        assert unreferenced(after) == set()
    again = json.loads(cli.ok("table", "expire-snapshots", "db.t", "--older-than", "now", "--json"))
    assert bool(again["expired_snapshot_ids"]) == (point == "expire.before-commit"), again
    final = pyiceberg_catalog(cli).load_table("db.t")
    assert rows(final) == before_rows and unreferenced(final) == set()
    assert files_on_disk(final) == before_disk - doomed


def test_time_budget_of_expiry_and_orphan_removal(tmp_path):
    """`--max-duration 0` bounds planning too (no timing involved: a budget of zero is spent before any
    work beyond the first unit, on any machine). Expiry commits, reads no manifest and deletes exactly
    one file — an expired snapshot's manifest list, which needs no reading — names the other expired
    manifest lists as left and says the rest was not read (`files_unknown`): every file the dry run
    would have deleted and this one did not is an orphan. remove-orphans lists directory by directory
    until it has found an orphan, deletes exactly one per run and names the directories it did not
    list; run after run it deletes them all (with a stray file in data/, orphans are in two
    directories)."""
    cli = O.Cli(tmp_path)
    make_history(cli, tmp_path)
    before_rows = rows(pyiceberg_catalog(cli).load_table("db.t"))
    before = cli.metadata("db.t")
    plan = json.loads(cli.ok("table", "expire-snapshots", "db.t", "--older-than", "now", "--dry-run", "--json"))
    assert plan["files_unknown"] is False
    doomed = {f.removeprefix("file://") for f in plan["files_to_delete"]}
    done = json.loads(cli.ok("table", "expire-snapshots", "db.t", "--older-than", "now", "--max-duration", "0",
                             "--json"))
    assert len(done["expired_snapshot_ids"]) == 4 and len(done["deleted_files"]) == 1, done
    assert done["files_unknown"] is True, done
    lists = {s["manifest-list"].removeprefix("file://") for s in before["snapshots"]
             if s["snapshot-id"] in done["expired_snapshot_ids"]}
    deleted = {f.removeprefix("file://") for f in done["deleted_files"]}
    left = {f.removeprefix("file://") for f in done["left_files"]}
    assert deleted | left == lists and not deleted & left, done
    table = pyiceberg_catalog(cli).load_table("db.t")
    assert unreferenced(table) == doomed - deleted and rows(table) == before_rows
    out = cli.ok("table", "expire-snapshots", "db.t", "--older-than", "now", "--max-duration", "0")
    assert "time budget" not in out  # nothing left to expire: nothing to say about the budget

    data_dir = Path(table.metadata.location.removeprefix("file://")) / "data"
    (data_dir / "stray-of-a-killed-writer.parquet").write_bytes(b"PAR1")  # an orphan in a second directory
    orphans = unreferenced(table)
    directories = {str(Path(f).parent) for f in orphans}
    assert len(orphans) >= 3 and len(directories) >= 2, orphans
    unlisted_seen = False
    for n in range(len(orphans), 0, -1):
        step = json.loads(cli.ok("table", "remove-orphans", "db.t", "--older-than", "now", "--apply",
                                 "--max-duration", "0", "--json"))
        assert len(step["deleted"]) == 1 and len(unreferenced(table)) == n - 1, step
        unlisted_seen = unlisted_seen or bool(step["unlisted_directories"])
    assert unlisted_seen, "no run stopped listing early although the orphans were in several directories"
    last = json.loads(cli.ok("table", "remove-orphans", "db.t", "--older-than", "now", "--apply", "--max-duration",
                             "1h", "--json"))
    assert last["deleted"] == [] and last["left"] == [] and last["unlisted_directories"] == [], last
    assert unreferenced(table) == set() and rows(pyiceberg_catalog(cli).load_table("db.t")) == before_rows
    assert "--max-duration" in cli.fail("table", "compact", "db.t", "--max-duration", "soon")[1]
