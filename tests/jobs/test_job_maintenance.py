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


def maintenance_job(env, maintenance, partition_fields=None) -> object:
    job = env.job_from_example("iceberg-batch-cdc.yaml")
    doc = yaml.safe_load(job.read_text())
    doc["maintenance"] = maintenance
    if partition_fields:
        doc["sink"]["partition_fields"] = partition_fields
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


def test_kill_during_the_jobs_expiry_loses_no_position_and_leaves_only_orphans(env):
    """The job's expire step killed with SIGKILL after its metadata commit and, in a later run, after
    its first file deleted: the run's own commit stands each time (target equals source), the job
    resumes exactly, and what is left are orphans that the remove_orphans step then deletes."""
    src = source_table(env)
    mutate(src, 1)
    job = maintenance_job(env, {"expire_snapshots": {"older_than": "1h", "retain_last": 1, "every": "1h"}})
    t0 = int(time.time() * 1000) + 2 * HOUR_MS
    assert run_at(env, job, t0)["status"] == "committed"
    for k, point in enumerate(["expire.after-commit", "expire.after-delete"]):
        mutate(env.catalog().load_table("src.orders"), 2 + k)
        run_env = dict(env.env, LAKESYNC_MAINTENANCE_NOW=str(t0 + (k + 1) * 2 * HOUR_MS),
                       LAKESYNC_FAILPOINTS=f"{point}=kill")
        p, _ = env.run_job(job, "--once", check=False, env=run_env)
        assert p.returncode == -9, (point, p.returncode, p.stderr[-2000:])
        assert env.iceberg_rows("lake.orders") == env.iceberg_rows("src.orders")
    # Nothing new: the position survived both kills; the next change applies exactly once.
    later = t0 + 6 * HOUR_MS
    assert run_at(env, job, later)["status"] == "nothing-new"
    mutate(env.catalog().load_table("src.orders"), 4)
    assert run_at(env, job, later)["status"] == "committed"
    assert env.iceberg_rows("lake.orders") == env.iceberg_rows("src.orders")
    # The orphans the kills left go with the remove_orphans step (its window: an hour before "now").
    job = maintenance_job(env, {"remove_orphans": {"older_than": "1h", "every": "1d", "max_duration": "10m"}})
    summary = run_at(env, job, later + 48 * HOUR_MS)
    step = summary["maintenance"]["lake.orders"]["remove_orphans"]
    assert step["status"] == "done" and step["deleted_files"] > 0 and step["left_files"] == 0, step
    assert env.iceberg_rows("lake.orders") == env.iceberg_rows("src.orders")


def test_a_compaction_budget_of_zero_rewrites_one_bin_per_run(env):
    """`max_duration: 0` (one unit of work: deterministic on any machine): each run commits one bin
    and reports the rest as left; the target equals the source throughout."""
    src = source_table(env)
    mutate(src, 1)
    # Four partitions: a bin per partition whose files qualify.
    job = maintenance_job(env, {"compact": {"when_file_count": 1, "max_duration": 0}},
                          partition_fields=["bucket(order_id, 4)"])
    now = int(time.time() * 1000)
    first = run_at(env, job, now)["maintenance"]["lake.orders"]["compact"]
    mutate(env.catalog().load_table("src.orders"), 2)
    summary = run_at(env, job, now)
    compact = summary["maintenance"]["lake.orders"]["compact"]
    assert compact["status"] == "done" and compact["bins"] == 1 and compact["bins_left"] >= 1, (first, compact)
    assert env.iceberg_rows("lake.orders") == env.iceberg_rows("src.orders")
    left = compact["bins_left"]
    while left > 0:
        nxt = run_at(env, job, now)["maintenance"]["lake.orders"]["compact"]
        assert nxt["status"] == "done" and nxt["bins"] == 1 and nxt["bins_left"] == left - 1, nxt
        assert env.iceberg_rows("lake.orders") == env.iceberg_rows("src.orders")
        left -= 1


def test_maintenance_block_errors_name_the_key(env):
    source_table(env)
    cases = [
        ({"compact": {"when_deleted_ratoi": 0.2}}, "when_deleted_ratio"),
        ({"compact": {"when_read_overhead": -1}}, "maintenance.compact.when_read_overhead must be a positive number"),
        ({"compact": {"when_deleted_ratio": 2}}, "maintenance.compact.when_deleted_ratio must be a number from 0 to 1"),
        ({"expire_snapshots": {"every": "soon"}}, "maintenance.expire_snapshots.every"),
        ({"vacuum": {}}, "maintenance: unknown key 'vacuum'"),
        ({"remove_orphans": {"max_duration": "-1m"}}, "maintenance.remove_orphans.max_duration"),
    ]
    for block, message in cases:
        job = maintenance_job(env, block)
        p = env.lakesync("run", job, "--once", check=False)
        assert p.returncode == 2 and message in p.stderr, (block, p.returncode, p.stderr)


def test_compact_without_a_trigger_compacts_when_reading_costs_a_tenth_more(env):
    """`compact: {}` takes the default trigger, `when_read_overhead: 0.1`: the estimated extra read work
    against the compacted table — deleted rows plus 5,000 rows per data file beyond the first and per
    delete file, over the live rows — computed here from the snapshot summary pyiceberg reads. The
    first sync writes one file: nothing to do; the next adds a file to this small table, which passes
    the threshold by far, and the job compacts to one file."""
    src = source_table(env)
    mutate(src, 1)
    job = maintenance_job(env, {"compact": {}})
    now = int(time.time() * 1000)

    def overhead(summary) -> tuple[float, int]:
        n = {k: int(summary[k]) for k in ("total-records", "total-position-deletes", "total-equality-deletes",
                                          "total-data-files", "total-delete-files")}
        deleted = n["total-position-deletes"] + n["total-equality-deletes"]
        extra = n["total-data-files"] - 1 + n["total-delete-files"]
        return (deleted + 5000 * extra) / (n["total-records"] - deleted), extra

    first = run_at(env, job, now)["maintenance"]["lake.orders"]["compact"]
    expected, extra = overhead(target(env).current_snapshot().summary)
    assert first["status"] == ("done" if extra > 0 else "not-due"), (first, extra)
    assert abs(first["read_overhead"] - expected) < 1e-9, (first, expected)
    mutate(src, 2)
    second = run_at(env, job, now)["maintenance"]["lake.orders"]["compact"]
    table = target(env)
    assert second["status"] == "done", second
    expected, extra = overhead(table.snapshot_by_id(table.current_snapshot().parent_snapshot_id).summary)
    assert extra >= 1 and abs(second["read_overhead"] - expected) < 1e-9 and expected >= 0.1, (second, expected)
    assert table.current_snapshot().summary.operation.value == "replace"
    assert len(list(table.scan().plan_files())) == 1
    assert env.iceberg_rows("lake.orders") == env.iceberg_rows("src.orders")
