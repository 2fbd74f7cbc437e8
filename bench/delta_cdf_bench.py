#!/usr/bin/env python3
"""Delta Change Data Feed read benchmark: `lakesync changes --source delta` against deltalake
(delta-rs) `load_cdf(...).read_all()`, in one run on the same table.

One run:
  1. builds (or reuses, --reuse) a CDF-enabled Delta table with deltalake: version 0 holds
     --base-rows rows; each of the next --commits versions is one MERGE whose source has
     --rows-per-commit rows, 40% updates of live keys, 20% deletes of live keys and 40% new keys
     (deltalake writes `_change_data` files for every merge, so an update yields a pre- and a
     post-image row: 1.4 change rows per changed row);
  2. for each range [1, k] with k in --commit-sets (default 2, 5, 10), checks once that lakesync
     and deltalake return the same number of rows of each `_change_type` and that it matches what
     the generator wrote (the expected counts come from the generated data, not from a reader);
  3. times each reader in its own process, round-robin over --rounds rounds:
       lakesync   `lakesync changes --source delta --table T --start-version 1 --end-version k
                  --format parquet --output /dev/null` by default (reads, decodes and re-encodes
                  every row; --lakesync-output picks other output flags); wall time of the whole
                  process, start-up included
       deltalake  `DeltaTable(T).load_cdf(1, k).read_all()` to an Arrow table in a fresh Python
                  process (time of that call only; interpreter start-up and imports excluded)
     and records each process's peak RSS and CPU time (os.wait4 rusage of that one child; for
     deltalake also the CPU time of the load_cdf call alone, all its threads);
  4. prints medians, ratios and peak memory per commit count, and writes everything to
     bench/results/delta_cdf_bench-<rows>-<time>.json.

    .venv/bin/python bench/delta_cdf_bench.py                         # full size (1M rows per commit)
    .venv/bin/python bench/delta_cdf_bench.py --reuse --lakesync-output=--count   # reader only
    .venv/bin/python bench/delta_cdf_bench.py --rows-per-commit 20000 --rounds 1   # smoke run

Wall-clock numbers are only compared within one run; nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"


# ---------------------------------------------------------------------------------------------
# Table


def build_table(path: Path, base_rows: int, rows_per_commit: int, commits: int, seed: int) -> dict:
    """Writes the table; returns the change rows per version and kind, counted from what was
    generated (the expectation the readers are checked against)."""
    import numpy as np
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    rng = np.random.default_rng(seed)

    def rows(ids):
        n = len(ids)
        return pa.table({
            "id": pa.array(ids, pa.int64()),
            "region": pa.array(rng.choice(["eu", "us", "ap", "sa"], n)),
            "amount": pa.array(rng.integers(-10**9, 10**9, n), pa.int64()).cast(pa.decimal128(38, 2)).cast(pa.decimal128(18, 2)),
            "ts": pa.array(rng.integers(1_600_000_000_000_000, 1_800_000_000_000_000, n),
                           pa.timestamp("us", tz="UTC")),
            "score": pa.array(rng.standard_normal(n)),
            "note": pa.array(rng.choice(["alpha", "beta", "gamma", "delta-lake", "x" * 24], n)),
        })

    if path.exists():
        shutil.rmtree(path)
    t0 = time.perf_counter()
    write_deltalake(str(path), rows(np.arange(base_rows)), configuration={"delta.enableChangeDataFeed": "true"})
    live = np.arange(base_rows)
    next_id = base_rows
    expected = {0: {"insert": base_rows}}
    for v in range(1, commits + 1):
        n_upd, n_del = int(rows_per_commit * 0.4), int(rows_per_commit * 0.2)
        n_ins = rows_per_commit - n_upd - n_del
        picked = rng.choice(live, n_upd + n_del, replace=False)
        upd, dele = picked[:n_upd], picked[n_upd:]
        ins = np.arange(next_id, next_id + n_ins)
        next_id += n_ins
        src = rows(np.concatenate([upd, dele, ins]))
        src = src.append_column("op", pa.array(["u"] * n_upd + ["d"] * n_del + ["i"] * n_ins))
        cols = ["region", "amount", "ts", "score", "note"]
        (DeltaTable(str(path)).merge(src, "t.id = s.id", source_alias="s", target_alias="t")
         .when_matched_update(updates={c: f"s.{c}" for c in cols}, predicate="s.op = 'u'")
         .when_matched_delete(predicate="s.op = 'd'")
         .when_not_matched_insert(updates={c: f"s.{c}" for c in ["id"] + cols})
         .execute())
        live = np.concatenate([np.setdiff1d(live, dele, assume_unique=True), ins])
        expected[v] = {"update_preimage": n_upd, "update_postimage": n_upd, "delete": n_del, "insert": n_ins}
        print(f"  built version {v}/{commits} ({time.perf_counter() - t0:.0f} s)", flush=True)
    assert DeltaTable(str(path)).version() == commits
    return expected


# ---------------------------------------------------------------------------------------------
# Measuring one process


def run_child(cmd: list[str]) -> dict:
    """Runs cmd in its own process; returns its wall time, CPU time and peak RSS (os.wait4: the
    rusage of this one child, not of all children) and its stdout."""
    t0 = time.perf_counter()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.dup2(w, 1)
        os.close(r)
        devnull = os.open(os.devnull, os.O_WRONLY)
        if os.environ.get("DELTA_BENCH_STDERR") != "1":
            os.dup2(devnull, 2)
        try:
            os.execv(cmd[0], cmd)
        finally:
            os._exit(127)
    os.close(w)
    chunks = []
    while True:
        data = os.read(r, 1 << 16)
        if not data:
            break
        chunks.append(data)
    os.close(r)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        raise RuntimeError(f"{' '.join(cmd[:6])} ... exited {rc} (rerun with DELTA_BENCH_STDERR=1)")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mib": usage.ru_maxrss / 1024,
            "stdout": b"".join(chunks).decode()}


DELTALAKE_CHILD = r"""
import json, resource, sys, time
from deltalake import DeltaTable
import pyarrow as pa, pyarrow.compute as pc
path, start, end, counts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)  # all threads of this process
    return r.ru_utime + r.ru_stime
