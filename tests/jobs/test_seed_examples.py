"""Every seed configuration (../shared/seeds, digest in README.md) translated into examples/: the local
translations run as written (copied with their folder layout, no path edited, no LAKESYNC_WAREHOUSE),
and the ones aimed at BigLake's REST catalog are refused for the key docs/jobs.md names (Google's
REST auth manager). Sources are written by deltalake and pyiceberg; targets read back with pyiceberg."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from job_support import EXAMPLES, rows

REPO = Path(__file__).resolve().parents[2]
AS_WRITTEN = ["seed-000-delta-cdc-to-lakehouse.yaml", "seed-001-iceberg-batch-cdc-to-lakehouse.yaml",
              "seed-001-iceberg-streaming-cdc-to-lakehouse.yaml"]


def catalog_at(folder: Path, name: str = "lakesync"):
    from pyiceberg.catalog.sql import SqlCatalog
    folder.mkdir(parents=True, exist_ok=True)
    return SqlCatalog(name, uri=f"sqlite:///{folder / 'catalog.db'}", warehouse=f"file://{folder}")


def copy_example(env, name: str) -> Path:
    jobs = env.root / "examples"
    jobs.mkdir(exist_ok=True)
    shutil.copy(EXAMPLES / name, jobs / name)
    return jobs / name


def plain(env):
    return {k: v for k, v in env.env.items() if k != "LAKESYNC_WAREHOUSE"}


def test_seed_000_runs_as_written_on_local_storage(env):
    job = copy_example(env, "seed-000-delta-cdc-local.yaml")
    delta = job.parent / "example-data" / "orders_delta"
    env.delta_create(delta)
    env.delta_change(2, path=delta)
    p, runs = env.run_job(job, "--once", env=plain(env), cwd=env.root)
    assert runs[-1]["status"] == "committed", p.stderr
    target = catalog_at(job.parent / "lakehouse", "lakehouse").load_table("shop.orders")  # catalog_name: lakehouse
    assert rows(target.scan().to_arrow()) == env.delta_rows(delta)
    # The metadata columns the seed asks for are the sink's control columns, not target columns.
    assert [f.name for f in target.schema().fields] == ["order_id", "customer", "region", "amount"]


@pytest.mark.parametrize("name,table", [("seed-001-iceberg-batch-cdc-local.yaml", "lake.orders"),
                                        ("seed-001-iceberg-streaming-cdc-local.yaml", "lake.orders_live")])
def test_seed_001_runs_as_written_on_local_catalogs(env, name, table):
    import pyarrow as pa
    from pyiceberg.schema import Schema
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType
    job = copy_example(env, name)
    source = catalog_at(job.parent / "source")
    source.create_namespace("src")
    schema = Schema(NestedField(1, "order_id", LongType(), required=True), NestedField(2, "customer", StringType()),
                    NestedField(3, "region", StringType()), NestedField(4, "amount", DoubleType()),
                    identifier_field_ids=[1])
    src = source.create_table("src.orders", schema, properties={"format-version": "2"})
    arrow_schema = pa.schema([pa.field("order_id", pa.int64(), nullable=False), pa.field("customer", pa.string()),
                              pa.field("region", pa.string()), pa.field("amount", pa.float64())])

    def batch(ids, tag):
        return pa.table({"order_id": ids, "customer": [f"{tag}{i}" for i in ids], "region": ["eu"] * len(ids),
                         "amount": [float(i) for i in ids]}, schema=arrow_schema)

    src.append(batch(list(range(10)), "a"))
    streaming = "streaming" in name
    if streaming:
        # A stream starts at the current snapshot, inclusive (Beam's `latest` default for streams);
        # later runs apply what follows.
        p, runs = env.run_job(job, "--once", env=plain(env), cwd=env.root)
        assert runs[-1]["status"] == "committed", p.stderr
    src = source.load_table("src.orders")
    src.delete("order_id < 3")
    src.upsert(batch([5, 6, 20], "u"))
    p, runs = env.run_job(job, "--once", env=plain(env), cwd=env.root)
    assert runs[-1]["status"] == "committed", p.stderr
    target = catalog_at(job.parent / "lakehouse").load_table(table)
    expected = source.load_table("src.orders").scan().to_arrow()
    assert rows(target.scan().to_arrow()) == rows(expected)
    # Created without equality_columns: the source's identifier field is the target's.
    assert target.schema().identifier_field_names() == {"order_id"}
    assert [f.name for f in target.schema().fields] == ["order_id", "customer", "region", "amount"]


@pytest.mark.parametrize("name", AS_WRITTEN)
def test_seeds_aimed_at_biglake_are_refused_for_the_reasons_docs_list(env, name):
    job = copy_example(env, name)
    p = env.lakesync("run", job, "--once", check=False)
    assert p.returncode == 1, p.stderr  # unsupported, not a crash and not a silent success
    # The one key refused is Google's auth manager; the REST catalog and its other keys are accepted.
    assert "catalog_properties.rest.auth.type" in p.stderr and "is not supported" in p.stderr, p.stderr
    docs = (REPO / "docs" / "jobs.md").read_text()
    section = docs[docs.index("## Seed configurations"):]
    for key in ("rest.auth.type: google", "GoogleAuthManager", "header.x-goog-user-project", "io-impl", name):
        assert key in section, f"docs/jobs.md does not say what becomes of {key}"
