"""Runs lakesync's Beam pipelines in the Beam venv for the tests (beam_driver.py), and builds the
source workloads with independent writers (deltalake, pyiceberg). Not a test module."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BEAM_PYTHON = REPO / ".tools" / "beam-venv" / "bin" / "python"
DRIVER = Path(__file__).resolve().parent / "beam_driver.py"


def driver_env(tmp: Path, **extra: str) -> dict:
    """The environment of a Beam driver run: no failpoints of the calling test, and TMPDIR inside the
    test's own folder. Beam makes temporary folders of its own in every pipeline (`beam-temp*` of the
    job service, `beam-pipeline-temp*`, the stager's `tmp*`) and leaves them behind: three per
    pipeline in /tmp, ~100 per test run, until TMPDIR sent them where pytest clears its folders."""
    env = dict(os.environ, **extra)
    env.pop("LAKESYNC_FAILPOINT", None)
    scratch = tmp / "beam-tmpdir"
    scratch.mkdir(exist_ok=True)
    env["TMPDIR"] = str(scratch)
    return env


class Beam:
    def __init__(self, about: dict):
        self.about = about

    @classmethod
    def require(cls) -> "Beam":
        """The Beam venv with lakesync installed, or a skip (a failure when LAKESYNC_BEAM_TESTS=1,
        which scripts/test.sh sets after building it)."""
        required = os.environ.get("LAKESYNC_BEAM_TESTS") == "1"
        reason = None
        if not BEAM_PYTHON.exists():
            reason = f"{BEAM_PYTHON} is missing: run scripts/setup-beam.sh"
        else:
            p = subprocess.run([str(BEAM_PYTHON), str(DRIVER), "about"], capture_output=True, text=True, timeout=300)
            if p.returncode != 0:
                reason = f"lakesync or apache-beam does not import in the Beam venv: {p.stderr[-2000:]}"
        if reason:
            if required:
                pytest.fail(reason)
            pytest.skip(reason)
        return cls(json.loads(p.stdout))

    def run(self, *args, tmp: Path, timeout: int = 900) -> dict:
        out = tmp / f"beam-out-{os.getpid()}-{len(list(tmp.glob('beam-out-*')))}.json"
        env = driver_env(tmp, LAKESYNC_BEAM_OUT=str(out))
        p = subprocess.run([str(BEAM_PYTHON), str(DRIVER), *map(str, args)], capture_output=True, text=True,
                           timeout=timeout, env=env, cwd=tmp)
        if p.returncode != 0:
            raise AssertionError(f"beam_driver {' '.join(map(str, args))} exited {p.returncode}:\n{p.stderr[-6000:]}")
        return json.loads(p.stdout.strip().splitlines()[-1])

    def start(self, *args, tmp: Path) -> subprocess.Popen:
        """The driver in the background (an unbounded pipeline); the caller waits on conditions."""
        env = driver_env(tmp)
        return subprocess.Popen([str(BEAM_PYTHON), str(DRIVER), *map(str, args)], stdout=subprocess.PIPE,
                                stderr=(tmp / "driver.stderr").open("w"), text=True, env=env, cwd=tmp)

    def sync(self, job: Path, warehouse, shards: int, tmp: Path, **flags) -> dict:
        extra = []
        for k, v in flags.items():
            extra += [f"--{k.replace('_', '-')}", v]
        return self.run("sync", job, warehouse.config_file, "--shards", shards, *extra, tmp=tmp)


def delta_job(path: Path, delta: Path, name: str = "orders-sync", **sink) -> Path:
    job = {
        "name": name,
        "source": {"type": "delta_lake_cdc", "table": str(delta), "start_version": 0},
        "sink": {"table": "db.orders", "equality_columns": ["id"], "partition_fields": ["bucket(id, 4)"],
                 "table_properties": {"format-version": "3"}, **sink},
    }
    path.write_text(json.dumps(job))
    return path


def extend_delta(delta: Path, seed: int, versions: int) -> None:
    """More random commits on an existing table (deltalake: merges, updates, deletes, appends)."""
    import random

    from deltalake import DeltaTable, write_deltalake
    from delta_tables import make_rows

    rng = random.Random(seed)
    for _ in range(versions):
        table = DeltaTable(str(delta))
        before = table.version()
        ids = [r["id"] for r in table.to_pyarrow_table(columns=["id"]).to_pylist()]
        top = max(ids, default=0) + 1
        op = rng.choice(["merge", "update", "delete", "append"])
        if op == "append" or not ids:
            write_deltalake(table, make_rows(rng, list(range(top, top + rng.randint(1, 30)))), mode="append")
        elif op == "update":
            lo = rng.choice(ids)
            table.update(predicate=f"id >= {lo} AND id < {lo + 15}", updates={"note": "'changed'", "score": "score + 1"})
        elif op == "delete":
            lo = rng.choice(ids)
            table.delete(f"id >= {lo} AND id < {lo + 8}")
        else:
            old = rng.sample(ids, min(len(ids), 15))
            src = make_rows(rng, sorted(set(old)) + list(range(top, top + 5)))
            (table.merge(src, "t.id = s.id", source_alias="s", target_alias="t")
             .when_matched_update_all().when_not_matched_insert_all().execute())
        if DeltaTable(str(delta)).version() == before:
            write_deltalake(str(delta), make_rows(rng, [top + 100]), mode="append")


def sorted_rows(rows, columns) -> list[tuple]:
    """Rows as tuples in a total order (values may be None), duplicates kept."""
    return sorted((tuple(r[c] for c in columns) for r in rows), key=repr)


def delta_rows(delta: Path, columns) -> list[tuple]:
    from deltalake import DeltaTable

    return sorted_rows(DeltaTable(str(delta)).to_pyarrow_table(columns=list(columns)).to_pylist(), columns)


def iceberg_rows(warehouse, table: str, columns) -> list[tuple]:
    """pyiceberg's read of a lakesync-written table."""
    t = warehouse.pyiceberg().load_table(table).scan().to_arrow()
    return sorted_rows(t.select(list(columns)).to_pylist(), columns)
