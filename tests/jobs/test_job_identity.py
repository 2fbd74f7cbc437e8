"""The traps between a user and a correct target (issue 13): a job's identity must not depend on its
file name or on the folder it is run from, a first run must not import into a target that already
holds rows or someone else's progress, and --dry-run must write nothing. The Delta source is written
by deltalake and the target read by pyiceberg; every check compares rows, duplicates kept."""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from pathlib import Path

import yaml

from job_support import LAKESYNC


def summaries_of(p):
    return [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]


def test_renaming_or_copying_a_job_file_does_not_duplicate_rows(env):
    env.delta_create()
    env.delta_change(1)
    job = env.job_from_example("delta-cdf-to-iceberg-v3-dv.yaml")
    p, first = env.run_job(job, "--once")
    sink_id = first[-1]["sink_id"]
    assert first[-1]["status"] == "committed"
    # The file renamed (and its `name` changed too): same source, same target, same progress.
    renamed = env.root / "renamed-job.yaml"
    doc = yaml.safe_load(job.read_text())
    doc["name"] = "a-different-name"
    renamed.write_text(yaml.safe_dump(doc))
    job.unlink()
    env.delta_change(1)
    p, runs = env.run_job(renamed, "--once")
    assert [r["sink_id"] for r in runs] == [sink_id]
    assert runs[-1]["status"] == "committed" and not runs[-1].get("initial_snapshot"), p.stdout
    assert runs[-1]["range"]["from"] == first[-1]["range"]["through"] + 1
    assert env.iceberg_rows("shop.orders_v3") == env.delta_rows()  # duplicates would show here
    # And a copy under yet another name finds nothing new.
    copy = env.root / "copy.yaml"
    shutil.copy(renamed, copy)
    assert env.run_job(copy, "--once")[1][-1]["status"] == "nothing-new"


def test_running_from_another_folder_uses_the_same_warehouse_and_source(env, tmp_path):
    # No LAKESYNC_WAREHOUSE: the embedded warehouse lives next to the job file, and the job's relative
    # source path is relative to the job file too.
    jobs = env.root / "jobs"
    jobs.mkdir()
    delta = jobs / "data" / "orders_delta"
    env.delta_create(delta)
    doc = yaml.safe_load((Path(__file__).resolve().parents[2] / "examples" / "delta-cdf-to-iceberg-v2.yaml")
                         .read_text())
    doc["source"]["table"] = "./data/orders_delta"
    job = jobs / "job.yaml"
    job.write_text(yaml.safe_dump(doc))
    plain_env = {k: v for k, v in env.env.items() if k != "LAKESYNC_WAREHOUSE"}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    p, runs = env.run_job(job, "--once", env=plain_env, cwd=jobs)
    assert runs[-1]["status"] in ("committed", "nothing-new"), p.stderr
    env.delta_change(1, path=delta)
    p, runs = env.run_job(job, "--once", env=plain_env, cwd=elsewhere)
    assert runs[-1]["status"] == "committed" and not runs[-1].get("initial_snapshot"), p.stdout + p.stderr
    assert not (elsewhere / "lakesync-warehouse").exists(), "a second warehouse was created"
    warehouse = jobs / "lakesync-warehouse"
    assert env.iceberg_rows("shop.orders_v2", warehouse) == env.delta_rows(delta)
    status = json.loads(env.lakesync("status", job, env=plain_env, cwd=elsewhere).stdout)
    assert status["up_to_date"] is True


def test_an_import_into_a_target_that_holds_rows_is_refused(env):
    env.delta_create()
    env.delta_change(1)
    first = env.job_from_example("delta-cdf-to-iceberg-v2.yaml")
    env.run_job(first, "--once")
    before = env.iceberg_rows("shop.orders_v2")
    snapshot = env.catalog().load_table("shop.orders_v2").current_snapshot().snapshot_id

    # Another Delta table imported into the same Iceberg table.
    other = env.root / "other_delta"
    env.delta_create(other)
    second = env.root / "second.yaml"
    doc = yaml.safe_load(first.read_text())
    doc["source"]["table"] = str(other)
    second.write_text(yaml.safe_dump(doc))
    p = env.lakesync("run", second, "--once", check=False)
    assert p.returncode == 2, p.stderr
    assert "shop.orders_v2 holds" in p.stderr and "rows" in p.stderr, p.stderr
    assert "if_target_not_empty" in p.stderr and "Nothing was written" in p.stderr, p.stderr
    assert env.catalog().load_table("shop.orders_v2").current_snapshot().snapshot_id == snapshot
    assert env.iceberg_rows("shop.orders_v2") == before

    # Saying what to do: overwrite replaces the target's rows with the other table's.
    doc["source"]["initial_snapshot"] = {"if_target_not_empty": "overwrite"}
    doc["sink"]["sink_id"] = "second-source"
    second.write_text(yaml.safe_dump(doc))
    p, runs = env.run_job(second, "--once")
    assert runs[0]["initial_snapshot"] is True
    assert env.iceberg_rows("shop.orders_v2") == env.delta_rows(other)


