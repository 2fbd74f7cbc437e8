"""Seed 004's end-to-end check, automated: a provider shares a Delta table (history and change data
feed); a recipient's `lakesync run` job with a `delta_sharing_cdc` source imports the snapshot into
Iceberg; the provider inserts, updates and deletes; the job's next run applies exactly those changes
(the target's history shows only the new rows written), and a run after that finds nothing new.
The target is read with pyiceberg and compared with deltalake reading the provider's table."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
import yaml

from sharing_env import LAKESYNC, shares_config

# The Delta suites' table helpers; appended, so that no module of this folder is shadowed.
sys.path.append(str(Path(__file__).resolve().parents[1] / "delta"))
from delta_tables import add_column_then_widen, create_small_cdf_table  # noqa: E402

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

    def job(self, name, source, key="order_id"):
        path = self.root / f"{name}.yaml"
        path.write_text(yaml.safe_dump({"name": name, "source": source,
                                        "sink": {"table": f"shop.{name}", "equality_columns": [key]}}))
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


def test_a_shared_table_that_adds_a_column_and_widens_two_mid_range(tmp_path, serve):
    # Schema evolution (issue 16) over Delta Sharing: the provider adds a column (merge), updates a row,
    # widens two columns (an overwrite with the new schema) and appends a value only the wider type
    # holds, all inside one range of the recipient's job. The target must end equal to the provider's
    # table (deltalake), with each part of the range committed under the schema of its versions.
    from deltalake import DeltaTable

    provider = tmp_path / "provider" / "t"
    create_small_cdf_table(provider)
    server = serve(shares_config({"t": provider}), root=tmp_path / "provider")
    recipient = Recipient(tmp_path, server.profile())
    job = recipient.job("t", {"type": "delta_sharing_cdc", "profile": str(recipient.profile),
                              "table": "share1.default.t", "start_version": 0, "initial_snapshot": True}, key="id")
    assert recipient.run(job)[0]["status"] == "committed"

    add_column_then_widen(provider)

    runs = recipient.run(job)
    assert [r["status"] for r in runs] == ["committed"], runs
    assert runs[-1]["range"] == {"from": 1, "through": 4}

    def by_id(rows):
        return sorted(rows, key=lambda r: r["id"])

    target = recipient.table("t")
    assert by_id(target.scan().to_arrow().to_pylist()) == by_id(DeltaTable(str(provider)).to_pyarrow_table().to_pylist())
    types = {f.name: str(f.field_type) for f in target.schema().fields}
    assert types == {"id": "long", "qty": "long", "price": "double", "note": "string"}
    # Split at the widening (version 3): the rows before it were committed with the narrower types.
    sink_id = runs[-1]["sink_id"]
    snaps = target.metadata.snapshots
    assert [s.summary[f"lakesync.source-position.{sink_id}"] for s in snaps] == ["0", "2", "4"]
    schemas = {s.schema_id: s for s in target.metadata.schemas}
    assert [str(schemas[s.schema_id].find_field("qty").field_type) for s in snaps] == ["int", "int", "long"]
    assert recipient.run(job)[-1]["status"] == "nothing-new"


def test_a_column_mapping_rename_in_a_shared_table_is_followed(tmp_path, serve):
    # A Spark-written column-mapping table from the corpus, shared; the provider renames a column the
    # way Spark's ALTER TABLE RENAME COLUMN does (the logical name changes, the physical name stays).
    # The recipient's target renames its column and keeps the field id; the rows read the same.
    import delta_oracles as D
    from delta_tables import rename_column

    provider = D.extract_corpus(tmp_path / "provider", ["cdf-column-mapping-name-mode"])["cdf-column-mapping-name-mode"]
    server = serve(shares_config({"t": provider}), root=tmp_path / "provider")
    recipient = Recipient(tmp_path, server.profile())
    job = recipient.job("t", {"type": "delta_sharing_cdc", "profile": str(recipient.profile),
                              "table": "share1.default.t", "start_version": 0, "initial_snapshot": True}, key="id")
    assert recipient.run(job)[-1]["status"] in ("committed", "nothing-new")
    before = {f.name: f.field_id for f in recipient.table("t").schema().fields}
    rows_before = recipient.table("t").scan().to_arrow().to_pylist()

    rename_column(provider, "name", "full_name")
    assert recipient.run(job)[-1]["status"] == "committed"
    after = {f.name: f.field_id for f in recipient.table("t").schema().fields}
    assert "name" not in after and after["full_name"] == before["name"] and len(after) == len(before)
    renamed = [{("full_name" if k == "name" else k): v for k, v in r.items()} for r in rows_before]
    key = lambda r: r["id"]  # noqa: E731
    assert sorted(recipient.table("t").scan().to_arrow().to_pylist(), key=key) == sorted(renamed, key=key)