c0, t0 = cpu(), time.perf_counter()
table = pa.table(DeltaTable(path).load_cdf(starting_version=start, ending_version=end).read_all())
elapsed, read_cpu = time.perf_counter() - t0, cpu() - c0
out = {"read_s": elapsed, "read_cpu_s": read_cpu, "rows": table.num_rows}
if counts:
    vc = pc.value_counts(table.column("_change_type")).to_pylist()
    out["kinds"] = {d["values"]: d["counts"] for d in vc}
print(json.dumps(out))
"""

COUNT_PARQUET = r"""
import json, sys
import pyarrow.parquet as pq, pyarrow.compute as pc
t = pq.read_table(sys.argv[1], columns=["_change_type"])
print(json.dumps({"rows": t.num_rows, "kinds": {d["values"]: d["counts"] for d in
      pc.value_counts(t.column("_change_type")).to_pylist()}}))
"""


def lakesync_cmd(lakesync: Path, table: Path, end: int, output_args: list[str], threads: int | None = None) -> list[str]:
    threads_args = ["--threads", str(threads)] if threads else []
    return [str(lakesync), *threads_args, "changes", "--source", "delta", "--table", str(table), "--start-version", "1",
            "--end-version", str(end), *output_args]


def deltalake_cmd(table: Path, end: int, counts: bool) -> list[str]:
    return [sys.executable, "-c", DELTALAKE_CHILD, str(table), "1", str(end), "1" if counts else "0"]


# ---------------------------------------------------------------------------------------------


def machine() -> dict:
    info = {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()}
    try:
        info["cpu_model"] = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                                 if line.startswith("model name"))
        info["mem_gib"] = round(int(next(line.split()[1] for line in open("/proc/meminfo")
                                         if line.startswith("MemTotal"))) / 2**20, 1)
    except (OSError, StopIteration):
        pass
    import deltalake
    import pyarrow

    info["deltalake"], info["pyarrow"] = deltalake.__version__, pyarrow.__version__
    return info


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows-per-commit", type=int, default=1_000_000)
    ap.add_argument("--base-rows", type=int, default=None, help="rows of version 0 (default 2 x rows-per-commit)")
    ap.add_argument("--commits", type=int, default=10)
    ap.add_argument("--commit-sets", default="2,5,10", help="read [1, k] for each k")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--build-dir", default=str(REPO / "build"))
    ap.add_argument("--results-dir", default=str(RESULTS),
                    help="where the results JSON (and, by default, the table) go (default bench/results)")
    ap.add_argument("--table", default=None, help="where the table goes (default <results-dir>/delta-cdf-<rows>)")
    ap.add_argument("--reuse", action="store_true", help="reuse the table (and its expectations) if present")
    ap.add_argument("--build-only", action="store_true", help="build the table and stop")
    ap.add_argument("--lakesync-output", default="--format parquet --output /dev/null",
                    help="output flags of the timed lakesync runs (the check run always writes Parquet)")
    ap.add_argument("--threads", default="",
                    help="comma-separated lakesync thread counts timed side by side, e.g. 1,2 (default: lakesync's "
                         "default, the machine's cores); the summary's lakesync figures are the last count's")
    args = ap.parse_args()
    thread_counts = [int(t) for t in args.threads.split(",") if t] or [None]
    timed_output = shlex.split(args.lakesync_output)
    loadavg_start = open("/proc/loadavg").read().split()[:3]

    lakesync = Path(args.build_dir) / "lakesync"
    if not lakesync.exists() and not args.build_only:
        sys.exit(f"{lakesync} is not built")
    base_rows = args.base_rows or 2 * args.rows_per_commit
    sets = [int(k) for k in args.commit_sets.split(",") if int(k) <= args.commits]
    results = Path(args.results_dir)
    results.mkdir(parents=True, exist_ok=True)
    table = Path(args.table or results / f"delta-cdf-{args.rows_per_commit}")
    manifest = table.with_suffix(".expected.json")
    if args.reuse and manifest.exists() and (table / "_delta_log").is_dir():
        expected = {int(k): v for k, v in json.loads(manifest.read_text()).items()}
        print(f"reusing {table}")
    else:
        print(f"building {table}: {base_rows:,} rows + {args.commits} merges of {args.rows_per_commit:,} rows")
        t0 = time.perf_counter()
        expected = build_table(table, base_rows, args.rows_per_commit, args.commits, args.seed)
        manifest.write_text(json.dumps(expected))
        print(f"built in {time.perf_counter() - t0:.0f} s")
    if args.build_only:
        return 0

    # 1. correctness of both readers on every range, against the generated counts
    for k in sets:
        want: dict[str, int] = {}
        for v in range(1, k + 1):
            for kind, n in expected[v].items():
                want[kind] = want.get(kind, 0) + n
        tmp = results / f"delta-cdf-check-{os.getpid()}.parquet"
        try:
            run_child(lakesync_cmd(lakesync, table, k, ["--format", "parquet", "--output", str(tmp)]))
            ours = json.loads(run_child([sys.executable, "-c", COUNT_PARQUET, str(tmp)])["stdout"])
        finally:
            tmp.unlink(missing_ok=True)
        theirs = json.loads(run_child(deltalake_cmd(table, k, True))["stdout"])
        assert ours["kinds"] == want, f"lakesync [1, {k}]: {ours['kinds']}, generated {want}"
        assert theirs["kinds"] == want, f"deltalake [1, {k}]: {theirs['kinds']}, generated {want}"
        print(f"  [1, {k}]: {sum(want.values()):,} change rows, both readers agree with the generated counts")

    # 2. timings, round-robin
    def variant(t):
        return f"lakesync-t{t}" if t else "lakesync"

    samples: dict[str, dict[int, list]] = {variant(t): {k: [] for k in sets} for t in thread_counts}
    samples["deltalake"] = {k: [] for k in sets}
    for rnd in range(args.rounds):
        for k in sets:
            for t in thread_counts:
                s = run_child(lakesync_cmd(lakesync, table, k, timed_output, t))
                s.pop("stdout")
                samples[variant(t)][k].append(s)
                if len(thread_counts) > 1:
                    print(f"  round {rnd + 1} [1, {k}]: lakesync threads={t} {s['wall_s']:.2f} s wall, "
                          f"{s['cpu_s']:.2f} s CPU", flush=True)
            d = run_child(deltalake_cmd(table, k, False))
            info = json.loads(d.pop("stdout"))
            d["read_s"], d["read_cpu_s"] = info["read_s"], info["read_cpu_s"]
            samples["deltalake"][k].append(d)
            print(f"  round {rnd + 1} [1, {k}]: lakesync {s['wall_s']:.2f} s / {s['peak_rss_mib']:.0f} MiB, "
                  f"load_cdf {d['read_s']:.2f} s (process {d['wall_s']:.2f} s) / {d['peak_rss_mib']:.0f} MiB",
                  flush=True)

    def med(xs, key):
        return statistics.median(x[key] for x in xs)

    summary = []
    for k in sets:
        ls, dl = samples[variant(thread_counts[-1])][k], samples["deltalake"][k]
        row = {"commits": k, "change_rows": sum(sum(expected[v].values()) for v in range(1, k + 1)),
               "lakesync_wall_s": med(ls, "wall_s"), "lakesync_cpu_s": med(ls, "cpu_s"),
               "lakesync_peak_rss_mib": max(x["peak_rss_mib"] for x in ls),
               "deltalake_read_s": med(dl, "read_s"), "deltalake_process_wall_s": med(dl, "wall_s"),
               "deltalake_cpu_s": med(dl, "cpu_s"), "deltalake_read_cpu_s": med(dl, "read_cpu_s"),
               "deltalake_peak_rss_mib": max(x["peak_rss_mib"] for x in dl)}
        row["speedup_vs_load_cdf"] = row["deltalake_read_s"] / row["lakesync_wall_s"]
        row["cpu_ratio_vs_load_cdf"] = row["deltalake_read_cpu_s"] / row["lakesync_cpu_s"]
        for t in thread_counts:
            if t:
                row[f"lakesync_t{t}_wall_s"] = med(samples[variant(t)][k], "wall_s")
                row[f"lakesync_t{t}_cpu_s"] = med(samples[variant(t)][k], "cpu_s")
                row[f"speedup_t{t}_vs_load_cdf"] = row["deltalake_read_s"] / row[f"lakesync_t{t}_wall_s"]
        if len(thread_counts) > 1 and thread_counts[0]:
            row["scaling_wall"] = row[f"lakesync_t{thread_counts[0]}_wall_s"] / row["lakesync_wall_s"]
        summary.append(row)

    print(f"\n{'commits':>7} {'rows':>12} {'ls wall/cpu s':>14} {'load_cdf wall/cpu s':>20} {'wall x':>6} "
          f"{'cpu x':>6} {'ls RSS MiB':>10} {'dl RSS MiB':>10}")
    for r in summary:
        print(f"{r['commits']:>7} {r['change_rows']:>12,} {r['lakesync_wall_s']:>6.2f}/{r['lakesync_cpu_s']:<7.2f} "
              f"{r['deltalake_read_s']:>11.2f}/{r['deltalake_read_cpu_s']:<8.2f} {r['speedup_vs_load_cdf']:>5.2f}x "
              f"{r['cpu_ratio_vs_load_cdf']:>5.2f}x {r['lakesync_peak_rss_mib']:>10.0f} {r['deltalake_peak_rss_mib']:>10.0f}")
        for t in thread_counts:
            if t and len(thread_counts) > 1:
                print(f"{'':>7} threads={t}: {r[f'lakesync_t{t}_wall_s']:.2f} s wall / {r[f'lakesync_t{t}_cpu_s']:.2f} s "
                      f"CPU, {r[f'speedup_t{t}_vs_load_cdf']:.2f}x load_cdf")
        if "scaling_wall" in r:
            print(f"{'':>7} scaling {thread_counts[0]} -> {thread_counts[-1]} threads (wall): {r['scaling_wall']:.2f}x")

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = results / f"delta_cdf_bench-{args.rows_per_commit}-{stamp}.json"
    info = machine()
    info["loadavg_start"], info["loadavg_end"] = loadavg_start, open("/proc/loadavg").read().split()[:3]
    out.write_text(json.dumps({"args": vars(args), "base_rows": base_rows, "machine": info, "expected": expected,
                               "summary": summary, "samples": samples}, indent=1))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
