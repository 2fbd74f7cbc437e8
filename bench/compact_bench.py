#!/usr/bin/env python3
"""Compaction benchmark (issue 16): a table after N CDC commits, read before and after
`lakesync table compact`, against a freshly written compacted copy; and compaction throughput.

One run:
  1. generates (numpy/pyarrow, one seed) an R-row base table (id long key, v long version, amount
     double, name string) and appends it to a v3 (deletion vectors) or v2 (position deletes) table;
  2. applies --commits commits of --changes changes each with `lakesync apply` (50% updates, 30%
     inserts, 20% deletes, each key at most once per commit, drawn against the state the previous
     commits left); the expected state (live rows, sum of id, sum of v) is tracked here;
  3. compacts the table with `lakesync table compact` (timed: wall, CPU, rows written per second);
  4. writes the compacted copy: `lakesync scan --format parquet` of the table, then `table create` and
     `table append` into a new table (one data file, no deletes);
  5. checks every state (the snapshot before compaction, after, and the copy) with pyiceberg (row count,
     sum of id, sum of v) before any timing counts, then reads each in full with lakesync's TableScan
     (bench/scan_bench.cc --mode lakesync), one process per read, round-robin over --repeat rounds;
  6. prints medians and the ratios against the goal (after compaction <= 1.05x the copy), with the
     load average, and writes everything to bench/results/;
  7. with --spark: starts Spark with the Iceberg runtime (tests/spark/spark_runner.py, the installed
     .tools/spark-venv and .tools/spark-jars; its JVM start is timed apart), opens the same warehouse
     with Iceberg's JdbcCatalog, rolls the table back to the snapshot lakesync compacted (the same
     uncompacted table, deletion vectors and all), runs `CALL <catalog>.system.rewrite_data_files`
     with `rewrite-all` and the same target file size, times it (wall, and CPU of the Spark process
     tree), and checks the result with pyiceberg (row count and sums as before).

    .venv/bin/python bench/compact_bench.py --rows 2000000 --commits 50 --changes 20000 --repeat 5
    .venv/bin/python bench/compact_bench.py --rows 1000000 --commits 50 --changes 10000 --repeat 3 --spark

The equality-delete read (issue 15: a table after 20 equality-delete commits against its compacted
copy, at 1 and 2 threads): `--format-version 2 --delete-strategy equality --threads 1,2`. pyiceberg
cannot read equality deletes, so the snapshot before compaction is checked by lakesync's scan only
(row count and sum of id against the state tracked here, as every timed read is).

Wall-clock numbers are only compared within one run; nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
TABLE, COPY = "bench.t", "bench.copy"


def run_measured(cmd: list[str], env: dict) -> dict:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        rc = os.waitstatus_to_exitcode(status)
        stdout, stderr = out.read().decode(), err.read().decode()
    if rc != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({rc}):\n{stderr[-3000:]}")
    return {"stdout": stdout, "wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_rss_mib": usage.ru_maxrss / 1024.0}


def tree_cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its descendants (the Spark driver's Python and its JVM),
    from /proc; only differences of two readings are used."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        stats[int(entry.name)] = fields
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        if p in stats:
            total += (int(stats[p][11]) + int(stats[p][12])) / tick  # utime, stime
        todo += children.get(p, [])
    return total


def spark_rewrite(bench: "Bench", snapshot_id: int, target_size: int) -> dict:
    """Spark's rewrite_data_files on the table as it was at `snapshot_id` (see step 7 above)."""
    sys.path.insert(0, str(REPO / "tests" / "spark"))
    os.environ["LAKESYNC_SPARK_TESTS"] = "1"  # the runner's opt-in: a missing piece is an error, not a skip
    import spark_runner as SR  # noqa: E402

    wh = bench.work / "wh"
    t0 = time.perf_counter()
    spark = SR.SparkProcess(bench.work / "spark")
    try:
        jvm_start = time.perf_counter() - t0
        props = {"type": "jdbc", "uri": f"jdbc:sqlite:{wh / 'catalog.db'}", "warehouse": f"file://{wh}",
                 "jdbc.schema-version": "V1", "cache-enabled": "false"}
        # The Spark catalog's name is the SQL catalog's (JdbcCatalog selects its rows by that name).
        spark.run("add_iceberg_catalog(spark, args['name'], args['props'])", name="lakesync", props=props)
        spark.sql(f"CALL lakesync.system.rollback_to_snapshot('{TABLE}', {snapshot_id})")
        bench.check(TABLE)  # the uncompacted state again
        cpu0, w0 = tree_cpu_seconds(spark.proc.pid), time.perf_counter()
        out = spark.sql(f"CALL lakesync.system.rewrite_data_files(table => '{TABLE}', options => map("
                        f"'rewrite-all', 'true', 'target-file-size-bytes', '{target_size}'))")
        wall = time.perf_counter() - w0
        cpu = tree_cpu_seconds(spark.proc.pid) - cpu0
    finally:
        spark.close()
    bench.check(TABLE)  # pyiceberg reads Spark's result: the same rows
    r = out[0] if out else {}
    rows = bench.expected["rows"]
    return {"jvm_start_s": jvm_start, "wall_s": wall, "cpu_s": cpu, "rows_per_s": rows / wall, "result": r,
            "spark_version": spark.version}


