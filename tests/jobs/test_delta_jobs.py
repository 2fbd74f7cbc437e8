"""Delta CDF → Iceberg jobs end to end (examples/delta-cdf-to-iceberg-*.yaml): the target equals the
Delta table's latest snapshot as deltalake reads it, read back with pyiceberg, run after run."""
from __future__ import annotations

import json
import random
import signal
import threading
import time

import pytest

from job_support import rows


@pytest.mark.parametrize("example,table", [("delta-cdf-to-iceberg-v2.yaml", "shop.orders_v2"),
                                           ("delta-cdf-to-iceberg-v3-dv.yaml", "shop.orders_v3")])
def test_import_then_changes_run_after_run(env, example, table):
    env.delta_create()
    env.delta_change(2)
    job = env.job_from_example(example)
    p, summaries = env.run_job(job, "--once")
    # The import of version 0 and then versions 1.. in a second commit: no gap, no overlap.
    assert [s["status"] for s in summaries] == ["committed", "committed"], p.stdout
    assert summaries[0]["initial_snapshot"] is True and summaries[0]["range"] == {"from": 0, "through": 0}
    assert summaries[1]["range"]["from"] == 1
    assert env.iceberg_rows(table) == env.delta_rows()

    p, summaries = env.run_job(job, "--once")
    assert summaries[-1]["status"] == "nothing-new"

    env.delta_change(3)
    p, summaries = env.run_job(job, "--once")
    assert summaries[-1]["status"] == "committed"
    assert summaries[-1]["rows"]["delete"] > 0 and summaries[-1]["rows"]["update_after"] > 0
    assert env.iceberg_rows(table) == env.delta_rows()

    status = json.loads(env.lakesync("status", job).stdout)
    assert status["up_to_date"] is True and status["lag"] == 0
    if "v3" in example:
        described = env.lakesync("table", "describe", table).stdout
        files = env.catalog().load_table(table).inspect.delete_files().to_pylist()
        assert files and all(f["file_path"].endswith(".puffin") for f in files), described


def test_a_schedule_picks_up_new_commits(env):
    # Deterministic: each Delta version is written only after the job has reported (on stdout) a
    # committed run whose range reaches the previous one, so every change is applied by a run of its
    # own whatever the tick and the machine's load; then the target must equal the source exactly.
    # Waiting is on the job's own output, with a generous deadline; the job dying fails at once.
    from deltalake import DeltaTable

    env.delta_create()
    job = env.job_from_example("delta-cdf-to-iceberg-v2.yaml")
    proc = env.popen("run", job, "--every", "1s")
    lines: list[str] = []
    changed = threading.Condition()

    def read_stdout():
        for line in proc.stdout:
            with changed:
                lines.append(line)
                changed.notify_all()
        with changed:
            changed.notify_all()

    stderr: list[str] = []  # drained all the time: a full pipe would block the job
    readers = [threading.Thread(target=read_stdout, daemon=True),
               threading.Thread(target=lambda: stderr.extend(proc.stderr), daemon=True)]
    for r in readers:
        r.start()

    def summaries() -> list[dict]:
        return [json.loads(line) for line in lines if line.startswith("{")]

    def wait_for_version(version: int):
        deadline = time.monotonic() + 180
        with changed:
            while True:
                done = [s for s in summaries() if s["status"] == "committed" and s.get("range")
                        and s["range"]["through"] >= version]
                if done:
                    return
                bad = [s for s in summaries() if s["status"] not in ("committed", "nothing-new")]
                assert not bad, f"the job reported a failed run: {bad}"
                assert proc.poll() is None, f"the job exited {proc.returncode}: {''.join(stderr)[-3000:]}"
                left = deadline - time.monotonic()
                assert left > 0, f"no committed run reached Delta version {version} in 180 s: {summaries()}"
                changed.wait(timeout=min(left, 1.0))

    try:
        versions = [DeltaTable(str(env.delta)).version()]
        wait_for_version(versions[-1])
        assert env.iceberg_rows("shop.orders_v2") == env.delta_rows()
        for _ in range(2):
            env.delta_change(1)
            versions.append(DeltaTable(str(env.delta)).version())
            assert versions[-1] > versions[-2], versions
            wait_for_version(versions[-1])
            assert env.iceberg_rows("shop.orders_v2") == env.delta_rows()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        for r in readers:
            r.join(timeout=60)
    assert proc.returncode == 0, "".join(stderr)[-3000:]
    statuses = [s["status"] for s in summaries()]
    # The import, then at least one committed run per change (a change may be several Delta versions,
    # which one or two runs take in); polls that found nothing print no line.
    assert statuses.count("committed") >= 3 and "nothing-new" not in statuses, statuses


