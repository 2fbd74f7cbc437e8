"""The job file's `maintenance:` block (issue 16): after each run's commit the job compacts its target
when the deleted-row ratio passes the threshold, expires snapshots and removes orphans at most once per
`every` — decided from the table's own properties and an explicit clock (LAKESYNC_MAINTENANCE_NOW),
never from sleeps — and a failing step is reported in the run's summary without failing the run. The
target always equals the source as pyiceberg reads it."""
from __future__ import annotations

import time

import yaml

from test_iceberg_jobs import batch, mutate, source_table

HOUR_MS = 3600 * 1000


def maintenance_job(env, maintenance) -> object:
    job = env.job_from_example("iceberg-batch-cdc.yaml")
    doc = yaml.safe_load(job.read_text())
    doc["maintenance"] = maintenance
    job.write_text(yaml.safe_dump(doc))
    return job


def run_at(env, job, now_ms, *, failpoints=None):
    run_env = dict(env.env, LAKESYNC_MAINTENANCE_NOW=str(now_ms))
    if failpoints:
        run_env["LAKESYNC_FAILPOINTS"] = failpoints
    p, summaries = env.run_job(job, "--once", env=run_env)
    return summaries[-1]


def target(env):
    return env.catalog().load_table("lake.orders")


def test_maintenance_runs_when_due_by_threshold_and_schedule(env):
    src = source_table(env)
    for step in range(1, 3):
        mutate(src, step)
    job = maintenance_job(env, {
        "compact": {"when_deleted_ratio": 0.01},
        "expire_snapshots": {"older_than": "1h", "retain_last": 1, "every": "1h"},
        "remove_orphans": {"older_than": "1h", "every": "1d"},
    })
    t0 = int(time.time() * 1000) + 2 * HOUR_MS  # every snapshot is older than an hour "now"
    first = run_at(env, job, t0)
    assert first["status"] == "committed"
    m = first["maintenance"]["lake.orders"]
    assert m["expire_snapshots"]["status"] == "done" and m["remove_orphans"]["status"] == "done", m
    assert env.iceberg_rows("lake.orders") == env.iceberg_rows("src.orders")
    props = target(env).metadata.properties
    assert props["lakesync.maintenance.expire-snapshots.last-run-ms"] == str(t0)
    assert props["lakesync.maintenance.remove-orphans.last-run-ms"] == str(t0)

    # Deletes and updates of rows the target holds become deletion vectors: the ratio passes the
    # threshold and the run compacts; the schedules are not due half an hour later.
    src = env.catalog().load_table("src.orders")
    src.delete("order_id >= 105 and order_id < 112")
    src.upsert(batch([205, 206], "again"))
    second = run_at(env, job, t0 + HOUR_MS // 2)
    assert second["status"] == "committed"
    m = second["maintenance"]["lake.orders"]
    assert m["compact"]["status"] == "done" and m["compact"]["removed_delete_files"] > 0, m
    assert m["expire_snapshots"]["status"] == "not-due" and m["remove_orphans"]["status"] == "not-due", m
    table = target(env)
    assert table.current_snapshot().summary.operation.value == "replace"
    assert env.iceberg_rows("lake.orders") == env.iceberg_rows("src.orders")

    # Two hours on, expiry is due again (orphan removal is daily); nothing new to sync, the job's
    # position survives the expiry and the next change applies exactly once.
    third = run_at(env, job, t0 + 2 * HOUR_MS)
    assert third["status"] == "nothing-new"
    m = third["maintenance"]["lake.orders"]
    assert m["expire_snapshots"]["status"] == "done" and m["remove_orphans"]["status"] == "not-due", m
    assert m["compact"]["status"] == "not-due"
    mutate(env.catalog().load_table("src.orders"), 4)
    assert run_at(env, job, t0 + 3 * HOUR_MS)["status"] == "committed"
    assert env.iceberg_rows("lake.orders") == env.iceberg_rows("src.orders")


def test_a_failing_maintenance_step_is_reported_and_the_run_stands(env):
    src = source_table(env)
    mutate(src, 1)
    job = maintenance_job(env, {"compact": {"when_file_count": 2}})
    now = int(time.time() * 1000)
    summary = run_at(env, job, now)
    assert summary["maintenance"]["lake.orders"]["compact"]["status"] == "not-due", summary
    mutate(env.catalog().load_table("src.orders"), 2)
    summary = run_at(env, job, now, failpoints="compact.after-write=1")
    assert summary["status"] == "committed", summary
    compact = summary["maintenance"]["lake.orders"]["compact"]
    assert compact["status"] == "failed" and "compact.after-write" in compact["error"], compact
    assert env.iceberg_rows("lake.orders") == env.iceberg_rows("src.orders")
    # The next run compacts.
    summary = run_at(env, job, now)
    assert summary["maintenance"]["lake.orders"]["compact"]["status"] == "done", summary
    assert env.iceberg_rows("lake.orders") == env.iceberg_rows("src.orders")


def test_maintenance_block_errors_name_the_key(env):
    source_table(env)
    cases = [
        ({"compact": {"when_deleted_ratoi": 0.2}}, "when_deleted_ratio"),
        ({"compact": {"max_files": 10}}, "maintenance.compact needs when_deleted_ratio or when_file_count"),
        ({"compact": {"when_deleted_ratio": 2}}, "maintenance.compact.when_deleted_ratio must be a number from 0 to 1"),
        ({"expire_snapshots": {"every": "soon"}}, "maintenance.expire_snapshots.every"),
        ({"vacuum": {}}, "maintenance: unknown key 'vacuum'"),
    ]
    for block, message in cases:
        job = maintenance_job(env, block)
        p = env.lakesync("run", job, "--once", check=False)
        assert p.returncode == 2 and message in p.stderr, (block, p.returncode, p.stderr)