def rows_table(ids: np.ndarray, versions: np.ndarray) -> pa.Table:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64()), ("amount", pa.float64()),
                        ("name", pa.string())])
    return pa.table([pa.array(ids, pa.int64()), pa.array(versions, pa.int64()),
                     pa.array(((ids * 31 + versions * 7) % 100_000) / 100.0, pa.float64()),
                     pa.array([f"name-{i}-{k}" for i, k in zip(ids.tolist(), versions.tolist())], pa.string())],
                    schema=schema)


class Bench:
    def __init__(self, args):
        self.args = args
        self.build = Path(args.build).resolve()
        self.work = Path(args.work or tempfile.mkdtemp(prefix="compact-bench-"))
        self.work.mkdir(parents=True, exist_ok=True)
        self.env = dict(os.environ, LAKESYNC_WAREHOUSE=str(self.work / "wh"))
        self.rng = np.random.default_rng(args.seed)

    def lakesync(self, *args) -> dict:
        return run_measured([str(self.build / "lakesync"), *map(str, args)], self.env)

    def setup(self) -> dict:
        a = self.args
        n = a.rows
        version = np.full(n + a.commits * a.changes, -1, dtype=np.int64)  # -1: not live
        version[:n] = 0
        base = self.work / "base.parquet"
        pq.write_table(rows_table(np.arange(n, dtype=np.int64), version[:n]), base)
        self.lakesync("namespace", "create", "bench")
        self.lakesync("table", "create", TABLE, "--schema-from", base, "--format-version", a.format_version,
                      "--identifier-fields", "id")
        self.lakesync("table", "append", TABLE, base)
        next_id = n
        apply_wall = []
        for c in range(a.commits):
            live = np.flatnonzero(version >= 0)
            k = a.changes
            n_upd, n_ins = k // 2, k * 3 // 10
            n_del = k - n_upd - n_ins
            touched = self.rng.choice(live, size=n_upd + n_del, replace=False)
            upd, dele = touched[:n_upd], touched[n_upd:]
            ins = np.arange(next_id, next_id + n_ins, dtype=np.int64)
            next_id += n_ins
            parts, kinds = [], []
            parts.append(rows_table(upd, version[upd]))
            kinds += ["UPDATE_BEFORE"] * n_upd
            parts.append(rows_table(upd, version[upd] + 1))
            kinds += ["UPDATE_AFTER"] * n_upd
            parts.append(rows_table(ins, np.zeros(n_ins, dtype=np.int64)))
            kinds += ["INSERT"] * n_ins
            parts.append(rows_table(dele, version[dele]))
            kinds += ["DELETE"] * n_del
            t = pa.concat_tables(parts)
            t = t.append_column("_change_type", pa.array(kinds, pa.string()))
            t = t.append_column("_seq", pa.array(np.full(t.num_rows, c + 1, dtype=np.int64)))
            path = self.work / f"changes_{c:03d}.parquet"
            pq.write_table(t, path)
            strategy = ["--delete-strategy", a.delete_strategy] if a.delete_strategy else []
            r = self.lakesync("apply", "--table", TABLE, "--changes", path, "--change-type-column", "_change_type",
                              "--sequence-number-column", "_seq", "--equality-columns", "id", *strategy)
            apply_wall.append(r["wall_s"])
            version[upd] += 1
            version[ins] = 0
            version[dele] = -1
            path.unlink()
        live = np.flatnonzero(version >= 0)
        self.expected = {"rows": int(live.size), "sum_id": int(live.sum()), "sum_v": int(version[live].sum())}
        return {"apply_wall_median_s": statistics.median(apply_wall), "apply_commits": a.commits}

    def metadata(self, name: str) -> dict:
        return json.loads(self.lakesync("table", "describe", name, "--json")["stdout"])

    def check(self, name: str, snapshot_id: int | None = None) -> None:
        from pyiceberg.catalog.sql import SqlCatalog

        wh = self.work / "wh"
        t = SqlCatalog("lakesync", uri=f"sqlite:///{wh / 'catalog.db'}", warehouse=f"file://{wh}").load_table(name)
        data = t.scan(snapshot_id=snapshot_id, selected_fields=("id", "v")).to_arrow()
        got = {"rows": data.num_rows, "sum_id": int(pa.compute.sum(data["id"]).as_py() or 0),
               "sum_v": int(pa.compute.sum(data["v"]).as_py() or 0)}
        if got != self.expected:
            raise SystemExit(f"{name} (snapshot {snapshot_id}) reads {got} in pyiceberg, expected {self.expected}")

    def scan(self, name: str, snapshot_id: int | None = None, threads: int | None = None,
             build: Path | None = None) -> dict:
        cmd = [str((build or self.build) / "scan_bench"), "--mode", "lakesync", "--table", name, "--checksum-column", "id"]
        if snapshot_id is not None:
            cmd += ["--snapshot-id", str(snapshot_id)]
        if threads is not None:
            cmd += ["--threads", str(threads)]
        r = run_measured(cmd, self.env)
        line = [json.loads(x) for x in r["stdout"].splitlines() if x.startswith("{")][-1]
        if line["rows"] != self.expected["rows"] or line.get("checksum") != self.expected["sum_id"]:
            raise SystemExit(f"scan_bench of {name} read {line}, expected {self.expected}")
        return {"wall_s": line["wall_s"], "cpu_s": line["cpu_s"], "plan_wall_s": line.get("plan_wall_s"),
                "data_files": line.get("data_files"), "delete_files": line.get("delete_files")}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=2_000_000)
    p.add_argument("--commits", type=int, default=50)
    p.add_argument("--changes", type=int, default=20_000)
    p.add_argument("--format-version", type=int, default=3, choices=[2, 3])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--seed", type=int, default=16)
    p.add_argument("--build", default=str(REPO / "build"))
    p.add_argument("--baseline-build", help="also time this build's scan_bench (e.g. main's) on the same tables, "
                   "round-robin with --build's: states *_base")
    p.add_argument("--work", help="scratch folder (default: a new temporary one)")
    p.add_argument("--spark", action="store_true", help="also time Spark's rewrite_data_files on the same table")
    p.add_argument("--delete-strategy", choices=["equality", "position"],
                   help="lakesync apply --delete-strategy (default: apply's own, deletion vectors on v3)")
    p.add_argument("--threads", default="", help="comma-separated thread counts to scan at (default: the default)")
    p.add_argument("--results-dir", default=str(REPO / "bench" / "results"),
                   help="where the results JSON goes (default bench/results)")
    args = p.parse_args()
    thread_counts = [int(t) for t in args.threads.split(",") if t] or [None]
    bench = Bench(args)
    result = {"started": datetime.now(timezone.utc).isoformat(), "args": vars(args),
              "loadavg_at_start": os.getloadavg()}
    print(f"setting up {args.rows:,} rows and {args.commits} commits of {args.changes:,} changes in {bench.work}",
          flush=True)
    result["setup"] = bench.setup()
    before = bench.metadata(TABLE)
    pre_snapshot = before["current-snapshot-id"]
    r = bench.lakesync("table", "compact", TABLE, "--json")
    done = json.loads(r["stdout"])
    result["compaction"] = {"wall_s": r["wall_s"], "cpu_s": r["cpu_s"], "peak_rss_mib": r["peak_rss_mib"],
                            "rewritten_data_files": done["rewritten_data_files"],
                            "removed_delete_files": done["removed_delete_files"],
                            "added_data_files": done["added_data_files"], "written_records": done["written_records"],
                            "rewritten_records": done["rewritten_records"],
                            "rows_per_s": done["written_records"] / r["wall_s"]}
    copy = bench.work / "copy.parquet"
    bench.lakesync("scan", "--table", TABLE, "--format", "parquet", "--output", copy)
    bench.lakesync("table", "create", COPY, "--schema-from", copy, "--format-version", args.format_version)
    bench.lakesync("table", "append", COPY, copy)
    for name, snap in ((TABLE, pre_snapshot), (TABLE, None), (COPY, None)):
        if snap == pre_snapshot and args.delete_strategy == "equality":
            continue  # pyiceberg refuses equality deletes; every scan below checks this state
        bench.check(name, snap)
    states = {}
    for t in thread_counts:
        suffix = "" if t is None else f"_t{t}"
        states.update({f"before{suffix}": (TABLE, pre_snapshot, t, None), f"after{suffix}": (TABLE, None, t, None),
                       f"copy{suffix}": (COPY, None, t, None)})
        if args.baseline_build:
            base = Path(args.baseline_build)
            states.update({f"before{suffix}_base": (TABLE, pre_snapshot, t, base),
                           f"copy{suffix}_base": (COPY, None, t, base)})
    samples = {k: [] for k in states}
    for _ in range(args.repeat):
        for k, (name, snap, t, build) in states.items():
            samples[k].append(bench.scan(name, snap, t, build))
    med = {k: {"wall_s": statistics.median(s["wall_s"] for s in v), "cpu_s": statistics.median(s["cpu_s"] for s in v),
               "min_wall_s": min(s["wall_s"] for s in v), "max_wall_s": max(s["wall_s"] for s in v)}
           for k, v in samples.items()}
    result.update({"samples": samples, "median": med, "expected": bench.expected,
                   "files_before": len(before["snapshots"]), "loadavg_at_end": os.getloadavg()})
    result["ratios"] = {}
    for t in thread_counts:
        suffix = "" if t is None else f"_t{t}"
        for k in ("before", "after"):
            for m in ("wall_s", "cpu_s"):
                result["ratios"][f"{k}{suffix}_over_copy_{m}"] = med[k + suffix][m] / med["copy" + suffix][m]
        if args.baseline_build:
            for m in ("wall_s", "cpu_s"):
                result["ratios"][f"before{suffix}_base_over_copy_{m}"] = (
                    med[f"before{suffix}_base"][m] / med[f"copy{suffix}_base"][m])
                result["ratios"][f"before{suffix}_over_base_{m}"] = med["before" + suffix][m] / med[f"before{suffix}_base"][m]
    out_dir = Path(args.results_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"compact_bench-{args.rows}-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}.json"
    out.write_text(json.dumps(result, indent=1))
    c = result["compaction"]
    print(f"\n{args.rows:,} rows, {args.commits} commits of {args.changes:,} changes (v{args.format_version}); "
          f"load average {result['loadavg_at_start'][0]:.1f} -> {result['loadavg_at_end'][0]:.1f}")
    print(f"compaction: {c['rewritten_data_files']} data files + {c['removed_delete_files']} delete files -> "
          f"{c['added_data_files']} files; {c['wall_s']:.2f} s wall, {c['cpu_s']:.2f} s CPU, "
          f"{c['rows_per_s']:,.0f} rows/s, peak RSS {c['peak_rss_mib']:.0f} MiB")
    for k in states:
        m = med[k]
        print(f"scan {k:<10} wall {m['wall_s']:.3f} s ({m['min_wall_s']:.3f}..{m['max_wall_s']:.3f})  CPU {m['cpu_s']:.3f} s")
    for k, v in result["ratios"].items():
        print(f"{k}: {v:.3f}")
    if args.spark:
        target = int(before.get("properties", {}).get("write.target-file-size-bytes", 512 * 1024 * 1024))
        result["spark"] = spark_rewrite(bench, pre_snapshot, target)
        s = result["spark"]
        print(f"Spark {s['spark_version']} rewrite_data_files: {s['wall_s']:.2f} s wall, {s['cpu_s']:.2f} s CPU, "
              f"{s['rows_per_s']:,.0f} rows/s (JVM start {s['jvm_start_s']:.1f} s apart); {s['result']}; "
              f"lakesync/Spark rows/s: {c['rows_per_s'] / s['rows_per_s']:.2f}x")
        out.write_text(json.dumps(result, indent=1))
    print(f"results: {out}")


if __name__ == "__main__":
    main()