def test_an_import_counts_the_rows_of_a_target_whose_summary_has_no_totals(env):
    # The spec leaves a snapshot summary's totals optional. A target written by another engine that
    # omits them (and has no lakesync progress) must still count as holding rows: the rows are then
    # counted from its manifests, not taken as zero.
    env.delta_create()
    env.delta_change(1)
    job = env.job_from_example("delta-cdf-to-iceberg-v2.yaml")
    env.run_job(job, "--once")
    before = env.iceberg_rows("shop.orders_v2")
    assert before

    table = env.catalog().load_table("shop.orders_v2")
    old_location = table.metadata_location
    metadata = json.loads(Path(old_location.removeprefix("file://")).read_text())
    for snap in metadata["snapshots"]:
        snap["summary"] = {k: v for k, v in snap["summary"].items()
                           if not k.startswith("total-") and not k.startswith("lakesync.")}
    metadata["properties"] = {k: v for k, v in metadata.get("properties", {}).items()
                              if not k.startswith("lakesync.")}
    new_location = old_location.replace(".metadata.json", "-foreign.metadata.json")
    Path(new_location.removeprefix("file://")).write_text(json.dumps(metadata))
    with sqlite3.connect(env.warehouse / "catalog.db") as db:
        changed = db.execute("UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? "
                             "WHERE table_name = 'orders_v2'", (new_location, old_location)).rowcount
    assert changed == 1

    p = env.lakesync("run", job, "--once", check=False)
    assert p.returncode == 2, p.stdout + p.stderr
    assert f"shop.orders_v2 holds {len(before)} rows" in p.stderr, p.stderr
    assert "Nothing was written" in p.stderr, p.stderr
    assert env.catalog().load_table("shop.orders_v2").metadata_location == new_location
    assert env.iceberg_rows("shop.orders_v2") == before


def test_progress_under_an_older_file_named_sink_id_is_never_ignored(env):
    # What an older lakesync left: progress under the job's name.
    env.delta_create()
    env.delta_change(1)
    job = env.job_from_example("delta-cdf-to-iceberg-v2.yaml", sink__sink_id="orders-delta-to-iceberg")
    env.run_job(job, "--once")
    env.delta_change(1)
    doc = yaml.safe_load(job.read_text())
    del doc["sink"]["sink_id"]
    job.write_text(yaml.safe_dump(doc))
    p = env.lakesync("run", job, "--once", check=False)
    assert p.returncode == 2, p.stderr
    assert "sink_id: orders-delta-to-iceberg" in p.stderr, p.stderr
    # Doing what the message says continues from that progress.
    doc["sink"]["sink_id"] = "orders-delta-to-iceberg"
    job.write_text(yaml.safe_dump(doc))
    p, runs = env.run_job(job, "--once")
    assert runs[-1]["status"] == "committed" and not runs[-1].get("initial_snapshot")
    assert env.iceberg_rows("shop.orders_v2") == env.delta_rows()


def test_dry_run_prints_the_plan_and_commits_nothing(env):
    env.delta_create()
    env.delta_change(2)
    job = env.job_from_example("delta-cdf-to-iceberg-v3-dv.yaml")
    p = env.lakesync("run", job, "--dry-run")
    plan = json.loads(p.stdout)
    assert plan["dry_run"] is True and plan["target"] == "shop.orders_v3" and plan["catalog"] == "lakesync"
    assert plan["warehouse"].endswith(str(env.warehouse))
    assert [s["step"] for s in plan["steps"]] == ["import", "changes"]
    assert plan["steps"][0]["position"] == 0 and plan["steps"][0]["changes"] == 6  # demo_delta: 6 orders
    assert plan["steps"][1]["from"] == 1 and plan["steps"][1]["changes"] > 0
    assert not env.catalog().table_exists("shop.orders_v3")
    p, runs = env.run_job(job, "--once")
    assert runs[-1]["sink_id"] == plan["sink_id"]
    assert runs[-1]["rows"]["total"] == plan["steps"][1]["changes"]


def test_status_reports_time_lag_last_run_and_fails_if_lagging(env):
    env.delta_create()
    job = env.job_from_example("delta-cdf-to-iceberg-v2.yaml")
    env.run_job(job, "--once")
    status = json.loads(env.lakesync("status", job).stdout)
    assert status["up_to_date"] is True and status["lag_seconds"] == 0
    assert status["running"] is False and status["last_run"]["status"] in ("committed", "nothing-new")
    assert status["last_error"] is None
    # A new commit, an hour old by its file time (lakesync's commit time for tables without
    # in-commit timestamps): the job lags by at least that.
    env.delta_change(1)
    logs = sorted((env.delta / "_delta_log").glob("*.json"))
    now = time.time()
    os.utime(logs[0], (now - 7200, now - 7200))  # version 0, applied
    os.utime(logs[1], (now - 3600, now - 3600))  # version 1, the first not applied yet
    status = json.loads(env.lakesync("status", job).stdout)
    assert status["up_to_date"] is False and status["lag_seconds"] >= 3600, status
    assert env.lakesync("status", job, "--fail-if-lag", "2h").returncode == 0
    p = env.lakesync("status", job, "--fail-if-lag", "30m", check=False)
    assert p.returncode == 5 and "lags" in p.stderr, p.stderr


def test_a_failed_run_is_recorded_for_status(env):
    env.delta_create()
    job = env.job_from_example("delta-cdf-to-iceberg-v2.yaml")
    env.run_job(job, "--once")
    # The change data files of the next versions vanish: the run fails, and status says how.
    env.delta_change(1)
    shutil.rmtree(env.delta / "_change_data")
    p = env.lakesync("run", job, "--once", check=False)
    assert p.returncode == 3, p.stderr
    status = json.loads(env.lakesync("status", job).stdout)
    assert status["last_error"]["kind"] == "not found" and "_change_data" in status["last_error"]["message"], status
    assert status["last_run"]["status"] in ("committed", "nothing-new")  # the run before it
    # The state is replaced whole each time (a temporary file renamed over it): none is left behind.
    state_files = sorted(p.suffix for p in (env.root / "state").iterdir())
    assert state_files and set(state_files) <= {".json", ".lock"}, state_files
