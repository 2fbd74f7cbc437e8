#!/usr/bin/env python3
"""Iceberg changelog benchmark: `lakesync changes --source iceberg` against diffing consecutive
snapshots with DuckDB (what a user without a changelog reader does), in one run on the same table.

One run:
  1. writes --snapshots change batches of --changes rows each with `lakesync apply` into a v3 table
     keyed by `id` (deletion vectors for updates and deletes): the first batch inserts, later ones mix
     --insert-share new keys, --update-share updates and the rest deletes of live keys, chosen at
     random (seeded);
  2. checks both readers against the generated batches: per snapshot, lakesync's row count by kind
     must equal what the batch did (inserts, deletes, updates as one before and one after image),
     and DuckDB's diff must find the same number of rows on each side;
  3. times, round-robin over --repeat rounds, each reader in its own process:
       lakesync   `lakesync changes --source iceberg --format parquet --output F` (all snapshots)
       duckdb     for each snapshot N: (scan(N-1) EXCEPT ALL scan(N)) UNION ALL (scan(N) EXCEPT ALL
                  scan(N-1)) written with COPY ... TO F (FORMAT parquet); no update pairing
     Both write their Parquet with the --compression codec (default zstd: lakesync's default, not
     DuckDB's, which is snappy), so that both do the same output work.
  4. prints medians and the ratio, writes everything to bench/results/.

    .venv/bin/python bench/changelog_bench.py --changes 1000000 --snapshots 10 --repeat 3

Wall-clock numbers are only compared within one run; nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TABLE = "bench.changelog"


def lakesync(build: Path, warehouse: Path, *args) -> str:
    env = dict(os.environ, LAKESYNC_WAREHOUSE=str(warehouse))
    proc = subprocess.run([str(build / "lakesync"), *map(str, args)], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"lakesync {' '.join(map(str, args))} failed ({proc.returncode}): {proc.stderr}")
    return proc.stdout


def generate_batches(path: Path, snapshots: int, changes: int, insert_share: float, update_share: float,
                     seed: int) -> list[dict]:
    """Writes one Parquet change file per snapshot; returns what each batch does."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    live = np.zeros(0, dtype=np.int64)  # live keys
    next_id = 0
    expected = []
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("category", pa.int32()),
                        pa.field("amount", pa.float64()), pa.field("name", pa.string()),
                        pa.field("version", pa.int64()), pa.field("op", pa.string(), nullable=False),
                        pa.field("seq", pa.int64(), nullable=False)])
    for k in range(snapshots):
        if k == 0:
            n_ins, n_upd, n_del = changes, 0, 0
        else:
            n_ins = int(changes * insert_share)
            n_upd = int(changes * update_share)
            n_del = changes - n_ins - n_upd
        picked = rng.choice(len(live), size=n_upd + n_del, replace=False) if n_upd + n_del else np.zeros(0, np.int64)
        upd_ids, del_ids = live[picked[:n_upd]], live[picked[n_upd:]]
        ins_ids = np.arange(next_id, next_id + n_ins, dtype=np.int64)
        next_id += n_ins
        keep = np.ones(len(live), dtype=bool)
        keep[picked[n_upd:]] = False
        live = np.concatenate([live[keep], ins_ids])
        ids = np.concatenate([ins_ids, upd_ids, del_ids])
        n = len(ids)
        ops = ["INSERT"] * n_ins + ["UPDATE_AFTER"] * n_upd + ["DELETE"] * n_del
        table = pa.table({
            "id": ids,
            "category": rng.integers(0, 1000, n).astype(np.int32),
            "amount": rng.random(n) * 1000,
            "name": pa.array([f"name-{i % 100000:06d}-{k}" for i in ids]),
            "version": np.full(n, k, dtype=np.int64),
            "op": pa.array(ops),
            "seq": np.full(n, k + 1, dtype=np.int64),
        }, schema=schema)
        pq.write_table(table, path / f"changes-{k:02d}.parquet")
        expected.append({"inserts": n_ins, "updates": n_upd, "deletes": n_del})
    return expected


