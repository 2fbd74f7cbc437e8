"""Seed 004's end-to-end check, automated: a provider shares a Delta table (history and change data
feed); a recipient's `lakesync run` job with a `delta_sharing_cdc` source imports the snapshot into
Iceberg; the provider inserts, updates and deletes; the job's next run applies exactly those changes
(the target's history shows only the new rows written), and a run after that finds nothing new.
The target is read with pyiceberg and compared with deltalake reading the provider's table."""
from __future__ import annotations

import json
import os
import subprocess

import pyarrow as pa
import pytest
import yaml

from sharing_env import LAKESYNC, shares_config

deltalake = pytest.importorskip("deltalake")
pyiceberg = pytest.importorskip("pyiceberg")

SCHEMA = pa.schema([("order_id", pa.int64()), ("customer", pa.string()), ("amount", pa.float64())])


def orders(ids, amount=1.0):
    return pa.table({"order_id": list(ids), "customer": [f"c{i}" for i in ids], "amount": [amount] * len(ids)},
                    schema=SCHEMA)


class Recipient:
    def __init__(self, root, profile):
        self.root = root
        self.profile = profile
        self.warehouse = root / "warehouse"
        self.env = dict(os.environ, LAKESYNC_WAREHOUSE=str(self.warehouse))

    def job(self, name, source):
        path = self.root / f"{name}.yaml"
        path.write_text(yaml.safe_dump({"name": name, "source": source,
                                        "sink": {"table": f"shop.{name}", "equality_columns": ["order_id"]}}))
        return path

    def run(self, job):
        p = subprocess.run([str(LAKESYNC), "run", str(job), "--once"], cwd=self.root, env=self.env,
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr
        return [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]

    def table(self, name):
        from pyiceberg.catalog.sql import SqlCatalog

        catalog = SqlCatalog("lakesync", uri=f"sqlite:///{self.warehouse / 'catalog.db'}",
                             warehouse=f"file://{self.warehouse}")
        return catalog.load_table(f"shop.{name}")


def rows_of(table):
    return sorted((r["order_id"], r["customer"], r["amount"]) for r in table.select(SCHEMA.names).to_pylist())


def provider_rows(path):
    return rows_of(pa.table(deltalake.DeltaTable(str(path)).to_pyarrow_table()))


def test_seed_004_snapshot_then_exactly_the_new_changes(tmp_path, serve):
    from deltalake import DeltaTable, write_deltalake

    provider = tmp_path / "provider" / "orders"
    write_deltalake(str(provider), orders(range(1000)), configuration={"delta.enableChangeDataFeed": "true"})
    server = serve(shares_config({"orders": provider}), root=tmp_path / "provider")
    recipient = Recipient(tmp_path, server.profile())
    job = recipient.job("orders", {"type": "delta_sharing_cdc", "profile": str(recipient.profile),
                                   "table": "share1.default.orders", "start_version": 0,
                                   "initial_snapshot": True})

    first = recipient.run(job)
    # The import of version 0, then (in the same run) the changes after it: none yet.
    assert first[0]["status"] == "committed" and first[0]["initial_snapshot"] is True, first
    assert [s["status"] for s in first[1:]] == ["nothing-new"], first
    target = recipient.table("orders")
    assert rows_of(target.scan().to_arrow()) == provider_rows(provider)
    snapshots_before = len(target.metadata.snapshots)

    # The provider's day: 200 new orders, one updated, one deleted (three commits).
    write_deltalake(str(provider), orders(range(1000, 1200)), mode="append")
    DeltaTable(str(provider)).update(predicate="order_id = 7", updates={"amount": "99.5"})
    DeltaTable(str(provider)).delete("order_id = 8")

    second = recipient.run(job)
    assert second[-1]["status"] == "committed", second
    counted = second[-1]["rows"]
    assert counted.get("insert", 0) == 200 and counted.get("update_after", 0) == 1 and counted.get("delete", 0) == 1
    target = recipient.table("orders")
    assert rows_of(target.scan().to_arrow()) == provider_rows(provider)
    # The target's history: the new snapshot(s) wrote the 200 new rows and the updated one, not 1,201.
    new = target.metadata.snapshots[snapshots_before:]
    assert new, "the second run committed nothing"
    added = sum(int(s.summary.additional_properties.get("added-records", 0)) for s in new)
    assert added == 201, [s.summary for s in new]

    third = recipient.run(job)
    assert third[-1]["status"] == "nothing-new", third


def test_a_delta_sharing_snapshot_import(tmp_path, serve):
    from deltalake import write_deltalake

    provider = tmp_path / "provider" / "orders"
    write_deltalake(str(provider), orders(range(50)))
    write_deltalake(str(provider), orders(range(50, 60), amount=2.0), mode="append")
    # Shared without history: the latest snapshot is still importable.
    server = serve(shares_config({"orders": provider}, history=False), root=tmp_path / "provider")
    recipient = Recipient(tmp_path, server.profile())
    job = recipient.job("imported", {"type": "delta_sharing", "table": f"{recipient.profile}#share1.default.orders"})
    summaries = recipient.run(job)
    assert summaries[-1]["status"] == "committed", summaries
    assert rows_of(recipient.table("imported").scan().to_arrow()) == provider_rows(provider)


def test_bad_sharing_jobs_name_the_key(tmp_path, serve):
    from deltalake import write_deltalake

    provider = tmp_path / "provider" / "orders"
    write_deltalake(str(provider), orders(range(5)), configuration={"delta.enableChangeDataFeed": "true"})
    server = serve(shares_config({"orders": provider}), root=tmp_path / "provider")
    recipient = Recipient(tmp_path, server.profile())
    for source, needle in [
        ({"type": "delta_sharing_cdc", "table": "share1.default.orders", "start_version": 0}, "source.profile"),
        ({"type": "delta_sharing_cdc", "profile": str(recipient.profile), "table": "share1.default.orders",
          "start_version": 0, "path": "x"}, "path"),
        ({"type": "delta_sharing_cdc", "profile": str(recipient.profile), "table": "share1.default.orders"},
         "start_version"),
    ]:
        job = recipient.job("bad", source)
        p = subprocess.run([str(LAKESYNC), "run", str(job), "--once"], cwd=tmp_path, env=recipient.env,
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 2 and needle in p.stderr, (source, p.returncode, p.stderr)
