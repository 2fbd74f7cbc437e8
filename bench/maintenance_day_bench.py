#!/usr/bin/env python3
"""A simulated day of a sync job with automatic maintenance (issue 16): scan time of the target
against a compacted copy after every run, with and without the job's `maintenance:` block.

One run:
  1. writes an R-row Delta table (deltalake, Change Data Feed on; compact_bench.py's row generator);
  2. two jobs read it (delta_lake_cdc → v3 Iceberg with deletion vectors, key `id`): `with` has a
     `maintenance:` block (compaction with its default trigger, `when_read_overhead: 0.1`, hourly
     expiry, orphan removal every 6 h), `without` has none (--maintenance replaces the block);
  3. --runs times (default 96: a day of runs every 15 minutes): changes the Delta table (one MERGE of
     updates and inserts, one DELETE; --changes rows), then runs both jobs once with the fast clock
     LAKESYNC_MAINTENANCE_NOW advanced 15 minutes per run; writes the compacted copy (`scan --format
     parquet` of the target, then `table create` + `table append`: one file, no deletes); checks each
     target and the copy with pyiceberg (row count, sums) and reads each in full with scan_bench
     (compact_bench.py's Bench.scan: the same reader, one process per read), --repeat times each,
     round-robin, taking the medians;
  4. prints the median and max of (scan time of the target) / (scan time of the copy) across the day
     for both jobs, with the CPU times of the job runs and the load average, and writes everything to
     bench/results/.

    .venv/bin/python bench/maintenance_day_bench.py --rows 200000 --changes 4000 --runs 96 --repeat 5

Wall-clock numbers are only compared within one run; nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pyarrow as pa
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compact_bench as C  # noqa: E402  (the row generator, the measured runs, the checked scan)

REPO = C.REPO
QUARTER_MS = 15 * 60 * 1000
TARGETS = {"with": "bench.with_maintenance", "without": "bench.without_maintenance"}
COPY = "bench.copy"

MAINTENANCE = {
    "compact": {},  # the defaults: compact when reading costs 10% more than the compacted table would
    "rewrite_manifests": {"when_manifest_count": 24},
    "expire_snapshots": {"older_than": "2h", "retain_last": 4, "every": "1h"},
    "remove_orphans": {"older_than": "1h", "every": "6h"},
}


def write_job(path: Path, delta: Path, table: str, maintenance: dict | None) -> None:
    job = {"name": f"day-{table}",
           "source": {"type": "delta_lake_cdc", "table": str(delta), "start_version": 0, "initial_snapshot": True},
           "sink": {"table": table, "equality_columns": ["id"], "table_properties": {"format-version": "3"}}}
    if maintenance:
        job["maintenance"] = maintenance
    path.write_text(yaml.safe_dump(job))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=200_000)
    p.add_argument("--changes", type=int, default=4_000, help="rows changed per run (50%% updates, 30%% inserts, "
                                                              "20%% deletes)")
    p.add_argument("--runs", type=int, default=96)
    p.add_argument("--repeat", type=int, default=5, help="reads of each table per run (medians count)")
    p.add_argument("--seed", type=int, default=16)
    p.add_argument("--build", default=str(REPO / "build"))
    p.add_argument("--work", help="scratch folder (default: a new temporary one)")
    p.add_argument("--maintenance", help="the `with` job's maintenance block as JSON (default: the one above)")
    p.add_argument("--results-dir", default=str(REPO / "bench" / "results"),
                   help="where the results JSON goes (default bench/results)")
    args = p.parse_args()
    maintenance = json.loads(args.maintenance) if args.maintenance else MAINTENANCE
    from deltalake import DeltaTable, write_deltalake

    bench = C.Bench(argparse.Namespace(build=args.build, work=args.work, seed=args.seed))
    rng = bench.rng
    result = {"started": datetime.now(timezone.utc).isoformat(), "args": vars(args),
              "loadavg_at_start": os.getloadavg(), "maintenance": maintenance}
    n = args.rows
    version = np.full(n + args.runs * args.changes, -1, dtype=np.int64)  # -1: not live
    version[:n] = 0
    delta = bench.work / "source_delta"
    write_deltalake(str(delta), C.rows_table(np.arange(n, dtype=np.int64), version[:n]), mode="overwrite",
                    configuration={"delta.enableChangeDataFeed": "true"})
    jobs = {}
    for k, table in TARGETS.items():
        jobs[k] = bench.work / f"job-{k}.yaml"
        write_job(jobs[k], delta, table, maintenance if k == "with" else None)
    bench.lakesync("namespace", "create", "bench")
    next_id = n
    t0 = int(time.time() * 1000)
    per_run = []
    print(f"{args.runs} runs over {n:,} rows, {args.changes:,} changes each, in {bench.work}", flush=True)
    for run in range(args.runs):
        if run > 0:  # run 0 imports the initial snapshot
            live = np.flatnonzero(version >= 0)
            k = args.changes
            n_upd, n_ins = k // 2, k * 3 // 10
            n_del = k - n_upd - n_ins
            touched = rng.choice(live, size=n_upd + n_del, replace=False)
            upd, dele = np.sort(touched[:n_upd]), np.sort(touched[n_upd:])
            ins = np.arange(next_id, next_id + n_ins, dtype=np.int64)
            next_id += n_ins
            source = pa.concat_tables([C.rows_table(upd, version[upd] + 1), C.rows_table(ins, np.zeros(n_ins, np.int64))])
            (DeltaTable(str(delta)).merge(source, "t.id = s.id", source_alias="s", target_alias="t")
             .when_matched_update_all().when_not_matched_insert_all().execute())
            DeltaTable(str(delta)).delete(f"id in ({','.join(map(str, dele.tolist()))})")
            version[upd] += 1
            version[ins] = 0
            version[dele] = -1
        live = np.flatnonzero(version >= 0)
        bench.expected = {"rows": int(live.size), "sum_id": int(live.sum()), "sum_v": int(version[live].sum())}
        bench.env["LAKESYNC_MAINTENANCE_NOW"] = str(t0 + run * QUARTER_MS)
        record = {"run": run, "loadavg": os.getloadavg()[0]}
        for k in TARGETS:
            r = bench.lakesync("run", jobs[k], "--once")
            summary = [json.loads(x) for x in r["stdout"].splitlines() if x.startswith("{")][-1]
            record[f"job_{k}"] = {"wall_s": r["wall_s"], "cpu_s": r["cpu_s"], "status": summary.get("status"),
                                  "maintenance": summary.get("maintenance", {}).get(TARGETS[k])}
        copy = bench.work / "copy.parquet"
        if run > 0:
            bench.lakesync("table", "drop", COPY)
        bench.lakesync("scan", "--table", TARGETS["without"], "--format", "parquet", "--output", copy)
        bench.lakesync("table", "create", COPY, "--schema-from", copy, "--format-version", 3)
        bench.lakesync("table", "append", COPY, copy)
        for name in (*TARGETS.values(), COPY):
            bench.check(name)
        # --repeat reads of each, round-robin; the medians count (single reads under load vary by ±30%).
        names = {"copy": COPY, **TARGETS}
        samples = {k: [] for k in names}
        for _ in range(args.repeat):
            for k, name in names.items():
                samples[k].append(bench.scan(name))
        scans = {k: {m: statistics.median(s[m] for s in v) for m in ("wall_s", "cpu_s", "plan_wall_s")}
                 for k, v in samples.items()}
        for k, v in samples.items():
            scans[k].update(data_files=v[0]["data_files"], delete_files=v[0]["delete_files"])
        for k, table in TARGETS.items():
            meta = bench.metadata(table)
            summary = next(s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"])["summary"]
            record[f"files_{k}"] = {"data": int(summary.get("total-data-files", 0)),
                                    "delete": int(summary.get("total-delete-files", 0)),
                                    "snapshots": len(meta["snapshots"])}
        record["scans"] = scans
        record["ratio"] = {k: scans[k]["wall_s"] / scans["copy"]["wall_s"] for k in TARGETS}
        record["cpu_ratio"] = {k: scans[k]["cpu_s"] / scans["copy"]["cpu_s"] for k in TARGETS}
        per_run.append(record)
        m = record["job_with"]["maintenance"] or {}
        done = [s for s, v in m.items() if isinstance(v, dict) and v.get("status") == "done"]
        print(f"run {run:3d}: ratio with {record['ratio']['with']:.2f} without {record['ratio']['without']:.2f} "
              f"(CPU {record['cpu_ratio']['with']:.2f} / {record['cpu_ratio']['without']:.2f}; job CPU "
              f"{record['job_with']['cpu_s']:.2f} / {record['job_without']['cpu_s']:.2f} s); "
              f"files with {record['files_with']} without {record['files_without']}; maintenance {done}; "
              f"load {record['loadavg']:.1f}", flush=True)
    summary = {}
    for k in TARGETS:
        ratios = [r["ratio"][k] for r in per_run]
        cpu = [r["cpu_ratio"][k] for r in per_run]
        summary[k] = {"ratio_median": statistics.median(ratios), "ratio_max": max(ratios),
                      "cpu_ratio_median": statistics.median(cpu), "cpu_ratio_max": max(cpu),
                      "runs_over_1_2": sum(1 for x in ratios if x > 1.2),
                      "job_cpu_s_total": sum(r[f"job_{k}"]["cpu_s"] for r in per_run),
                      "job_wall_s_median": statistics.median(r[f"job_{k}"]["wall_s"] for r in per_run),
                      "final_files": per_run[-1][f"files_{k}"]}
    result.update({"per_run": per_run, "summary": summary, "loadavg_at_end": os.getloadavg()})
    out_dir = Path(args.results_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"maintenance_day_bench-{n}-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}.json"
    out.write_text(json.dumps(result, indent=1))
    print(f"\n{args.runs} runs, {n:,} rows, {args.changes:,} changes per run; load average "
          f"{result['loadavg_at_start'][0]:.1f} -> {result['loadavg_at_end'][0]:.1f}")
    for k, s in summary.items():
        print(f"{k:>7} maintenance: scan/copy wall median {s['ratio_median']:.2f}x max {s['ratio_max']:.2f}x "
              f"({s['runs_over_1_2']} runs over 1.2x); CPU median {s['cpu_ratio_median']:.2f}x max "
              f"{s['cpu_ratio_max']:.2f}x; job CPU {s['job_cpu_s_total']:.1f} s total; final {s['final_files']}")
    print(f"results: {out}")


if __name__ == "__main__":
    main()
