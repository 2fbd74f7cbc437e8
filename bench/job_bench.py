#!/usr/bin/env python3
"""End-to-end sync benchmark (issue 6): a Delta table's Change Data Feed kept in an Iceberg v3 table,
merge-on-read, by `lakesync run JOB --once`, side by side in one run with the pipeline a user would
otherwise script on one machine (deltalake `load_cdf` + pyiceberg `upsert`/`delete`).

One run:
  1. uses (--reuse) or builds the CDF-enabled Delta tables of bench/delta_cdf_bench.py (its generator):
     version 0 holds 2 x R rows, each of the next 10 versions is one MERGE of R changed keys (40%
     updates, 20% deletes, 40% new keys; an update is a pre- and a post-image row in the feed, so a
     version holds 1.4 x R feed rows). The full size is R = --rows-per-commit (default 1M) over
     --versions (10) versions. The peer runs the full size by default (about 15 minutes on 2 cores:
     40 s to 130 s per 1M-change version, growing with the table); --small-versions N and/or
     --small-rows-per-commit R' run it on a reduced size instead, and lakesync at that size too
     (ls-once/small, ls-per-ver/small: the like-for-like ratio);
  2. configurations, each in fresh processes against a fresh scratch warehouse:
       ls-once      one `lakesync run job.yaml --once` with `start_version: 0, initial_snapshot: true,
                    end_version: N`: imports version 0, then applies versions 1..N in one commit
       ls-per-ver   the same job run N times with end_version 1, 2, ..., N (each run resumes from the
                    position committed in the target): the import + version 1, then one version per run
       peer         one Python process: pyiceberg SqlCatalog (SQLite), table created from deltalake's
                    snapshot of version 0 (append), then per version v: load_cdf(v, v).read_all(),
                    update_preimage rows dropped, delete(In(id, deleted ids)), upsert(insert +
                    update_postimage rows, last row per id, join_cols=[id]): one pair of commits per version
     wall time, CPU time and peak RSS of every process (os.wait4 rusage of that one child); for
     ls-per-ver the sums of wall and CPU and the largest RSS over its N processes;
  3. before a configuration's time counts, its final Iceberg table (read by pyiceberg's scan) must equal
     deltalake's snapshot of the Delta table at version N: row count and checksums (sum of id, sum of
     ts micros, sum of amount, and a wrapped 64-bit sum of a hash of (id, ts, amount) that ties each id
     to its values), all computed with pyarrow/numpy in a separate process; and the rows lakesync's
     JSON summary lines count per change type must equal what the generator wrote;
  4. lakesync configurations round-robin over --rounds rounds (stopping early at --deadline-utc),
     the peer once; prints medians, rows/s and ratios; writes bench/results/job_bench-<time>.json.

"Changes" are changed keys (R per version: inserts + deletes + updates, as the MERGE source had
them); "feed rows" count update pre-images too (1.4 x R). rows/s = changes / process wall time, the
initial import of version 0 included (it is part of what each pipeline does end to end).

    .venv/bin/python bench/job_bench.py --reuse --lakesync build-bench/lakesync
    .venv/bin/python bench/job_bench.py --reuse --rows-per-commit 20000 --versions 5 --small-rows-per-commit 20000 \
        --small-versions 3 --rounds 1                                                 # smoke run, seconds

Wall-clock numbers are only compared within one run; nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
sys.path.insert(0, str(Path(__file__).resolve().parent))
import delta_cdf_bench  # noqa: E402  (the Delta table generator and the machine description)

TARGET = "bench.target"


# ---------------------------------------------------------------------------------------------
# Measuring one process


def run_child(cmd: list[str], env: dict | None = None, timeout: float | None = None) -> dict:
    """Runs cmd in its own process (stderr to a scratch file); returns its wall time, CPU time and
    peak RSS (os.wait4: the rusage of this one child) and its stdout. Kills it after `timeout` s."""
    err = tempfile.TemporaryFile()
    t0 = time.perf_counter()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(w, 1)
            os.dup2(err.fileno(), 2)
            os.close(r)
            os.execve(cmd[0], cmd, env if env is not None else os.environ)
        finally:
            os._exit(127)
    os.close(w)
    if timeout:
        import signal
        import threading

        timer = threading.Timer(timeout, lambda: os.kill(pid, signal.SIGKILL))
        timer.start()
    chunks = []
    while True:
        data = os.read(r, 1 << 16)
        if not data:
            break
        chunks.append(data)
    os.close(r)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if timeout:
        timer.cancel()
    rc = os.waitstatus_to_exitcode(status)
    err.seek(0)
    stderr = err.read().decode(errors="replace")
    if rc != 0:
        raise RuntimeError(f"{' '.join(a for a in cmd[:6] if len(a) < 200)} ... exited {rc} after {wall:.0f} s:\n{stderr[-3000:]}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mib": usage.ru_maxrss / 1024,
            "stdout": b"".join(chunks).decode()}


# ---------------------------------------------------------------------------------------------
# The peer pipeline and the checks, run as fresh Python processes

PEER = r"""
import json, os, resource, sys, time
import pyarrow as pa, pyarrow.compute as pc
from deltalake import DeltaTable
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import In