def set_up(work: Path, build: Path, args) -> dict:
    warehouse = work / "wh"
    warehouse.mkdir(parents=True)
    expected = generate_batches(work, args.snapshots, args.changes, args.insert_share, args.update_share, args.seed)
    lakesync(build, warehouse, "namespace", "create", "bench")
    t0 = time.perf_counter()
    for k in range(args.snapshots):
        lakesync(build, warehouse, "apply", "--table", TABLE, "--changes", work / f"changes-{k:02d}.parquet",
                 "--mode", "merge-on-read", "--change-type-column", "op", "--sequence-number-column", "seq",
                 "--equality-columns", "id",
                 "--table-properties", f"format-version={args.format_version}", "--delete-strategy", "position",
                 "--sink-id", "bench", "--source-position", k + 1, "--json")
        (work / f"changes-{k:02d}.parquet").unlink()
    write_s = time.perf_counter() - t0
    metadata = json.loads(lakesync(build, warehouse, "table", "describe", TABLE, "--json"))
    by_id = {s["snapshot-id"]: s for s in metadata["snapshots"]}
    chain, sid = [], metadata["current-snapshot-id"]
    while sid is not None and sid in by_id:
        chain.append(by_id[sid])
        sid = by_id[sid].get("parent-snapshot-id")
    chain.reverse()
    import sqlite3
    with sqlite3.connect(warehouse / "catalog.db") as db:
        [(location,)] = db.execute("SELECT metadata_location FROM iceberg_tables WHERE table_name = 'changelog'")
    return {"warehouse": str(warehouse), "snapshots": [s["snapshot-id"] for s in chain],
            "metadata_location": location, "expected": expected, "write_seconds": write_s}


def duckdb_connection():
    import duckdb
    import duckdb_extension_avro
    import duckdb_extension_iceberg

    def extension(module, name: str) -> str:
        found = sorted(Path(module.__file__).parent.glob(f"extensions/*/{name}.duckdb_extension"))
        if not found:
            raise SystemExit(f"the {name} DuckDB extension file is not installed")
        return str(found[-1])

    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    con.execute(f"LOAD '{extension(duckdb_extension_avro, 'avro')}'")
    con.execute(f"LOAD '{extension(duckdb_extension_iceberg, 'iceberg')}'")
    return con


COLUMNS = "id, category, amount, name, version"


def run_duckdb(setup: dict, out_dir: Path, compression: str) -> dict:
    con = duckdb_connection()
    loc = setup["metadata_location"]
    snaps = setup["snapshots"]
    for k, sid in enumerate(snaps):
        after = f"SELECT {COLUMNS} FROM iceberg_scan('{loc}', snapshot_from_id => {sid})"
        if k == 0:
            query = f"SELECT *, 'INSERT' AS _change_type FROM ({after})"
        else:
            before = f"SELECT {COLUMNS} FROM iceberg_scan('{loc}', snapshot_from_id => {snaps[k - 1]})"
            query = (f"(SELECT *, 'DELETE' AS _change_type FROM ({before} EXCEPT ALL {after})) UNION ALL "
                     f"(SELECT *, 'INSERT' AS _change_type FROM ({after} EXCEPT ALL {before}))")
        con.execute(f"COPY ({query}) TO '{out_dir / f'duck-{k:02d}.parquet'}' (FORMAT parquet, "
                    f"COMPRESSION {compression})")
    return {}


def count_duckdb(setup: dict, out_dir: Path) -> dict:
    con = duckdb_connection()
    counts = []
    for k in range(len(setup["snapshots"])):
        target = out_dir / f"duck-{k:02d}.parquet"
        [(deletes, inserts)] = con.execute(
            f"SELECT count(*) FILTER (WHERE _change_type = 'DELETE'), count(*) FILTER (WHERE _change_type = 'INSERT') "
            f"FROM read_parquet('{target}')").fetchall()
        counts.append({"delete_side": deletes, "insert_side": inserts})
    return {"per_snapshot": counts}


def run_lakesync(setup: dict, build: Path, out_dir: Path, compression: str, threads: int | None = None) -> dict:
    threads_args = ["--threads", threads] if threads else []
    lakesync(build, Path(setup["warehouse"]), *threads_args, "changes", "--source", "iceberg", "--table", TABLE,
             "--format", "parquet", "--compression", compression, "--output", out_dir / "lakesync.parquet")
    return {}


