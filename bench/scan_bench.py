#!/usr/bin/env python3
"""Scan benchmark: lakesync against the Arrow floor, pyiceberg and DuckDB, in one run on the same files.

One run:
  1. generates an N-row, 8-column dataset with pyarrow (id long unique, key int 0..999 random, amount
     double, price decimal(18,2), name string (16 chars), ts timestamptz, day date, flag bool) and
     writes it to one Parquet file;
  2. creates a v3 table with the `lakesync` CLI in a scratch warehouse (LAKESYNC_WAREHOUSE), appends
     the file, then deletes `key < 10` (~1%) and `key < 100` (~10%) with `lakesync table delete`
     (deletion vectors). The three snapshots (0%, 1%, 10% deleted) share the same data files, so
     every delete level is read by time travel from the same Parquet bytes;
  3. checks that every reader returns the expected rows (count and a checksum of `id`, both derived
     from the generated data, not from any reader);
  4. times, per delete level and round-robin over --repeat rounds, each reader in its own process:
       lakesync        table::TableScan via bench/scan_bench.cc (planning + deletes + all columns)
       ls-reader       lakesync's Parquet reader on the same files, no deletes (a decomposition)
       arrow-floor     parquet::arrow::FileReader on the same files, one batch reader per row group,
                       no deletes (the floor)
       arrow-floor-crc the floor verifying every page's CRC32, as lakesync's reader always does
                       (docs/reliability.md): the floor for the same work on files that carry CRCs
       arrow-file      the same with one batch reader per file (reference: slower here)
       pyarrow         pyarrow.parquet.read_table of the same files (reference, materialises a Table)
       pyiceberg       table.scan(snapshot_id=...).to_arrow() through lakesync's SQLite catalog
       duckdb          SELECT * FROM iceberg_scan(...) fetched as an Arrow table (full materialisation)
       duckdb-count    SELECT count(*) FROM iceberg_scan(...) (reference only: may skip decoding)
       lakesync-base   the same as lakesync, from another build (--baseline-build-dir): a change's
                       before/after in one run, e.g. main's build against a branch's
  5. prints medians with their spread, the ratios, and writes everything to bench/results/.

    .venv/bin/python bench/scan_bench.py --rows 10000000 --repeat 3

Wall-clock numbers are only compared within one run; nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NAMESPACE = "bench"
TABLE = "bench.scan"
LEVELS = [("0%", None), ("1%", "key < 10"), ("10%", "key < 100")]
DELETE_KEY_BOUND = {"0%": 0, "1%": 10, "10%": 100}
ENGINES = ["lakesync", "ls-reader", "arrow-floor", "arrow-floor-crc", "arrow-file", "pyarrow", "pyiceberg", "duckdb", "duckdb-count"]
CPP_MODES = {"lakesync": ["lakesync"], "lakesync-base": ["lakesync"], "ls-reader": ["reader"], "arrow-floor": ["arrow"],
             "arrow-floor-crc": ["arrow", "--verify-checksums"], "arrow-file": ["arrow", "--whole-file"]}
PLAIN_READERS = ("arrow-floor", "arrow-file", "ls-reader", "pyarrow")  # no deletes: every row of the files


# ---------------------------------------------------------------------------------------------
# Data and table set-up.

def generate(path: Path, rows: int, seed: int) -> dict:
    """Writes the dataset and returns what every reader must see at each delete level."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    ids = np.arange(rows, dtype=np.int64)
    key = rng.integers(0, 1000, rows, dtype=np.int32)
    amount = rng.normal(100.0, 25.0, rows)
    cents = rng.integers(-10**12, 10**12, rows, dtype=np.int64)
    # decimal128 values are 16-byte little-endian two's complement: low word, sign-extended high word.
    words = np.empty((rows, 2), dtype=np.int64)
    words[:, 0] = cents
    words[:, 1] = np.where(cents < 0, -1, 0)
    price = pa.Array.from_buffers(pa.decimal128(18, 2), rows, [None, pa.py_buffer(words.tobytes())])
    # 16 lowercase hex characters per row, built without Python strings.
    hexdigits = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
    raw = rng.integers(0, 256, (rows, 8), dtype=np.uint8)
    chars = np.empty((rows, 16), dtype=np.uint8)
    chars[:, 0::2] = hexdigits[raw >> 4]
    chars[:, 1::2] = hexdigits[raw & 0x0F]
    offsets = np.arange(0, 16 * rows + 1, 16, dtype=np.int32)
    name = pa.Array.from_buffers(pa.string(), rows, [None, pa.py_buffer(offsets.tobytes()),
                                                     pa.py_buffer(chars.tobytes())])
    base_us = 1_704_067_200_000_000  # 2024-01-01T00:00:00Z
    ts = base_us + rng.integers(0, 365 * 86_400_000_000, rows, dtype=np.int64)
    day = rng.integers(19_000, 20_000, rows, dtype=np.int32)
    flag = rng.random(rows) < 0.5
    table = pa.table({
        "id": pa.array(ids),
        "key": pa.array(key),
        "amount": pa.array(amount),
        "price": price,
        "name": name,
        "ts": pa.array(ts, type=pa.timestamp("us", tz="UTC")),
        "day": pa.array(day, type=pa.int32()).cast(pa.date32()),
        "flag": pa.array(flag),
    })
    pq.write_table(table, path, compression="zstd", row_group_size=1_000_000)
    expected = {}
    for level, bound in DELETE_KEY_BOUND.items():
        live = key >= bound
        expected[level] = {"rows": int(live.sum()), "id_sum": int(ids[live].sum())}
    return {"rows": rows, "seed": seed, "expected": expected}


