#!/usr/bin/env python3
"""Beam pipeline vs `lakesync run` on the same workload (issue 17), side by side in one run.

    .venv/bin/python bench/beam_bench.py --rows 200000 --versions 10 --repeat 3

Workload: a Delta table written by deltalake with the Change Data Feed: version 0 inserts --rows
rows, then --versions MERGE versions each updating ~4%, deleting ~1% and inserting ~2% of the keys.
Both engines apply versions 0..N into an empty v3 table (deletion vectors), each into its own scratch
warehouse, round-robin over the repeats:

- run:  `lakesync run job.yaml` (one process, one commit);
- beam: `lakesync.beam.SyncJob(job.yaml)` on Beam's DirectRunner, multi-processing mode with
        --workers worker processes and --shards shards, run by the Beam venv (.tools/beam-venv);
        wall time includes Beam's start-up; the committer's own time (the summary's
        duration_seconds of the commit step) is recorded separately: it is the serial part.

Each result is checked against deltalake's snapshot (row count and an order-independent digest of
every row) before its time counts. Prints one JSON document and writes it to bench/results/.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
BEAM_PYTHON = REPO / ".tools" / "beam-venv" / "bin" / "python"
DRIVER = REPO / "tests" / "beam" / "beam_driver.py"
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("region", pa.string()),
                    ("amount", pa.float64()), ("note", pa.string())])
REGIONS = ["eu", "us", "ap", "sa"]


def rows(rng, ids, tag):
    return pa.table({"id": ids, "region": [rng.choice(REGIONS) for _ in ids],
                     "amount": [rng.random() * 1000 for _ in ids], "note": [f"{tag}-{i}" for i in ids]}, schema=SCHEMA)


def build(path: Path, n: int, versions: int, seed: int) -> None:
    from deltalake import DeltaTable, write_deltalake

    rng = random.Random(seed)
    write_deltalake(str(path), rows(rng, list(range(n)), "v0"), configuration={"delta.enableChangeDataFeed": "true"})
    live, top = set(range(n)), n
    for v in range(1, versions + 1):
        pool = sorted(live)
        upd = rng.sample(pool, n * 4 // 100)
        dele = rng.sample(sorted(live - set(upd)), n // 100)
        ins = list(range(top, top + n * 2 // 100))
        top += len(ins)
        src = pa.concat_tables([rows(rng, upd, f"v{v}"), rows(rng, ins, f"v{v}")])
        dt = DeltaTable(str(path))
        dt.merge(src, "t.id = s.id", source_alias="s", target_alias="t").when_matched_update_all() \
            .when_not_matched_insert_all().execute()
        ids = ",".join(map(str, dele))
        DeltaTable(str(path)).delete(f"id IN ({ids})")
        live = (live | set(ins)) - set(dele)


def digest(table: pa.Table) -> tuple[int, str]:
    """Row count and an order-independent digest of the rows (sum of row hashes)."""
    total = 0
    for r in table.select(SCHEMA.names).to_pylist():
        h = hashlib.blake2b(json.dumps([r[c] for c in SCHEMA.names]).encode(), digest_size=8).digest()
        total = (total + int.from_bytes(h, "little")) % (1 << 64)
    return table.num_rows, f"{total:016x}"


def warehouse(root: Path) -> Path:
    root.mkdir(parents=True)
    cfg = root / "catalog.yaml"
    cfg.write_text(json.dumps({"catalog_name": "lakesync", "catalog_properties": {
        "type": "sql", "uri": f"sqlite:///{root / 'catalog.db'}", "warehouse": f"file://{root}"}}))
    return cfg


def iceberg_digest(root: Path) -> tuple[int, str]:
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog("lakesync", uri=f"sqlite:///{root / 'catalog.db'}", warehouse=f"file://{root}")
    return digest(cat.load_table("db.orders").scan().to_arrow())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--versions", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--lakesync", default=str(REPO / "build" / "lakesync"))
    args = ap.parse_args()
    if not BEAM_PYTHON.exists():
        sys.exit(f"{BEAM_PYTHON} is missing: run scripts/setup-beam.sh")
    load_start = open("/proc/loadavg").read().split()[:3]
    RESULTS.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="beam-bench-", dir=RESULTS))
    try:
        delta = scratch / "delta"
        build(delta, args.rows, args.versions, args.seed)
        from deltalake import DeltaTable

        want = digest(DeltaTable(str(delta)).to_pyarrow_table())
        changes = pa.table(DeltaTable(str(delta)).load_cdf(starting_version=0).read_all()).num_rows
        samples: dict[str, list] = {"run": [], "beam": []}
        for i in range(args.repeat):
            for engine in ("run", "beam"):
                root = scratch / f"{engine}-{i}"
                cfg = warehouse(root)
                job = root / "job.yaml"
                job.write_text(json.dumps({
                    "name": "bench", "source": {"type": "delta_lake_cdc", "table": str(delta), "start_version": 0},
                    "sink": {"table": "db.orders", "equality_columns": ["id"], "num_shards": args.shards,
                             "partition_fields": ["bucket(id, 8)"], "table_properties": {"format-version": "3"}}}))
                started = time.monotonic()
                if engine == "run":
                    p = subprocess.run([args.lakesync, "run", job, "--catalog-config", cfg],
                                       capture_output=True, text=True)
                    commit = None
                else:
                    env = dict(os.environ, LAKESYNC_BEAM_OUT=str(root / "summary.json"))
                    p = subprocess.run([BEAM_PYTHON, DRIVER, "sync", job, cfg, "--shards", str(args.shards),
                                        "--workers", str(args.workers)], capture_output=True, text=True, env=env)
                wall = time.monotonic() - started
                if p.returncode != 0:
                    sys.exit(f"{engine} failed:\n{p.stderr[-4000:]}")
                summary = json.loads(p.stdout.strip().splitlines()[-1])
                if engine == "beam":
                    commit = summary["duration_seconds"]
                got = iceberg_digest(root)
                if got != want:
                    sys.exit(f"{engine} wrote a wrong table: {got} != {want}")
                samples[engine].append({"wall_s": wall, "commit_s": commit, "summary": summary})
                print(f"{engine} #{i}: {wall:.2f} s" + (f" (commit {commit:.3f} s)" if commit else ""), file=sys.stderr)
                shutil.rmtree(root)
        med = {e: statistics.median(s["wall_s"] for s in v) for e, v in samples.items()}
        commit = statistics.median(s["commit_s"] for s in samples["beam"])
        result = {
            "rows": args.rows, "versions": args.versions, "changes": changes, "workers": args.workers,
            "shards": args.shards, "median_wall_s": med, "beam_over_run": med["beam"] / med["run"],
            "changes_per_s": {e: changes / m for e, m in med.items()}, "beam_commit_s": commit,
            "loadavg_start": load_start, "loadavg_end": open("/proc/loadavg").read().split()[:3],
            "samples": samples,
        }
        out = RESULTS / f"beam_bench-{args.rows}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.json"
        out.write_text(json.dumps(result, indent=1))
        print(json.dumps({k: v for k, v in result.items() if k != "samples"}, indent=1))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
