"""Iceberg changelog → Iceberg jobs end to end (examples/iceberg-*.yaml). The source is written by
pyiceberg (appends, deletes, overwrites); the target must equal the source's current snapshot as
pyiceberg reads it."""
from __future__ import annotations

import json
import signal
import time

import pyarrow as pa
import pytest
from pyiceberg.exceptions import NoSuchTableError

SCHEMA = pa.schema([pa.field("order_id", pa.int64(), nullable=False), pa.field("customer", pa.string()),
                    pa.field("region", pa.string()), pa.field("amount", pa.float64())])


def source_table(env):
    from pyiceberg.schema import Schema
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType
    catalog = env.catalog()
    catalog.create_namespace_if_not_exists("src")
    schema = Schema(NestedField(1, "order_id", LongType(), required=True), NestedField(2, "customer", StringType()),
                    NestedField(3, "region", StringType()), NestedField(4, "amount", DoubleType()),
                    identifier_field_ids=[1])
    return catalog.create_table("src.orders", schema, properties={"format-version": "2"})


def batch(ids, tag):
    return pa.table({"order_id": ids, "customer": [f"{tag}-{i}" for i in ids],
                     "region": ["eu" if i % 2 else "us" for i in ids], "amount": [float(i) for i in ids]},
                    schema=SCHEMA)


def mutate(table, step):
    base = 100 * step
    table.append(batch(list(range(base, base + 20)), f"s{step}"))
    table.delete(f"order_id < {base + 5} and order_id >= {base}")
    table.upsert(batch([base + 10, base + 11], f"u{step}"))


def test_batch_cdc_job(env):
    src = source_table(env)
    for step in range(1, 4):
        mutate(src, step)
    job = env.job_from_example("iceberg-batch-cdc.yaml")
    p, summaries = env.run_job(job, "--once")
    assert summaries[-1]["status"] == "committed"
    assert env.iceberg_rows("lake.orders") == env.iceberg_rows("src.orders")
    assert env.run_job(job, "--once")[1][-1]["status"] == "nothing-new"
    mutate(env.catalog().load_table("src.orders"), 4)
    env.run_job(job, "--once")
    assert env.iceberg_rows("lake.orders") == env.iceberg_rows("src.orders")
    status = json.loads(env.lakesync("status", job).stdout)
    assert status["up_to_date"] is True


def test_streaming_job_follows_a_source_being_written(env):
    source_table(env)
    job = env.job_from_example("iceberg-streaming-cdc.yaml", source__poll_interval_seconds=1)
    proc = env.popen("run", job)
    try:
        for step in range(1, 4):
            mutate(env.catalog().load_table("src.orders"), step)
            time.sleep(0.3)
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                if env.iceberg_rows("lake.orders_live") == env.iceberg_rows("src.orders"):
                    break
            except NoSuchTableError:  # not created yet; any other error fails the test at once
                pass
            time.sleep(0.5)
        assert env.iceberg_rows("lake.orders_live") == env.iceberg_rows("src.orders")
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err


def test_kill_minus_nine_at_random_moments_then_rerun(env):
    import random
    rng = random.Random(11)
    src = source_table(env)
    job = env.job_from_example("iceberg-batch-cdc.yaml")
    interrupted = 0
    for step in range(1, 6):
        mutate(env.catalog().load_table("src.orders"), step)
        # The first run is killed at a failpoint (data files written, nothing committed), so at least
        # one kill interrupts a run whatever the machine's speed; the others at a random moment.
        kill_env = dict(env.env, LAKESYNC_FAILPOINT="after-data-files") if step == 1 else None
        proc = env.popen("run", job, "--once", env=kill_env)
        if step > 1:
            time.sleep(rng.uniform(0.0, 0.5))  # the moment of the kill is the random variable
            proc.kill()
        _, err = proc.communicate(timeout=300)
        if proc.returncode == -9:
            interrupted += 1
        else:
            assert proc.returncode == 0, f"a run failed without being killed: {err[-3000:]}"
    print(f"{interrupted} of 5 runs killed while running")
    assert interrupted >= 1, "no kill interrupted a run: the test proved nothing"
    env.run_job(job, "--once")
    assert env.iceberg_rows("lake.orders") == env.iceberg_rows("src.orders")


def test_snapshot_import_of_an_iceberg_table(env):
    src = source_table(env)
    mutate(src, 1)
    first = env.catalog().load_table("src.orders").current_snapshot()
    mutate(env.catalog().load_table("src.orders"), 2)
    job = env.root / "import.yaml"
    job.write_text(f"source: {{type: iceberg, table: src.orders, snapshot_id: {first.snapshot_id}}}\n"
                   "sink: {table: lake.imported, equality_columns: [order_id]}\n")
    p, summaries = env.run_job(job)
    assert summaries[-1]["status"] == "committed" and summaries[-1]["initial_snapshot"] is True
    expected = sorted(tuple(r[c] for c in ["order_id", "customer", "region", "amount"])
                      for r in env.catalog().load_table("src.orders").scan(snapshot_id=first.snapshot_id)
                      .to_arrow().to_pylist())
    assert env.iceberg_rows("lake.imported") == expected
    assert env.run_job(job)[1][-1]["status"] == "nothing-new"
