#!/usr/bin/env python3
"""REST catalog benchmark: loadTable and commit throughput and latency (p50/p99) of `lakesync catalog
serve` with the wrk load generator (Debian's `wrk`: apt-get install wrk), 1 and 16 concurrent
connections, next to the floor: the same SQLite catalog's LoadTable/CommitTable called in process
(build/catalog_load_bench, bench/catalog_load_bench.cc) with 1 and 16 threads.

One run:
  1. makes an embedded catalog with one table (namespace bench, table t) and --snapshots appends, so
     loadTable returns metadata with that many snapshots;
  2. starts `lakesync catalog serve --listen 127.0.0.1:0` on it (log level warn: no per-request lines);
  3. wrk -c1 and -c16 (two threads) for --seconds each: GET /v1/namespaces/bench/tables/t (loadTable);
     then POST /v1/namespaces/bench/tables/t with a set-properties update and no requirements (commit:
     each one swaps the metadata pointer; with 16 connections, lost compare-and-swaps answer 409 and
     are counted separately);
  4. the same table and load against Apache Iceberg's REST fixture (RESTCatalogServer over its in-memory
     JdbcCatalog, Java 17), when scripts/setup-rest-fixture.sh has installed it;
  5. the in-process floor for the same operations and concurrencies;
  6. prints a table and writes bench/results/rest_catalog_<time>.json with the load average.

Nothing here is a test.

    .venv/bin/python bench/rest_catalog_bench.py --seconds 10
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import time
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

COMMIT_LUA = r"""
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local n = 0
request = function()
  n = n + 1
  local body = '{"requirements": [], "updates": [{"action": "set-properties", "updates": {"bench.n": "' .. n .. '"}}]}'
  return wrk.format(nil, nil, nil, body)