def lakesync_cli(build: Path, warehouse: Path, *args: str) -> str:
    env = dict(os.environ, LAKESYNC_WAREHOUSE=str(warehouse))
    proc = subprocess.run([str(build / "lakesync"), *args], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"lakesync {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc.stdout


def current_snapshot_id(build: Path, warehouse: Path) -> int:
    doc = json.loads(lakesync_cli(build, warehouse, "table", "describe", TABLE, "--json"))
    return int(doc["current-snapshot-id"])


def set_up(work: Path, build: Path, rows: int, seed: int, keep: bool) -> dict:
    state_path = work / "state.json"
    if keep and state_path.exists():
        state = json.loads(state_path.read_text())
        if state.get("rows") == rows and state.get("seed") == seed:
            print(f"reusing the table in {work} (--keep)")
            return state
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    warehouse = work / "warehouse"
    source = work / "source.parquet"
    t0 = time.perf_counter()
    state = generate(source, rows, seed)
    print(f"generated {rows:,} rows in {time.perf_counter() - t0:.1f} s ({source.stat().st_size / 2**20:.0f} MiB)")
    t0 = time.perf_counter()
    lakesync_cli(build, warehouse, "namespace", "create", NAMESPACE)
    lakesync_cli(build, warehouse, "table", "create", TABLE, "--schema-from", str(source), "--format-version", "3")
    lakesync_cli(build, warehouse, "table", "append", TABLE, str(source))
    snapshots = {"0%": current_snapshot_id(build, warehouse)}
    print(f"appended in {time.perf_counter() - t0:.1f} s")
    for level, where in LEVELS[1:]:
        t0 = time.perf_counter()
        lakesync_cli(build, warehouse, "table", "delete", TABLE, "--where", where)
        snapshots[level] = current_snapshot_id(build, warehouse)
        print(f"deleted {where} in {time.perf_counter() - t0:.1f} s")
    state.update({"warehouse": str(warehouse), "snapshots": snapshots})
    state_path.write_text(json.dumps(state, indent=2))
    return state


# ---------------------------------------------------------------------------------------------
# Workers: one measurement in a fresh process, printed as one JSON line.

def peak_rss_mib() -> float:
    """VmHWM of this process image (ru_maxrss is carried across execve from the parent on Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024.0
    return -1.0


def id_sum(table) -> int:
    import pyarrow.compute as pc

    # Wrapping 64-bit sum, as scan_bench.cc reports it.
    total = pc.sum(table["id"]).as_py() or 0
    return (total + 2**63) % 2**64 - 2**63


def worker(args) -> None:
    import pyarrow as pa

    spec = json.loads(args.worker)
    engine = spec["engine"]
    out = {"engine": engine, "level": spec["level"]}
    if engine == "pyiceberg":
        from pyiceberg.catalog import load_catalog

        warehouse = Path(spec["warehouse"])
        catalog = load_catalog("lakesync", type="sql", uri=f"sqlite:///{warehouse / 'catalog.db'}",
                               warehouse=f"file://{warehouse}")
        table = catalog.load_table(TABLE)
        w0, c0 = time.perf_counter(), time.process_time()
        result = table.scan(snapshot_id=spec["snapshot_id"]).to_arrow()
        w1, c1 = time.perf_counter(), time.process_time()
    elif engine in ("duckdb", "duckdb-count"):
        con = duckdb_connection()
        query = ("SELECT count(*) AS n" if engine == "duckdb-count" else "SELECT *") + \
            f" FROM iceberg_scan('{spec['metadata_location']}', snapshot_from_id = {spec['snapshot_id']})"
        w0, c0 = time.perf_counter(), time.process_time()
        rel = con.execute(query)
        if engine == "duckdb-count":
            count = rel.fetchone()[0]
        else:
            result = fetch_arrow_table(rel)
        w1, c1 = time.perf_counter(), time.process_time()
        if engine == "duckdb-count":
            result = None
            out["rows"] = int(count)
    elif engine == "pyarrow":
        import pyarrow.parquet as pq

        w0, c0 = time.perf_counter(), time.process_time()
        result = pq.read_table(spec["files"])
        w1, c1 = time.perf_counter(), time.process_time()
    else:
        raise SystemExit(f"unknown worker engine {engine}")
    out.update({"wall_s": w1 - w0, "cpu_s": c1 - c0, "peak_rss_mib": peak_rss_mib()})
    if result is not None:
        assert isinstance(result, pa.Table)
        out["rows"] = result.num_rows
        out["columns"] = result.num_columns
        if spec.get("checksum"):
            out["checksum"] = id_sum(result)
    print(json.dumps(out))


def duckdb_connection():
    import duckdb
    import duckdb_extension_avro
    import duckdb_extension_iceberg

    def extension(module, name: str) -> str:
        found = sorted(Path(module.__file__).parent.glob(f"extensions/*/{name}.duckdb_extension"))
        if not found:
            raise SystemExit(f"the {name} DuckDB extension file is not installed")
        return str(found[-1])

    # The extension packages ship the binaries; DuckDB must not try to download anything.
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    con.execute(f"LOAD '{extension(duckdb_extension_avro, 'avro')}'")
    con.execute(f"LOAD '{extension(duckdb_extension_iceberg, 'iceberg')}'")
    return con


def fetch_arrow_table(rel):
    import pyarrow as pa

    # DuckDB 1.4+ returns a RecordBatchReader from .arrow(); reading it all materialises every row.
    result = rel.arrow()
    return result if isinstance(result, pa.Table) else result.read_all()


# ---------------------------------------------------------------------------------------------
# The orchestrator.

class Runner:
    def __init__(self, build: Path, state: dict, plan: dict, batch_rows: int, no_threads: bool,
                 baseline: Path | None = None):
        self.build = build
        self.baseline = baseline
        self.state = state
        self.plan = plan
        self.batch_rows = batch_rows
        self.no_threads = no_threads
        # Every Arrow reader timed here (lakesync's TableScan, the Arrow floor, pyarrow) uses the memory
        # pool the `lakesync` command uses (jemalloc, tools/lakesync/main.cc), unless the caller chose one.
        self.env = dict(os.environ, LAKESYNC_WAREHOUSE=state["warehouse"])
        self.env.setdefault("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")

    def run(self, engine: str, level: str, checksum: bool = False) -> dict:
        snapshot_id = self.state["snapshots"][level]
        if engine in CPP_MODES:
            build = self.baseline if engine == "lakesync-base" else self.build
            cmd = [str(build / "scan_bench"), "--mode", *CPP_MODES[engine], "--table", TABLE,
                   "--snapshot-id", str(snapshot_id), "--batch-rows", str(self.batch_rows)]
            if self.no_threads:
                cmd.append("--no-threads")
            if checksum:
                cmd += ["--checksum-column", "id"]
        else:
            spec = {"engine": engine, "level": level, "snapshot_id": snapshot_id, "checksum": checksum,
                    "warehouse": self.state["warehouse"], "metadata_location": self.plan["metadata_location"],
                    "files": [f["local_path"] for f in self.plan["files"]]}
            cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(spec)]
        proc = subprocess.run(cmd, env=self.env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"{engine} at {level} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
        line = json.loads(proc.stdout.strip().splitlines()[-1])
        line.update({"engine": engine, "level": level})
        return line


def instructions(runner: Runner, engine: str, level: str) -> int:
    """Instructions executed in the timed region of a C++ reader, counted by callgrind. Unlike time,
    the count does not change with what else runs on the machine. The readers run single-threaded
    here: callgrind's collection switch (scan_bench.cc) only covers the thread that flips it."""
    snapshot_id = runner.state["snapshots"][level]
    build = runner.baseline if engine == "lakesync-base" else runner.build
    cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--callgrind-out-file=/dev/null",
           str(build / "scan_bench"), "--mode", *CPP_MODES[engine], "--table", TABLE,
           "--snapshot-id", str(snapshot_id), "--batch-rows", str(runner.batch_rows), "--no-threads"]
    proc = subprocess.run(cmd, env=runner.env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"callgrind run of {engine} at {level} failed:\n{proc.stderr[-4000:]}")
    for line in proc.stderr.splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1].strip())
    raise SystemExit(f"no instruction count in callgrind's output for {engine} at {level}")