def test_kill_minus_nine_at_random_moments_then_rerun(env):
    rng = random.Random(7)
    env.delta_create()
    job = env.job_from_example("delta-cdf-to-iceberg-v3-dv.yaml")
    interrupted = finished = 0
    for round_ in range(6):
        env.delta_change(rng.randint(1, 3))
        # The first round is killed at a failpoint (after the data files, before the commit), so at
        # least one kill interrupts a run mid-write whatever the machine's speed; the others at a
        # random moment (the moment is the experiment's random variable, not synchronisation).
        kill_env = dict(env.env, LAKESYNC_FAILPOINT="after-data-files") if round_ == 0 else None
        proc = env.popen("run", job, "--once", env=kill_env)
        if round_ > 0:
            time.sleep(rng.uniform(0.0, 0.6))
            proc.kill()
        _, err = proc.communicate(timeout=300)
        if proc.returncode == -9:
            interrupted += 1
        else:
            assert proc.returncode == 0, f"a run failed without being killed: {err[-3000:]}"
            finished += 1
    print(f"{interrupted} runs killed while running, {finished} finished before their kill")
    assert interrupted >= 1, "no kill interrupted a run: the test proved nothing"
    env.run_job(job, "--once")
    assert env.iceberg_rows("shop.orders_v3") == env.delta_rows()


@pytest.mark.parametrize("failpoint", ["after-data-files", "before-commit", "after-commit"])
def test_a_crash_at_each_writer_failpoint_then_rerun(env, failpoint):
    env.delta_create()
    env.delta_change(2)
    job = env.job_from_example("delta-cdf-to-iceberg-v2.yaml")
    crashed = env.run_job(job, "--once", check=False, env=dict(env.env, LAKESYNC_FAILPOINT=failpoint))[0]
    assert crashed.returncode == -9
    env.run_job(job, "--once")
    env.delta_change(1)
    env.run_job(job, "--once")
    assert env.iceberg_rows("shop.orders_v2") == env.delta_rows()


def test_two_runs_at_once_apply_each_change_once(env):
    env.delta_create()
    env.delta_change(3)
    job = env.job_from_example("delta-cdf-to-iceberg-v2.yaml", source__initial_snapshot=None)
    procs = [env.popen("run", job, "--once") for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    assert env.iceberg_rows("shop.orders_v2") == env.delta_rows()
    statuses = sorted(json.loads(o[0].splitlines()[-1])["status"] for o in outs)
    assert statuses in (["committed", "nothing-new"], ["committed", "skipped"]), statuses


def test_bad_jobs_name_the_key_and_change_nothing(env):
    env.delta_create()
    bad = env.root / "bad.yaml"
    bad.write_text(f"source: {{type: delta_lake_cdc, table: {env.delta}, start_vresion: 0}}\nsink: {{table: a.b}}\n")
    p = env.lakesync("run", bad, check=False)
    assert p.returncode == 2 and "start_vresion" in p.stderr and "start_version" in p.stderr
    missing = env.root / "missing.yaml"
    missing.write_text(f"source: {{type: delta_lake_cdc, table: {env.root / 'nope'}, start_version: 0}}\n"
                       "sink: {table: a.b, equality_columns: [order_id]}\n")
    p = env.lakesync("run", missing, check=False)
    assert p.returncode == 3 and "nope" in p.stderr
    assert not (env.warehouse / "a").exists()


def test_structured_logs_are_one_json_object_per_line(env):
    env.delta_create()
    env.delta_change(1)
    job = env.job_from_example("delta-cdf-to-iceberg-v2.yaml")
    p = env.lakesync("--log-level", "info", "--log-format", "json", "run", job, "--once")
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert lines, "info logs expected"
    records = [json.loads(line) for line in lines]
    assert all({"time", "level", "message"} <= r.keys() for r in records)
    assert all(r["time"].endswith("Z") for r in records)


def test_snapshot_import_then_a_cdc_job_continues_after_it(env):
    from deltalake import DeltaTable
    env.delta_create()
    env.delta_change(1)  # versions 1 and 2
    imported = DeltaTable(str(env.delta)).version()
    job = env.root / "import.yaml"
    job.write_text(f"name: orders\nsource: {{type: delta_lake, table: {env.delta}}}\n"
                   "sink: {table: shop.orders, equality_columns: [order_id]}\n")
    p, summaries = env.run_job(job)
    assert summaries[-1]["range"] == {"from": imported, "through": imported}
    assert env.iceberg_rows("shop.orders") == env.delta_rows()
    # A CDC job with the same name (sink_id) continues after the imported version: no gap, no overlap.
    env.delta_change(2)
    cdc = env.root / "cdc.yaml"
    cdc.write_text(f"name: orders\nsource: {{type: delta_lake_cdc, table: {env.delta}, start_version: 0}}\n"
                   "sink: {table: shop.orders, equality_columns: [order_id]}\n")
    p, summaries = env.run_job(cdc)
    assert summaries[-1]["range"]["from"] == imported + 1
    assert env.iceberg_rows("shop.orders") == env.delta_rows()