end
"""


def parse_wrk(text: str) -> dict:
    def latency(label):
        m = re.search(rf"^\s*{label}\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
        if not m:
            return None
        v = float(m.group(1))
        return {"us": v / 1000, "ms": v, "s": v * 1000}[m.group(2)]

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    m = re.search(r"(\d+) requests in ([\d.]+)(ms|s|m)", text)
    total = int(m.group(1))
    seconds = float(m.group(2)) * {"ms": 0.001, "s": 1, "m": 60}[m.group(3)]
    failed = int(non2xx.group(1)) if non2xx else 0
    # per_second counts successful answers only (409s of lost commit races are not throughput).
    return {"answers_per_second": rps, "per_second": (total - failed) / seconds, "requests": total,
            "non_2xx": failed, "p50_ms": latency("50%"), "p99_ms": latency("99%")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=str(REPO / "build"))
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--snapshots", type=int, default=20)
    ap.add_argument("--results-dir", default=str(REPO / "bench" / "results"),
                    help="where the results JSON goes (default bench/results)")
    args = ap.parse_args()
    build = Path(args.build_dir)
    lakesync, floor = build / "lakesync", build / "catalog_load_bench"
    wrk = shutil.which("wrk")
    if not wrk:
        sys.exit("wrk is not installed: apt-get install wrk")
    load_before = os.getloadavg()
    root = Path(tempfile.mkdtemp(prefix="rest-bench-"))
    env = dict(os.environ, LAKESYNC_WAREHOUSE=str(root / "wh"))

    def run(*a):
        subprocess.run([str(lakesync), *map(str, a)], env=env, check=True, capture_output=True, cwd=root)

    def make_table(*catalog_args):
        run("namespace", "create", "bench", *catalog_args)
        (root / "schema.yaml").write_text("fields:\n  - {name: id, type: long, required: true}\n"
                                          "  - {name: name, type: string}\n")
        run("table", "create", "bench.t", "--schema", root / "schema.yaml", "--format-version", "3", *catalog_args)
        for i in range(args.snapshots):
            f = root / f"rows{i}.jsonl"
            f.write_text("".join(json.dumps({"id": i * 10 + j, "name": f"n{j}"}) + "\n" for j in range(10)))
            run("table", "append", "bench.t", f, *catalog_args)

    make_table()
    (root / "catalog.yaml").write_text(
        f"catalog_name: lakesync\ncatalog_properties:\n  type: sql\n"
        f"  uri: sqlite:///{root / 'wh' / 'catalog.db'}\n  warehouse: file://{root / 'wh'}\n")
    (root / "commit.lua").write_text(COMMIT_LUA)

    server = subprocess.Popen([str(lakesync), "catalog", "serve", "--listen", "127.0.0.1:0"], env=env, cwd=root,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = server.stdout.readline().strip().rsplit(" ", 1)[-1]
    table_url = f"{url}/v1/namespaces/bench/tables/t"
    results = []
    try:
        for op in ("load", "commit"):
            for conns in (1, 16):
                cmd = [wrk, f"-t{min(conns, 2)}", f"-c{conns}", f"-d{args.seconds}s", "--latency", table_url]
                if op == "commit":
                    cmd[1:1] = ["-s", str(root / "commit.lua")]
                out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
                r = parse_wrk(out)
                r.update(engine="lakesync catalog serve (wrk)", op=op, concurrency=conns)
                results.append(r)
                print(json.dumps(r), flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)

    fixture_lib = REPO / ".tools" / "iceberg-rest-fixture" / "lib"
    if fixture_lib.is_dir():
        (root / "fixture-wh").mkdir()
        log_path = root / "fixture.log"
        fixture = subprocess.Popen(["java", "-cp", f"{fixture_lib}/*", "org.apache.iceberg.rest.RESTCatalogServer"],
                                   # A file database: with its default jdbc:sqlite::memory: every pooled
                                   # connection would see a database of its own.
                                   env=dict(os.environ, CATALOG_WAREHOUSE=f"file://{root / 'fixture-wh'}",
                                            CATALOG_URI=f"jdbc:sqlite:{root / 'fixture.db'}",
                                            CATALOG_REST_PORT="0"),
                                   stdout=open(log_path, "wb"), stderr=subprocess.STDOUT)
        try:
            port = None
            deadline = time.monotonic() + 120
            while port is None and time.monotonic() < deadline and fixture.poll() is None:
                m = re.search(r"Started ServerConnector@.*\{[\d.]+:(\d+)\}", log_path.read_text(errors="replace"))
                port = int(m.group(1)) if m else time.sleep(0.3)
            if port is None:
                sys.exit(f"the REST fixture did not start: {log_path.read_text(errors='replace')[-2000:]}")
            fixture_url = f"http://127.0.0.1:{port}"
            (root / "fixture.yaml").write_text(f"catalog_name: fixture\ncatalog_properties:\n  type: rest\n"
                                               f"  uri: {fixture_url}\n")
            make_table("--catalog-config", root / "fixture.yaml")
            fixture_table = f"{fixture_url}/v1/namespaces/bench/tables/t"
            for op in ("load", "commit"):
                for conns in (1, 16):
                    cmd = [wrk, f"-t{min(conns, 2)}", f"-c{conns}", f"-d{args.seconds}s", "--latency", fixture_table]
                    if op == "commit":
                        cmd[1:1] = ["-s", str(root / "commit.lua")]
                    r = parse_wrk(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
                    r.update(engine="Apache REST fixture 1.10.1 (wrk)", op=op, concurrency=conns)
                    results.append(r)
                    print(json.dumps(r), flush=True)
        finally:
            fixture.terminate()
            fixture.wait(timeout=30)
    for op in ("load", "commit"):
        for threads in (1, 16):
            out = subprocess.run([str(floor), "--catalog-config", root / "catalog.yaml", "--table", "bench.t",
                                  "--op", op, "--threads", str(threads), "--seconds", str(args.seconds)],
                                 capture_output=True, text=True, check=True).stdout
            r = json.loads(out)
            r.update(engine="SQL catalog in process (floor)", concurrency=threads)
            results.append(r)
            print(json.dumps(r), flush=True)
    load_after = os.getloadavg()

    print(f"\nload average before {load_before[0]:.2f}, after {load_after[0]:.2f} (1-minute); "
          f"{os.cpu_count()} cores; table with {args.snapshots} snapshots")
    print(f"{'engine':<34}{'op':<7}{'conc':>5}{'ok/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'409s':>7}{'vs lakesync':>12}")
    for op in ("load", "commit"):
        for c in (1, 16):
            ours = next(r for r in results if r["op"] == op and r["concurrency"] == c and "lakesync" in r["engine"])
            for r in results:
                if r["op"] != op or r["concurrency"] != c:
                    continue
                print(f"{r['engine']:<34}{op:<7}{c:>5}{r['per_second']:>9.0f}{r['p50_ms'] or 0:>9.2f}"
                      f"{r['p99_ms'] or 0:>9.2f}{r.get('non_2xx', r.get('failures', 0)):>7}"
                      f"{r['per_second'] / ours['per_second']:>12.2f}")
    out_dir = Path(args.results_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = out_dir / f"rest_catalog_{stamp}.json"
    out.write_text(json.dumps(
        {"load_before": load_before, "load_after": load_after, "snapshots": args.snapshots,
         "seconds": args.seconds, "results": results}, indent=2))
    print(f"results: {out}")
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