def threads_of(engine: str) -> int | None:
    """lakesync-t2 -> 2; lakesync -> None (lakesync's default)."""
    return int(engine.split("-t", 1)[1]) if engine.startswith("lakesync-t") else None


def count_lakesync(setup: dict, out_dir: Path) -> dict:
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    target = out_dir / "lakesync.parquet"
    table = pq.read_table(target, columns=["_change_type", "_commit_snapshot_id"])
    per = []
    for sid in setup["snapshots"]:
        kinds = table.filter(pc.equal(table["_commit_snapshot_id"], sid))["_change_type"].to_pylist()
        per.append({k: kinds.count(k) for k in ("INSERT", "DELETE", "UPDATE_BEFORE", "UPDATE_AFTER")})
    return {"per_snapshot": per}


def worker(args) -> None:
    """One timed reader in this process: prints a JSON line with its seconds and peak RSS."""
    setup = json.loads(Path(args.setup).read_text())
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    # lakesync runs in a child process, DuckDB in this one: measure where the work happens.
    is_lakesync = args.engine.startswith("lakesync")
    who = resource.RUSAGE_CHILDREN if is_lakesync else resource.RUSAGE_SELF
    start = resource.getrusage(who)
    if is_lakesync:
        run_lakesync(setup, Path(args.build), out_dir, args.compression, threads_of(args.engine))
    else:
        run_duckdb(setup, out_dir, args.compression)
    seconds = time.perf_counter() - t0
    end = resource.getrusage(who)
    cpu = (end.ru_utime - start.ru_utime) + (end.ru_stime - start.ru_stime)
    rss = end.ru_maxrss / 1024
    result = count_lakesync(setup, out_dir) if is_lakesync else count_duckdb(setup, out_dir)
    shutil.rmtree(out_dir)
    print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "peak_rss_mib": rss, **result}))