def expected_rows(state: dict, engine: str, level: str) -> int:
    # The floor and the plain readers see every row of the files; Iceberg readers see live rows.
    if engine in PLAIN_READERS or engine.startswith("arrow-floor"):
        return state["rows"]
    return state["expected"][level]["rows"]


def validate(runner: Runner, state: dict, engines: list[str]) -> None:
    """Every reader, every level, once (also warms the page cache): rows and the id checksum."""
    full = state["expected"]["0%"]
    for level, _ in LEVELS:
        for engine in engines:
            result = runner.run(engine, level, checksum=True)
            want = expected_rows(state, engine, level)
            if result["rows"] != want:
                raise SystemExit(f"{engine} at {level} returned {result['rows']:,} rows, expected {want:,}")
            if "checksum" in result:
                plain = engine in PLAIN_READERS or engine.startswith("arrow-floor")
                sums = full if plain else state["expected"][level]
                want_sum = (sums["id_sum"] + 2**63) % 2**64 - 2**63
                if result["checksum"] != want_sum:
                    raise SystemExit(f"{engine} at {level}: id checksum {result['checksum']} != expected {want_sum}")
            if "columns" in result and result["columns"] != 8:
                raise SystemExit(f"{engine} at {level} returned {result['columns']} columns, expected 8")
        print(f"validated {level}: every reader returned the expected rows")


