"""Fixtures for the sync-job tests: a scratch embedded warehouse, Delta tables written by deltalake,
and the example job files with their paths pointed at the scratch directory."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from job_support import BUILD, COLUMNS, EXAMPLES, LAKESYNC, REPO, rows  # noqa: F401


class Env:
    def __init__(self, root: Path):
        self.root = root
        self.warehouse = root / "warehouse"
        self.delta = root / "orders_delta"
        # Run history for `lakesync status` stays in the test's folder.
        self.env = dict(os.environ, LAKESYNC_WAREHOUSE=str(self.warehouse), LAKESYNC_STATE_DIR=str(root / "state"))
        self.env.pop("LAKESYNC_FAILPOINT", None)

    # ---- lakesync ----
    def lakesync(self, *args, check=True, env=None, timeout=300, cwd=None):
        p = subprocess.run([str(LAKESYNC), *map(str, args)], cwd=cwd or self.root, env=env or self.env,
                           capture_output=True, text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f"lakesync {' '.join(map(str, args))} exited {p.returncode}:\n{p.stderr}")
        return p

    def run_job(self, job: Path, *extra, check=True, env=None, cwd=None):
        p = self.lakesync("run", job, *extra, check=check, env=env, cwd=cwd)
        summaries = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
        return p, summaries

    def popen(self, *args, env=None):
        return subprocess.Popen([str(LAKESYNC), *map(str, args)], cwd=self.root, env=env or self.env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    # ---- job files ----
    def job_from_example(self, name: str, **changes) -> Path:
        job = yaml.safe_load((EXAMPLES / name).read_text())
        if job["source"]["type"].startswith("delta"):
            job["source"]["table"] = str(self.delta)
        for dotted, value in changes.items():
            block, key = dotted.split("__")
            if value is None:
                job[block].pop(key, None)
            else:
                job[block][key] = value
        path = self.root / name
        path.write_text(yaml.safe_dump(job))
        return path

    # ---- Delta source (deltalake, the independent writer) ----
    def delta_create(self, path=None):
        subprocess.run([sys.executable, EXAMPLES / "demo_delta.py", "create", path or self.delta], check=True)

    def delta_change(self, times=1, path=None):
        for _ in range(times):
            subprocess.run([sys.executable, EXAMPLES / "demo_delta.py", "change", path or self.delta], check=True)

    def delta_rows(self, path=None):
        from deltalake import DeltaTable
        return rows(DeltaTable(str(path or self.delta)).to_pyarrow_table())

    # ---- Iceberg (pyiceberg, the independent reader and writer) ----
    def catalog(self, warehouse=None):
        from pyiceberg.catalog.sql import SqlCatalog
        warehouse = warehouse or self.warehouse
        warehouse.mkdir(parents=True, exist_ok=True)
        return SqlCatalog("lakesync", uri=f"sqlite:///{warehouse / 'catalog.db'}", warehouse=f"file://{warehouse}")

    def iceberg_rows(self, name: str, warehouse=None):
        return rows(self.catalog(warehouse).load_table(name).scan().to_arrow())


@pytest.fixture
def env(tmp_path):
    if not LAKESYNC.exists():
        pytest.fail(f"{LAKESYNC} is missing: build first")
    return Env(tmp_path)