table_path, warehouse, last = sys.argv[1], sys.argv[2], int(sys.argv[3])
def plain(t):  # deltalake hands strings out as string_view, which pyiceberg's schema conversion rejects
    return t.cast(pa.schema([f.with_type(pa.string()) if f.type == pa.string_view() else f for f in t.schema]))
t0 = time.perf_counter()
catalog = SqlCatalog("peer", uri=f"sqlite:///{warehouse}/catalog.db", warehouse=f"file://{warehouse}")
catalog.create_namespace("bench")
base = plain(pa.table(DeltaTable(table_path, version=0).to_pyarrow_table()))
target = catalog.create_table("bench.target", schema=base.schema)
target.append(base)
steps = [{"version": 0, "rows": base.num_rows, "s": time.perf_counter() - t0}]
del base
source = DeltaTable(table_path)
for v in range(1, last + 1):
    s0 = time.perf_counter()
    feed = plain(pa.table(source.load_cdf(starting_version=v, ending_version=v).read_all()))
    kind = feed["_change_type"]
    deletes = feed.filter(pc.equal(kind, "delete"))["id"].to_pylist()
    ups = feed.filter(pc.is_in(kind, pa.array(["insert", "update_postimage"])))
    ups = ups.sort_by([("_commit_version", "ascending")])
    # last row per id (one per id within one version already; kept general)
    ups = ups.append_column("_i", pa.array(range(ups.num_rows), pa.int64()))
    keep = ups.group_by("id").aggregate([("_i", "max")])["_i_max"]
    ups = ups.take(keep).drop_columns(["_change_type", "_commit_version", "_commit_timestamp", "_i"])
    read_s = time.perf_counter() - s0
    target = catalog.load_table("bench.target")
    if deletes:
        target.delete(In("id", deletes))
    delete_s = time.perf_counter() - s0 - read_s
    result = target.upsert(ups.cast(target.schema().as_arrow()), join_cols=["id"])
    steps.append({"version": v, "deletes": len(deletes), "upserts": ups.num_rows, "read_s": read_s,
                  "delete_s": delete_s, "upsert_s": time.perf_counter() - s0 - read_s - delete_s,
                  "rows_updated": result.rows_updated, "rows_inserted": result.rows_inserted,
                  "s": time.perf_counter() - s0})
    print(json.dumps(steps[-1]), file=sys.stderr, flush=True)
print(json.dumps({"steps": steps, "wall_s": time.perf_counter() - t0}), flush=True)
os._exit(0)
"""

CHECK = r"""
import json, sys
import numpy as np, pyarrow as pa, pyarrow.compute as pc
kind, path = sys.argv[1], sys.argv[2]
cols = ["id", "ts", "amount"]
if kind == "delta":
    from deltalake import DeltaTable
    t = pa.table(DeltaTable(path, version=int(sys.argv[3])).to_pyarrow_table(columns=cols))
else:
    from pyiceberg.catalog.sql import SqlCatalog
    cat = SqlCatalog(sys.argv[3], uri=f"sqlite:///{path}/catalog.db", warehouse=f"file://{path}")
    t = cat.load_table(sys.argv[4]).scan(selected_fields=tuple(cols)).to_arrow()
ids = t["id"].to_numpy().astype(np.uint64)
ts = t["ts"].cast(pa.int64()).to_numpy().astype(np.uint64)
def unscaled(chunk):  # decimal128(18, 2): the low 64-bit word of each little-endian value is its cents
    assert chunk.null_count == 0 and chunk.type.precision <= 18
    words = np.frombuffer(chunk.buffers()[1], dtype=np.int64)[0::2]
    return words[chunk.offset:chunk.offset + len(chunk)]
cents = np.concatenate([unscaled(c) for c in t["amount"].chunks] or [np.zeros(0, np.int64)]).astype(np.uint64)
with np.errstate(over="ignore"):
    mix = (ids * np.uint64(0x9E3779B97F4A7C15)) ^ (ts * np.uint64(31)) ^ (cents * np.uint64(0xBF58476D1CE4E5B9))
    out = {"rows": t.num_rows, "distinct_ids": len(np.unique(ids)), "sum_id": int(ids.sum(dtype=np.uint64)),
           "sum_ts": int(ts.sum(dtype=np.uint64)), "sum_amount_cents": int(cents.sum(dtype=np.uint64)),
           "sum_mix": int(mix.sum(dtype=np.uint64))}