def summarize(samples: list[dict]) -> dict:
    walls = sorted(s["wall_s"] for s in samples)
    cpus = sorted(s["cpu_s"] for s in samples)
    out = {"wall_median_s": statistics.median(walls), "wall_min_s": walls[0], "wall_max_s": walls[-1],
           "cpu_median_s": statistics.median(cpus), "cpu_min_s": cpus[0], "cpu_max_s": cpus[-1],
           "peak_rss_mib": max(s["peak_rss_mib"] for s in samples), "rows": samples[0]["rows"], "n": len(samples)}
    for key in ("user_s", "system_s", "minor_faults"):  # the C++ readers report these too
        if all(key in s for s in samples):
            out[f"{key}_median"] = statistics.median(s[key] for s in samples)
    return out


def machine() -> dict:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    import duckdb
    import pyarrow
    import pyiceberg
    return {"nproc": os.cpu_count(), "cpu_model": model, "memory": mem, "python": platform.python_version(),
            "pyarrow": pyarrow.__version__, "pyiceberg": pyiceberg.__version__, "duckdb": duckdb.__version__,
            "loadavg_at_start": os.getloadavg()}


def print_table(summary: dict, engines: list[str]) -> None:
    header = (f"{'level':>5} {'engine':<13} {'wall med':>9} {'wall min..max':>14} {'cpu med':>8} "
              f"{'cpu min..max':>13} {'rss MiB':>8} {'rows':>11}")
    print(header)
    print("-" * len(header))
    for level, _ in LEVELS:
        for engine in engines:
            s = summary[level][engine]
            wall = f"{s['wall_min_s']:.2f}..{s['wall_max_s']:.2f}"
            cpu = f"{s['cpu_min_s']:.2f}..{s['cpu_max_s']:.2f}"
            print(f"{level:>5} {engine:<13} {s['wall_median_s']:>8.3f}s {wall:>14} {s['cpu_median_s']:>7.3f}s "
                  f"{cpu:>13} {s['peak_rss_mib']:>8.0f} {s['rows']:>11,}")
    print()
    print(f"{'level':>5} {'lakesync/floor':>15} {'(cpu)':>7} {'ls-reader/floor':>16} {'pyiceberg/lakesync':>19} "
          f"{'duckdb/lakesync':>16} {'arrow-file/floor':>17} {'pyarrow/floor':>14}")
    for level, _ in LEVELS:
        r = summary[level]["ratios"]
        print(f"{level:>5} {r['lakesync_over_floor']:>15.3f} {r['lakesync_over_floor_cpu']:>7.3f} "
              f"{r['reader_over_floor']:>16.3f} {r['pyiceberg_over_lakesync']:>19.2f} "
              f"{r['duckdb_over_lakesync']:>16.2f} {r['arrow_file_over_floor']:>17.3f} {r['pyarrow_over_floor']:>14.3f}")
    extra = sorted({k for level, _ in LEVELS for k in summary[level]["ratios"] if "_t" in k})
    if extra:
        print()
        print(f"{'level':>5} " + " ".join(f"{k:>24}" for k in extra))
        for level, _ in LEVELS:
            r = summary[level]["ratios"]
            print(f"{level:>5} " + " ".join(f"{r[k]:>24.3f}" for k in extra))
    if "lakesync-base" in engines:
        print()
        print(f"{'level':>5} {'lakesync/lakesync-base':>23} {'(cpu)':>7} {'lakesync-base/floor':>20} {'(cpu)':>7}")
        for level, _ in LEVELS:
            r = summary[level]["ratios"]
            print(f"{level:>5} {r['lakesync_over_base']:>23.3f} {r['lakesync_over_base_cpu']:>7.3f} "
                  f"{r['base_over_floor']:>20.3f} {r['base_over_floor_cpu']:>7.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per reader and level (median taken)")
    parser.add_argument("--keep", action="store_true", help="reuse the generated data and table if present")
    parser.add_argument("--seed", type=int, default=20240101)
    parser.add_argument("--work-dir", type=Path, help="scratch directory (default /tmp/lakesync-scan-bench-ROWS)")
    parser.add_argument("--build-dir", type=Path,
                        default=Path(os.environ.get("LAKESYNC_BUILD_DIR", REPO / "build")),
                        help="holds the lakesync and scan_bench binaries (default $LAKESYNC_BUILD_DIR or build/)")
    parser.add_argument("--baseline-build-dir", type=Path,
                        help="another build's scan_bench, timed as lakesync-base next to lakesync (before/after)")
    parser.add_argument("--batch-rows", type=int, default=64 * 1024)
    parser.add_argument("--no-threads", action="store_true", help="C++ readers decode on one thread")
    parser.add_argument("--engines", default=",".join(ENGINES),
                        help=f"readers to time (default: all of {','.join(ENGINES)})")
    parser.add_argument("--threads", default="",
                        help="comma-separated thread counts, e.g. 1,2: also time lakesync and the floor with "
                             "--threads N (engines lakesync-tN, arrow-floor-tN)")
    parser.add_argument("--callgrind", action="store_true",
                        help="also count the instructions of the C++ readers under valgrind (slow: ~50x)")
    parser.add_argument("--results-dir", type=Path, default=REPO / "bench" / "results")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return

    build = args.build_dir.resolve()
    for binary in ("lakesync", "scan_bench"):
        if not (build / binary).exists():
            raise SystemExit(f"{build / binary} is missing: build the lakesync and scan_bench targets")
    baseline = args.baseline_build_dir.resolve() if args.baseline_build_dir else None
    if baseline is not None and not (baseline / "scan_bench").exists():
        raise SystemExit(f"{baseline / 'scan_bench'} is missing: build the scan_bench target there")
    engines = [e for e in args.engines.split(",") if e] + (["lakesync-base"] if baseline else [])
    # --threads 1,2: lakesync and the floor again at each thread count, side by side with the rest.
    thread_counts = [int(t) for t in args.threads.split(",") if t]
    for t in thread_counts:
        CPP_MODES[f"lakesync-t{t}"] = ["lakesync", "--threads", str(t)]
        CPP_MODES[f"arrow-floor-t{t}"] = ["arrow", "--threads", str(t)]
        engines += [f"lakesync-t{t}", f"arrow-floor-t{t}"]
        if "arrow-floor-crc" in engines:
            CPP_MODES[f"arrow-floor-crc-t{t}"] = ["arrow", "--verify-checksums", "--threads", str(t)]
            engines.append(f"arrow-floor-crc-t{t}")
    work = (args.work_dir or Path(f"/tmp/lakesync-scan-bench-{args.rows}")).resolve()
    state = set_up(work, build, args.rows, args.seed, args.keep)
    env = dict(os.environ, LAKESYNC_WAREHOUSE=state["warehouse"])
    plan = json.loads(subprocess.run([str(build / "scan_bench"), "--mode", "files", "--table", TABLE], env=env,
                                     capture_output=True, text=True, check=True).stdout)
    total_bytes = sum(f["file_size_in_bytes"] for f in plan["files"])
    print(f"table: {len(plan['files'])} data file(s), {total_bytes / 2**20:.0f} MiB of Parquet")

    runner = Runner(build, state, plan, args.batch_rows, args.no_threads, baseline)
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    host = machine()
    validate(runner, state, engines)

    samples: dict[str, dict[str, list]] = {level: {e: [] for e in engines} for level, _ in LEVELS}
    for round_ in range(args.repeat):
        for level, _ in LEVELS:
            for engine in engines:
                result = runner.run(engine, level)
                want = expected_rows(state, engine, level)
                if result["rows"] != want:
                    raise SystemExit(f"{engine} at {level} returned {result['rows']:,} rows, expected {want:,}")
                samples[level][engine].append(result)
        print(f"round {round_ + 1}/{args.repeat} done")

    summary = {}
    for level, _ in LEVELS:
        s = {engine: summarize(samples[level][engine]) for engine in engines}
        med = lambda e: s[e]["wall_median_s"] if e in s else float("nan")
        cpu_of = lambda e: s[e]["cpu_median_s"] if e in s else float("nan")
        s["ratios"] = {
            "lakesync_over_floor": med("lakesync") / med("arrow-floor"),
            "lakesync_over_floor_cpu": cpu_of("lakesync") / cpu_of("arrow-floor"),
            "lakesync_over_floor_crc_cpu": cpu_of("lakesync") / cpu_of("arrow-floor-crc"),
            "reader_over_floor": med("ls-reader") / med("arrow-floor"),
            "pyiceberg_over_lakesync": med("pyiceberg") / med("lakesync"),
            "duckdb_over_lakesync": med("duckdb") / med("lakesync"),
            "duckdb_count_over_lakesync": med("duckdb-count") / med("lakesync"),
            "pyarrow_over_floor": med("pyarrow") / med("arrow-floor"),
            "arrow_file_over_floor": med("arrow-file") / med("arrow-floor"),
        }
        for t in thread_counts:
            s["ratios"][f"lakesync_t{t}_over_floor_t{t}"] = med(f"lakesync-t{t}") / med(f"arrow-floor-t{t}")
            s["ratios"][f"lakesync_t{t}_over_floor_t{t}_cpu"] = (s[f"lakesync-t{t}"]["cpu_median_s"] /
                                                                 s[f"arrow-floor-t{t}"]["cpu_median_s"])
            if f"arrow-floor-crc-t{t}" in s:
                s["ratios"][f"lakesync_t{t}_over_floor_crc_t{t}_cpu"] = (s[f"lakesync-t{t}"]["cpu_median_s"] /
                                                                         s[f"arrow-floor-crc-t{t}"]["cpu_median_s"])
        if len(thread_counts) > 1:
            lo, hi = thread_counts[0], thread_counts[-1]
            s["ratios"][f"lakesync_t{hi}_over_t{lo}"] = med(f"lakesync-t{hi}") / med(f"lakesync-t{lo}")
            s["ratios"][f"floor_t{hi}_over_t{lo}"] = med(f"arrow-floor-t{hi}") / med(f"arrow-floor-t{lo}")
        if baseline:
            cpu = lambda e: s[e]["cpu_median_s"]
            s["ratios"].update({
                "lakesync_over_base": med("lakesync") / med("lakesync-base"),
                "lakesync_over_base_cpu": cpu("lakesync") / cpu("lakesync-base"),
                "base_over_floor": med("lakesync-base") / med("arrow-floor"),
                "base_over_floor_cpu": cpu("lakesync-base") / cpu("arrow-floor"),
            })
        summary[level] = s
    counts = {}
    if args.callgrind:
        if shutil.which("valgrind") is None:
            raise SystemExit("--callgrind needs valgrind on PATH")
        counted = ("arrow-floor", "ls-reader", "lakesync") + (("lakesync-base",) if baseline else ())
        for level, _ in LEVELS:
            counts[level] = {engine: instructions(runner, engine, level) for engine in counted}
            floor = counts[level]["arrow-floor"]
            counts[level]["lakesync_over_floor"] = counts[level]["lakesync"] / floor
            counts[level]["reader_over_floor"] = counts[level]["ls-reader"] / floor
            line = f"; lakesync/floor {counts[level]['lakesync_over_floor']:.3f}"
            if baseline:
                counts[level]["lakesync_over_base"] = counts[level]["lakesync"] / counts[level]["lakesync-base"]
                line += f", lakesync/lakesync-base {counts[level]['lakesync_over_base']:.4f}"
            print(f"instructions at {level}: " + ", ".join(f"{e} {counts[level][e]:,}" for e in counted) + line)

    print()
    print_table(summary, engines)
    goals = {level: {"within_1.15x_of_floor": summary[level]["ratios"]["lakesync_over_floor"] <= 1.15,
                     "within_1.15x_of_floor_cpu": summary[level]["ratios"]["lakesync_over_floor_cpu"] <= 1.15,
                     "3x_faster_than_pyiceberg": summary[level]["ratios"]["pyiceberg_over_lakesync"] >= 3.0}
             for level, _ in LEVELS}
    print()
    for level in ("1%", "10%"):
        g = goals[level]
        print(f"goals at {level} deleted: within 1.15x of the floor: wall {g['within_1.15x_of_floor']}, "
              f"cpu {g['within_1.15x_of_floor_cpu']}; >= 3x faster than pyiceberg: {g['3x_faster_than_pyiceberg']}")

    args.results_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = args.results_dir / f"scan_bench-{args.rows}-{stamp}.json"
    out.write_text(json.dumps({
        "started": started, "command": " ".join([Path(sys.executable).name, *sys.argv]), "machine": host,
        "loadavg_at_end": os.getloadavg(), "rows": args.rows, "repeat": args.repeat, "batch_rows": args.batch_rows,
        "use_threads": not args.no_threads, "baseline_build_dir": str(baseline) if baseline else None,
        "snapshots": state["snapshots"], "expected": state["expected"],
        "plan": {"data_files": len(plan["files"]), "bytes": total_bytes, "files": plan["files"]},
        "summary": summary, "goals": goals, "instructions": counts, "samples": samples}, indent=2))
    print(f"\nresults: {out}")


if __name__ == "__main__":
    main()