def timed(engine: str, setup_file: Path, work: Path, build: Path, compression: str) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--worker", engine, "--setup", str(setup_file),
                           "--out-dir", str(work / f"out-{engine}"), "--build", str(build),
                           "--compression", compression],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{engine} failed: {proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def check(engine: str, result: dict, expected: list[dict]) -> list[str]:
    """The snapshots where `engine` disagrees with the generated batches (empty: all agree)."""
    wrong = []
    for k, (got, want) in enumerate(zip(result["per_snapshot"], expected)):
        if engine.startswith("lakesync"):
            ok = (got["INSERT"] == want["inserts"] and got["DELETE"] == want["deletes"]
                  and got["UPDATE_BEFORE"] == want["updates"] and got["UPDATE_AFTER"] == want["updates"])
        else:
            ok = (got["delete_side"] == want["deletes"] + want["updates"]
                  and got["insert_side"] == want["inserts"] + want["updates"])
        if not ok:
            wrong.append(f"snapshot {k}: got {got}, the batch did {want}")
    return wrong


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--changes", type=int, default=1_000_000)
    p.add_argument("--threads", default="",
                   help="comma-separated lakesync thread counts timed side by side (engines lakesync-tN), e.g. 1,2")
    p.add_argument("--skip-duckdb", action="store_true", help="time lakesync only (e.g. for the thread scaling)")
    p.add_argument("--snapshots", type=int, default=10)
    p.add_argument("--insert-share", type=float, default=0.6)
    p.add_argument("--update-share", type=float, default=0.3)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--format-version", type=int, default=3, choices=[2, 3],
                   help="3: deletion vectors; 2: position delete files")
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--compression", default="zstd", choices=["zstd", "snappy", "uncompressed"],
                   help="the Parquet codec both readers write their change sets with (default zstd, lakesync's "
                        "default; DuckDB's own default is snappy)")
    p.add_argument("--build", default=str(REPO / "build"))
    p.add_argument("--work", default=None, help="scratch directory (default: a fresh one under /tmp)")
    p.add_argument("--keep", action="store_true", help="keep the scratch directory (to inspect the table)")
    p.add_argument("--reuse", action="store_true",
                   help="reuse the table a --keep run left in --work (same sizes) instead of writing it again")
    p.add_argument("--results-dir", default=str(REPO / "bench" / "results"),
                   help="where the summary JSON goes (default bench/results)")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--setup", help=argparse.SUPPRESS)
    p.add_argument("--out-dir", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        args.engine = args.worker
        worker(args)
        return
    build = Path(args.build)
    work = Path(args.work or f"/tmp/lakesync-changelog-bench-{os.getpid()}")
    setup_file = work / "setup.json"
    if args.reuse:
        if not args.work or not setup_file.exists():
            raise SystemExit("--reuse needs --work DIR holding the table of an earlier --keep run")
        args.keep = True
    elif work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    try:
        if args.reuse:
            setup = json.loads(setup_file.read_text())
            if len(setup["snapshots"]) != args.snapshots or setup.get("changes") not in (None, args.changes):
                raise SystemExit(f"the table in {work} was written with other sizes")
            print(f"reusing the table in {work}", flush=True)
        else:
            print(f"writing {args.snapshots} snapshots of {args.changes} changes with lakesync apply ...", flush=True)
            setup = set_up(work, build, args)
            setup["changes"] = args.changes
            setup_file.write_text(json.dumps(setup))
            print(f"  written in {setup['write_seconds']:.1f} s", flush=True)
        variants = [f"lakesync-t{t}" for t in args.threads.split(",") if t] or ["lakesync"]
        times: dict[str, list[float]] = {v: [] for v in variants}
        loadavg_start = open("/proc/loadavg").read().split()[:3]
        if not args.skip_duckdb:
            times["duckdb"] = []
        cpu: dict[str, list[float]] = {e: [] for e in times}
        rss: dict[str, float] = {}
        errors: dict[str, list[str]] = {}
        for r in range(args.repeat):
            for engine in times:
                result = timed(engine, setup_file, work, build, args.compression)
                wrong = check(engine, result, setup["expected"])
                if wrong and engine.startswith("lakesync"):
                    raise SystemExit(f"lakesync: {wrong[0]}")
                if wrong:
                    # Timed all the same, and reported: a reader that returns wrong rows is no alternative.
                    errors[engine] = wrong
                    print(f"  {engine} returned wrong change sets: {wrong[0]} ({len(wrong)} snapshots)", flush=True)
                times[engine].append(result["seconds"])
                cpu[engine].append(result["cpu_seconds"])
                rss[engine] = max(rss.get(engine, 0), result["peak_rss_mib"])
                print(f"  round {r + 1} {engine:8s} {result['seconds']:8.2f} s wall {result['cpu_seconds']:8.2f} s cpu",
                      flush=True)
        med = {e: statistics.median(v) for e, v in times.items()}
        med_cpu = {e: statistics.median(v) for e, v in cpu.items()}
        summary = {
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
            "changes_per_snapshot": args.changes, "snapshots": args.snapshots,
            "insert_share": args.insert_share, "update_share": args.update_share,
            "write_seconds": setup["write_seconds"],
            "seconds": times, "median_seconds": med, "cpu_seconds": cpu, "median_cpu_seconds": med_cpu,
            "peak_rss_mib": rss, "wrong_results": errors, "format_version": args.format_version,
            "output_compression": args.compression,
            "loadavg_start": loadavg_start, "loadavg_end": open("/proc/loadavg").read().split()[:3],
        }
        for v in variants:
            if "duckdb" in med:
                summary[f"ratio_duckdb_over_{v}"] = med["duckdb"] / med[v]
                summary[f"cpu_ratio_duckdb_over_{v}"] = med_cpu["duckdb"] / med_cpu[v]
        if len(variants) > 1:
            summary["scaling_wall"] = med[variants[0]] / med[variants[-1]]
        print(json.dumps(summary, indent=2))
        results = Path(args.results_dir)
        results.mkdir(parents=True, exist_ok=True)
        out = results / f"changelog-{datetime.now():%Y%m%d-%H%M%S}.json"
        out.write_text(json.dumps(summary, indent=2))
        print(f"results: {out}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