print(json.dumps(out))
"""


def checksums(*args: str) -> dict:
    return json.loads(run_child([sys.executable, "-c", CHECK, *args])["stdout"])


# ---------------------------------------------------------------------------------------------
# Configurations


def write_job(scratch: Path, table: Path, end_version: int) -> Path:
    # JSON is YAML: the job file is written with json so nothing here depends on PyYAML.
    job = {"name": "job-bench",
           "source": {"type": "delta_lake_cdc", "table": str(table), "start_version": 0,
                      "initial_snapshot": True, "end_version": end_version},
           "sink": {"table": TARGET, "equality_columns": ["id"], "table_properties": {"format-version": "3"}}}
    path = scratch / f"job-{end_version}.yaml"
    path.write_text(json.dumps(job, indent=1))
    return path


def summaries(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def run_lakesync(lakesync: Path, table: Path, versions: int, per_version: bool, scratch: Path) -> dict:
    if scratch.exists():
        shutil.rmtree(scratch)
    (scratch / "warehouse").mkdir(parents=True)
    env = dict(os.environ, LAKESYNC_WAREHOUSE=str(scratch / "warehouse"))
    env.pop("LAKESYNC_FAILPOINT", None)
    ends = range(1, versions + 1) if per_version else [versions]
    runs = []
    for end in ends:
        r = run_child([str(lakesync), "run", str(write_job(scratch, table, end)), "--once"], env=env)
        r["end_version"] = end
        r["summaries"] = summaries(r.pop("stdout"))
        bad = [s for s in r["summaries"] if s.get("status") != "committed"]
        if bad or not r["summaries"]:
            raise RuntimeError(f"lakesync run through version {end}: {r['summaries']}")
        runs.append(r)
    lines = [x for r in runs for x in r["summaries"]]
    rows: dict[str, int] = {}
    for x in lines:
        if not x.get("initial_snapshot"):
            for k, c in x["rows"].items():
                rows[k] = rows.get(k, 0) + c
    return {"wall_s": sum(r["wall_s"] for r in runs), "cpu_s": sum(r["cpu_s"] for r in runs),
            "peak_rss_mib": max(r["peak_rss_mib"] for r in runs), "runs": runs, "change_rows": rows,
            "import_s": sum(x["duration_seconds"] for x in lines if x.get("initial_snapshot")),
            "apply_s": sum(x["duration_seconds"] for x in lines if not x.get("initial_snapshot")),
            "warehouse": str(scratch / "warehouse")}


def run_peer(table: Path, versions: int, scratch: Path, timeout: float) -> dict:
    if scratch.exists():
        shutil.rmtree(scratch)
    (scratch / "warehouse").mkdir(parents=True)
    r = run_child([sys.executable, "-c", PEER, str(table), str(scratch / "warehouse"), str(versions)],
                  timeout=timeout)
    info = json.loads(r.pop("stdout"))
    r["steps"], r["inner_wall_s"] = info["steps"], info["wall_s"]
    r["warehouse"] = str(scratch / "warehouse")
    return r


def ensure_table(rows_per_commit: int, commits: int, seed: int, reuse: bool, path: str | None,
                 results: Path) -> tuple[Path, dict]:
    table = Path(path or results / f"delta-cdf-{rows_per_commit}")
    manifest = table.with_suffix(".expected.json")
    if reuse and manifest.exists() and (table / "_delta_log").is_dir():
        print(f"reusing {table}")
        return table, {int(k): v for k, v in json.loads(manifest.read_text()).items()}
    print(f"building {table}: {2 * rows_per_commit:,} rows + {commits} merges of {rows_per_commit:,} rows")
    expected = delta_cdf_bench.build_table(table, 2 * rows_per_commit, rows_per_commit, commits, seed)
    manifest.write_text(json.dumps(expected))
    return table, expected


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lakesync", default=str(REPO / "build" / "lakesync"))
    ap.add_argument("--rows-per-commit", type=int, default=1_000_000)
    ap.add_argument("--versions", type=int, default=10)
    ap.add_argument("--small-rows-per-commit", type=int, default=1_000_000,
                    help="the peer's size (default: the full table's commits, fewer of them)")
    ap.add_argument("--small-versions", type=int, default=10, help="versions the peer (and ls at that size) apply")
    ap.add_argument("--results-dir", default=str(RESULTS),
                    help="where the results JSON, the default tables and the scratch go (default bench/results)")
    ap.add_argument("--table", default=None, help="full-size Delta table (default <results-dir>/delta-cdf-<rows>)")
    ap.add_argument("--small-table", default=None)
    ap.add_argument("--reuse", action="store_true", help="reuse the tables (and their expectations) if present")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=3, help="rounds of the lakesync configurations")
    ap.add_argument("--deadline-utc", default=None, help="HH:MM: start no new round after it")
    ap.add_argument("--peer-timeout", type=float, default=1200.0)
    ap.add_argument("--skip-peer", action="store_true")
    ap.add_argument("--scratch", default=None, help="scratch directory (default a temporary one)")
    args = ap.parse_args()
    loadavg_start = open("/proc/loadavg").read().split()[:3]
    lakesync = Path(args.lakesync).resolve()
    if not lakesync.exists():
        sys.exit(f"{lakesync} is not built")
    results = Path(args.results_dir)
    results.mkdir(parents=True, exist_ok=True)
    full_table, full_expected = ensure_table(args.rows_per_commit, args.versions, args.seed, args.reuse, args.table,
                                             results)
    if args.small_rows_per_commit == args.rows_per_commit and not args.small_table:
        small_table, small_expected = full_table, full_expected
    else:
        small_table, small_expected = ensure_table(args.small_rows_per_commit, args.versions, args.seed, args.reuse,
                                                   args.small_table, results)
    scratch = Path(args.scratch or tempfile.mkdtemp(prefix="job-bench-", dir=results))
    if not args.scratch:  # removed on every way out, failed checks included
        import atexit

        atexit.register(shutil.rmtree, scratch, ignore_errors=True)

    sizes = {"full": (full_table, args.versions, full_expected),
             "small": (small_table, args.small_versions, small_expected)}
    same = small_table == full_table and args.small_versions == args.versions
    peer_size = "full" if same else "small"  # the peer at full size: no separate small configurations
    if same:
        del sizes["small"]
    want = {}
    for size, (table, n, expected) in sizes.items():
        assert max(expected) >= n, f"{table} has versions up to {max(expected)}, {n} asked for"
        want[size] = checksums("delta", str(table), str(n))
        print(f"{size}: {table} v{n}: {want[size]['rows']:,} rows (deltalake snapshot)")

    def counts(size: str) -> dict:
        _, n, expected = sizes[size]
        kinds: dict[str, int] = {}
        for v in range(1, n + 1):
            for k, c in expected[v].items():
                kinds[k] = kinds.get(k, 0) + c
        return {"base_rows": expected[0]["insert"], "versions": n, "kinds": kinds,
                "changes": sum(c for k, c in kinds.items() if k != "update_preimage"),
                "feed_rows": sum(kinds.values())}

    configs = [("ls-once", "full"), ("ls-per-ver", "full")] + ([] if same else [("ls-once", "small"), ("ls-per-ver", "small")])
    samples: dict[str, list] = {f"{c}/{s}": [] for c, s in configs}
    checks: dict[str, dict] = {}

    def verify(key: str, warehouse: str, catalog: str, size: str) -> None:
        got = checksums("iceberg", warehouse, catalog, TARGET)
        ok = got == want[size]
        checks.setdefault(key, {"ok": True, "runs": 0})
        checks[key]["runs"] += 1
        checks[key]["last"] = got
        if not ok:
            checks[key]["ok"] = False
            raise SystemExit(f"{key}: final table {got} != deltalake snapshot {want[size]}")

    def past_deadline() -> bool:
        if not args.deadline_utc:
            return False
        return datetime.now(timezone.utc).strftime("%H:%M") >= args.deadline_utc

    def lakesync_round(rnd: int) -> None:
        for config, size in configs:
            table, n, _ = sizes[size]
            key = f"{config}/{size}"
            s = run_lakesync(lakesync, table, n, config == "ls-per-ver", scratch / key.replace("/", "-"))
            verify(key, s["warehouse"], "lakesync", size)
            kinds = counts(size)["kinds"]
            printed = {k: s["change_rows"].get(n, 0) for k, n in (("insert", "insert"), ("delete", "delete"),
                       ("update_preimage", "update_before"), ("update_postimage", "update_after"))}
            if printed != kinds:  # the summary lines must count what the generator wrote
                raise SystemExit(f"{key}: lakesync's summaries count {printed}, generated {kinds}")
            shutil.rmtree(scratch / key.replace("/", "-"))
            samples[key].append(s)
            print(f"  round {rnd + 1} {key}: {s['wall_s']:.1f} s wall, {s['cpu_s']:.1f} s CPU, "
                  f"{s['peak_rss_mib']:.0f} MiB peak, final table checked", flush=True)

    lakesync_round(0)
    peer = None
    if not args.skip_peer:
        table, n, _ = sizes[peer_size]
        print(f"  peer: {n} versions of {args.small_rows_per_commit:,} changes (deltalake + pyiceberg) ...", flush=True)
        try:
            peer = run_peer(table, n, scratch / "peer", args.peer_timeout)
            verify(f"peer/{peer_size}", peer["warehouse"], "peer", peer_size)
            shutil.rmtree(scratch / "peer")
            print(f"  peer: {peer['wall_s']:.1f} s wall, {peer['cpu_s']:.1f} s CPU, {peer['peak_rss_mib']:.0f} MiB peak, "
                  f"final table checked", flush=True)
        except RuntimeError as e:
            peer = {"failed": str(e)[-2000:]}
            print(f"  peer failed: {str(e)[-500:]}", flush=True)
    for rnd in range(1, args.rounds):
        if past_deadline():
            print(f"  deadline {args.deadline_utc} UTC passed: {rnd} round(s) only")
            break
        lakesync_round(rnd)

    summary = []
    for config, size in configs:
        xs = samples[f"{config}/{size}"]
        c = counts(size)
        row = {"pipeline": config, "size": size, **{k: c[k] for k in ("versions", "changes", "feed_rows", "base_rows")},
               "rounds": len(xs), "wall_s": statistics.median(x["wall_s"] for x in xs),
               "cpu_s": statistics.median(x["cpu_s"] for x in xs),
               "peak_rss_mib": max(x["peak_rss_mib"] for x in xs)}
        row["import_s"] = statistics.median(x["import_s"] for x in xs)  # from the JSON summary lines
        row["apply_s"] = statistics.median(x["apply_s"] for x in xs)
        if config == "ls-per-ver":
            # per-version process wall: run 1 also imports version 0
            row["first_run_wall_s"] = statistics.median(x["runs"][0]["wall_s"] for x in xs)
            if c["versions"] > 1:
                row["later_run_wall_s"] = statistics.median(r["wall_s"] for x in xs for r in x["runs"][1:])
        row["changes_per_s"] = row["changes"] / row["wall_s"]
        summary.append(row)
    if peer and "failed" not in peer:
        c = counts(peer_size)
        summary.append({"pipeline": "peer", "size": peer_size, **{k: c[k] for k in ("versions", "changes", "feed_rows", "base_rows")},
                        "rounds": 1, "wall_s": peer["wall_s"], "cpu_s": peer["cpu_s"],
                        "peak_rss_mib": peer["peak_rss_mib"], "changes_per_s": c["changes"] / peer["wall_s"],
                        "import_s": peer["steps"][0]["s"], "apply_s": sum(x["s"] for x in peer["steps"][1:])})
        for row in summary:
            if row["size"] == peer_size and row["pipeline"] != "peer":
                row["peer_wall_over_this"] = peer["wall_s"] / row["wall_s"]
                row["peer_cpu_over_this"] = peer["cpu_s"] / row["cpu_s"]

    print(f"\n{'pipeline':<11} {'size':<5} {'ver':>3} {'changes':>11} {'wall s':>8} {'CPU s':>8} {'changes/s':>11} "
          f"{'RSS MiB':>8} {'peer x':>7}")
    for r in summary:
        ratio = f"{r['peer_wall_over_this']:.1f}x" if "peer_wall_over_this" in r else ""
        print(f"{r['pipeline']:<11} {r['size']:<5} {r['versions']:>3} {r['changes']:>11,} {r['wall_s']:>8.1f} "
              f"{r['cpu_s']:>8.1f} {r['changes_per_s']:>11,.0f} {r['peak_rss_mib']:>8.0f} {ratio:>7}")

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = results / f"job_bench-{args.rows_per_commit}-{stamp}.json"
    info = delta_cdf_bench.machine()
    import pyiceberg

    info["pyiceberg"] = pyiceberg.__version__
    info["loadavg_start"], info["loadavg_end"] = loadavg_start, open("/proc/loadavg").read().split()[:3]
    out.write_text(json.dumps({"args": vars(args), "lakesync": str(lakesync), "tables": {k: str(v[0]) for k, v in sizes.items()},
                               "expected_state": want, "counts": {s: counts(s) for s in sizes}, "checks": checks,
                               "machine": info, "summary": summary, "samples": samples, "peer": peer}, indent=1))
    print(f"machine: load average {' '.join(loadavg_start)} at start, {' '.join(info['loadavg_end'])} at end")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
