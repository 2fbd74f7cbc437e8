#!/usr/bin/env python3
"""Apply benchmark: lakesync's merge-on-read CDC writer against delta-rs MERGE, DuckDB MERGE INTO and
pyiceberg upsert, in one run on the same generated data; then the reader's bill of 20 commits.

One run:
  1. generates (numpy/pyarrow, one seed) an N-row, 8-column base table (id long key, v long version,
     key int, amount double, price decimal(18,2), name string(16), ts timestamptz, day date) with
     sequential ids, and one batch of C changes: 50% updates, 30% inserts, 20% deletes, each key at
     most once, in random order. The expected final state (row count and checksums of id, v, key and
     of (id*7919+v) mod 1000003, which ties every id to its version) is derived from the generated data.
     The change batch is written twice:
       changes.parquet  for lakesync: table columns + _change_type (UPDATE_BEFORE/UPDATE_AFTER pairs
                        for updates, INSERT, DELETE with the old row) + _seq (the sequence column);
       source.parquet   for the MERGE engines: one row per key (the after-image, or the old row for
                        deletes) + _op ('U', 'I', 'D').
  2. sets every engine's base table up once and keeps a pristine copy (data files hard-linked,
     catalogs and databases copied); every timed run starts from a fresh restore at the same path;
  3. times, round-robin over --repeat rounds, each engine in its own process:
       ls-v3-dv     lakesync apply on a v3 table (deletion vectors)
       ls-v2-pos    lakesync apply on a v2 table (position delete files)
       ls-v2-eq     lakesync apply on the v2 table with delete_strategy equality
       delta-rs     DeltaTable.merge(...) when_matched_update_all/delete + when_not_matched_insert_all
       duckdb       MERGE INTO a native DuckDB table (DuckDB's Iceberg writes need an attached REST
                    catalog, which lakesync does not serve yet) + CHECKPOINT
       pyiceberg    tbl.upsert(updates + inserts, join_cols=[id]) then tbl.delete(In(id, deletes)),
                    copy-on-write; slow, so --pyiceberg-repeat rounds only (default 1), under
                    --pyiceberg-timeout (default 600 s: the issue's limit); --small-rows/--small-changes
                    run it at a smaller size instead, next to ls-v3-small (lakesync at that size)
     every run's final state is checked (rows and checksums) by an independent reader (DuckDB's
     iceberg_scan for lakesync's tables, falling back to lakesync's own scan where DuckDB cannot read
     them, deltalake for delta-rs, DuckDB for DuckDB, pyiceberg for pyiceberg) before its time counts;
     peak RSS is each process's own (os.wait4);
  4. the reader's bill: 20 commits of --bill-changes changes each (same mix) applied with lakesync to
     the 10M v3 table (deletion vectors) and to the v2 table with equality deletes; a compacted copy of
     the DV table (lakesync scan --format parquet, table create, table append); then the full scan of
     each (lakesync's TableScan via bench/scan_bench.cc, and DuckDB iceberg_scan fetched as Arrow),
     round-robin, checked against the expected state first;
  5. prints medians, ratios against the goals, and writes everything to bench/results/.

    .venv/bin/python bench/apply_bench.py --rows 10000000 --changes 1000000 --repeat 3

Wall-clock numbers are only compared within one run; nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import scan_bench  # noqa: E402  (DuckDB connection, Arrow fetch, peak RSS, machine description)

NAMESPACE = "bench"
TABLE = "bench.t"
COLUMNS = ["id", "v", "key", "amount", "price", "name", "ts", "day"]
LAKESYNC_VARIANTS = {  # engine: (warehouse, extra apply flags)
    "ls-v3-dv": ("ls_v3", []),
    "ls-v2-pos": ("ls_v2", []),
    "ls-v2-eq": ("ls_v2", ["--delete-strategy", "equality"]),
    "ls-v3-small": ("ls_v3_small", []),
}
BIG_ENGINES = ["ls-v3-dv", "ls-v2-pos", "ls-v2-eq", "delta-rs", "duckdb", "pyiceberg"]
SMALL_ENGINES = ["ls-v3-small", "pyiceberg-small"]
MIX = (0.5, 0.3, 0.2)  # updates, inserts, deletes
CHECK_MOD = 1_000_003


# ---------------------------------------------------------------------------------------------
# Data: a table state held as column arrays indexed by id, and batches of changes against it.

class State:
    """Every row that will ever exist (the base rows and the ids later inserted), with an alive mask."""

    def __init__(self, rows: int, capacity: int, seed: int):
        import numpy as np

        self.np = np
        self.rng = np.random.default_rng(seed)
        rng = self.rng
        self.id = np.arange(capacity, dtype=np.int64)
        self.v = np.zeros(capacity, dtype=np.int64)
        self.key = rng.integers(0, 1000, capacity, dtype=np.int32)
        self.amount = rng.normal(100.0, 25.0, capacity)
        self.cents = rng.integers(-10**12, 10**12, capacity, dtype=np.int64)
        self.name = rng.integers(0, 256, (capacity, 8), dtype=np.uint8)  # 16 hex characters each
        self.ts = 1_704_067_200_000_000 + rng.integers(0, 365 * 86_400_000_000, capacity, dtype=np.int64)
        self.day = rng.integers(19_000, 20_000, capacity, dtype=np.int32)
        self.alive = np.zeros(capacity, dtype=bool)
        self.alive[:rows] = True
        self.next_id = rows

    def table(self, idx):
        """The rows at `idx` as an Arrow table with the table's columns."""
        import pyarrow as pa

        np = self.np
        n = len(idx)
        cents = self.cents[idx]
        words = np.empty((n, 2), dtype=np.int64)  # decimal128: low word, sign-extended high word
        words[:, 0] = cents
        words[:, 1] = np.where(cents < 0, -1, 0)
        price = pa.Array.from_buffers(pa.decimal128(18, 2), n, [None, pa.py_buffer(words.tobytes())])
        hexdigits = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
        raw = self.name[idx]
        chars = np.empty((n, 16), dtype=np.uint8)
        chars[:, 0::2] = hexdigits[raw >> 4]
        chars[:, 1::2] = hexdigits[raw & 0x0F]
        offsets = np.arange(0, 16 * n + 1, 16, dtype=np.int32)
        name = pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets.tobytes()),
                                                      pa.py_buffer(chars.tobytes())])
        schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64()), ("key", pa.int32()),
                            ("amount", pa.float64()), ("price", pa.decimal128(18, 2)), ("name", pa.string()),
                            ("ts", pa.timestamp("us", tz="UTC")), ("day", pa.date32())])
        return pa.Table.from_arrays([
            pa.array(self.id[idx]), pa.array(self.v[idx]), pa.array(self.key[idx]), pa.array(self.amount[idx]),
            price, name, pa.array(self.ts[idx], type=pa.timestamp("us", tz="UTC")),
            pa.array(self.day[idx], type=pa.int32()).cast(pa.date32())], schema=schema)

    def expected(self) -> dict:
        np = self.np
        live = self.alive
        ids, v = self.id[live], self.v[live]
        return {"rows": int(live.sum()), "sum_id": int(ids.sum()), "sum_v": int(v.sum()),
                "sum_key": int(self.key[live].astype(np.int64).sum()),
                "sum_mix": int(((ids * 7919 + v) % CHECK_MOD).sum())}

    def commit(self, n: int, seq: int):
        """Draws one batch of n changes against the current state, applies it, and returns
        (lakesync change table, MERGE source table, counts)."""
        import pyarrow as pa

        np, rng = self.np, self.rng
        nu, ni = int(n * MIX[0]), int(n * MIX[1])
        nd = n - nu - ni
        picked = rng.choice(np.flatnonzero(self.alive), nu + nd, replace=False)
        upd, dele = np.sort(picked[:nu]), np.sort(picked[nu:])
        ins = np.arange(self.next_id, self.next_id + ni, dtype=np.int64)
        if ins.size and ins[-1] >= len(self.id):
            raise SystemExit("state capacity exceeded")
        self.next_id += ni

        before = self.table(upd)
        self.v[upd] += 1
        self.amount[upd] = rng.normal(100.0, 25.0, nu)
        self.cents[upd] = rng.integers(-10**12, 10**12, nu, dtype=np.int64)
        self.name[upd] = rng.integers(0, 256, (nu, 8), dtype=np.uint8)
        self.ts[upd] = 1_704_067_200_000_000 + rng.integers(0, 365 * 86_400_000_000, nu, dtype=np.int64)
        self.key[upd] = rng.integers(0, 1000, nu, dtype=np.int32)
        after = self.table(upd)
        deleted = self.table(dele)
        self.alive[dele] = False
        self.alive[ins] = True
        inserted = self.table(ins)

        def tagged(t, column, value, extra=None):
            t = t.append_column(column, pa.array([value] * t.num_rows, pa.string()))
            if extra is not None:
                t = t.append_column(extra, pa.array(np.full(t.num_rows, seq, dtype=np.int64)))
            return t

        changes = pa.concat_tables([tagged(before, "_change_type", "UPDATE_BEFORE", "_seq"),
                                    tagged(after, "_change_type", "UPDATE_AFTER", "_seq"),
                                    tagged(inserted, "_change_type", "INSERT", "_seq"),
                                    tagged(deleted, "_change_type", "DELETE", "_seq")])
        changes = changes.take(rng.permutation(changes.num_rows))  # a stream: keys in no order
        source = pa.concat_tables([tagged(after, "_op", "U"), tagged(inserted, "_op", "I"),
                                   tagged(deleted, "_op", "D")])
        source = source.take(rng.permutation(source.num_rows))
        return changes, source, {"updates": nu, "inserts": ni, "deletes": nd}


def generate(spec: dict) -> None:
    """Worker: writes the base, the change files and the expected states (keeps big arrays out of
    the orchestrating process, whose peak RSS would otherwise be inherited by its children)."""
    import pyarrow.parquet as pq

    work = Path(spec["work"])
    rows, changes, seed = spec["rows"], spec["changes"], spec["seed"]
    out = {}
    # The merge batch.
    state = State(rows, rows + int(changes * MIX[1]) + 1, seed)
    pq.write_table(state.table(state.np.arange(rows)), work / "base.parquet", compression="zstd",
                   row_group_size=1_000_000)
    out["base"] = state.expected()
    ch, src, counts = state.commit(changes, 1)
    pq.write_table(ch, work / "changes.parquet", compression="zstd", row_group_size=256 * 1024)
    pq.write_table(src, work / "source.parquet", compression="zstd", row_group_size=256 * 1024)
    out["merge"] = {"expected": state.expected(), "counts": counts, "change_rows": ch.num_rows}
    del state, ch, src
    # The small size (pyiceberg and lakesync at equal size), when asked for.
    small_rows, small_changes = spec["small_rows"], spec["small_changes"]
    if small_rows:
        state = State(small_rows, small_rows + int(small_changes * MIX[1]) + 1, seed + 1)
        pq.write_table(state.table(state.np.arange(small_rows)), work / "small_base.parquet", compression="zstd",
                       row_group_size=1_000_000)
        ch, src, counts = state.commit(small_changes, 1)
        pq.write_table(ch, work / "small_changes.parquet", compression="zstd")
        pq.write_table(src, work / "small_source.parquet", compression="zstd")
        out["small"] = {"expected": state.expected(), "counts": counts, "change_rows": ch.num_rows}
        del state, ch, src
    # The reader's bill: commits in sequence on the same base (same seed: same base rows).
    commits, per = spec["bill_commits"], spec["bill_changes"]
    if commits:
        state = State(rows, rows + commits * int(per * MIX[1]) + 1, seed)
        state.rng = state.np.random.default_rng(seed + 2)
        for c in range(commits):
            ch, _, _ = state.commit(per, c + 1)
            pq.write_table(ch, work / f"bill_{c + 1:02d}.parquet", compression="zstd")
        out["bill"] = {"expected": state.expected(), "commits": commits, "changes_per_commit": per}
    (work / "expected.json").write_text(json.dumps(out, indent=2))
    print(json.dumps({"ok": True}))


# ---------------------------------------------------------------------------------------------
# Processes: every measurement in its own process; wall time and that process's own peak RSS.

def run_measured(cmd: list[str], env: dict | None = None, timeout: float | None = None) -> dict:
    """Runs cmd, returns stdout, stderr, rc, wall_s and peak_rss_mib (ru_maxrss of that one child,
    from wait4). The orchestrator stays small and spawns with posix_spawn/vfork, so nothing of its
    own footprint is carried into the child's maximum."""
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err)
        timer = threading.Timer(timeout, proc.kill) if timeout else None
        if timer:
            timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if timer:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return {"rc": proc.returncode, "stdout": out.read().decode(), "stderr": err.read().decode(),
                "wall_s": wall, "peak_rss_mib": usage.ru_maxrss / 1024.0,
                "cpu_s": usage.ru_utime + usage.ru_stime, "timed_out": bool(timer and wall >= timeout)}


def worker_cmd(spec: dict) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(spec)]


def last_json(text: str) -> dict:
    return json.loads(text.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------
# Python engines (workers).

def arrow_checksums(table) -> dict:
    import pyarrow.compute as pc

    ids = table["id"].cast("int64")
    v = table["v"].cast("int64")
    mix = pc.sum(pc.add(pc.multiply(ids, 7919), v).to_numpy() % CHECK_MOD).as_py() if table.num_rows else 0
    return {"rows": table.num_rows, "sum_id": pc.sum(ids).as_py() or 0, "sum_v": pc.sum(v).as_py() or 0,
            "sum_key": pc.sum(table["key"].cast("int64")).as_py() or 0, "sum_mix": int(mix)}


CHECK_SQL = ("SELECT count(*), sum(id), sum(v), sum(key::BIGINT), sum((id * 7919 + v) % 1000003) FROM {}")


def sql_checksums(row) -> dict:
    return {"rows": int(row[0]), "sum_id": int(row[1] or 0), "sum_v": int(row[2] or 0),
            "sum_key": int(row[3] or 0), "sum_mix": int(row[4] or 0)}


def pyiceberg_catalog(warehouse: Path, name: str = "bench"):
    from pyiceberg.catalog import load_catalog

    # The SQL catalog keys tables by catalog name: lakesync's embedded catalog is "lakesync".
    return load_catalog(name, type="sql", uri=f"sqlite:///{warehouse / 'catalog.db'}",
                        warehouse=f"file://{warehouse}")


def worker(args) -> None:
    spec = json.loads(args.worker)
    task = spec["task"]
    out: dict = {"task": task}
    if task == "generate":
        generate(spec)
        return
    if task == "setup-delta":
        import pyarrow.parquet as pq
        from deltalake import write_deltalake

        write_deltalake(spec["path"], pq.read_table(spec["base"]))
    elif task == "setup-duckdb":
        import duckdb

        con = duckdb.connect(spec["path"])
        con.execute(f"CREATE TABLE t AS SELECT * FROM read_parquet('{spec['base']}')")
        con.execute("CHECKPOINT")
        con.close()
    elif task == "setup-pyiceberg":
        import pyarrow.parquet as pq

        base = pq.read_table(spec["base"])
        catalog = pyiceberg_catalog(Path(spec["warehouse"]))
        catalog.create_namespace(NAMESPACE)
        table = catalog.create_table(TABLE, schema=base.schema)
        table.append(base)
    elif task == "delta-rs":
        import pyarrow.parquet as pq
        from deltalake import DeltaTable

        w0, c0 = time.perf_counter(), time.process_time()
        source = pq.read_table(spec["source"])
        dt = DeltaTable(spec["path"])
        metrics = (dt.merge(source, predicate="t.id = s.id", source_alias="s", target_alias="t")
                   .when_matched_delete(predicate="s._op = 'D'")
                   .when_matched_update_all(except_cols=["_op"])
                   .when_not_matched_insert_all(predicate="s._op = 'I'", except_cols=["_op"])
                   .execute())
        out["wall_s"], out["cpu_s"] = time.perf_counter() - w0, time.process_time() - c0
        out["metrics"] = {k: v for k, v in metrics.items() if isinstance(v, (int, float))}
    elif task == "duckdb":
        import duckdb

        sets = ", ".join(f"{c} = s.{c}" for c in COLUMNS[1:])
        cols = ", ".join(COLUMNS)
        w0, c0 = time.perf_counter(), time.process_time()
        con = duckdb.connect(spec["path"])
        con.execute(f"MERGE INTO t USING read_parquet('{spec['source']}') AS s ON t.id = s.id "
                    f"WHEN MATCHED AND s._op = 'D' THEN DELETE "
                    f"WHEN MATCHED THEN UPDATE SET {sets} "
                    f"WHEN NOT MATCHED THEN INSERT ({cols}) VALUES ({', '.join('s.' + c for c in COLUMNS)})")
        con.execute("CHECKPOINT")
        con.close()
        out["wall_s"], out["cpu_s"] = time.perf_counter() - w0, time.process_time() - c0
    elif task == "pyiceberg":
        import pyarrow.compute as pc
        import pyarrow.parquet as pq
        from pyiceberg.expressions import In

        w0, c0 = time.perf_counter(), time.process_time()
        source = pq.read_table(spec["source"])
        table = pyiceberg_catalog(Path(spec["warehouse"])).load_table(TABLE)
        upserts = source.filter(pc.not_equal(source["_op"], "D")).drop_columns(["_op"])
        deletes = source.filter(pc.equal(source["_op"], "D"))["id"].to_pylist()
        result = table.upsert(upserts.cast(table.schema().as_arrow()), join_cols=["id"])
        t_upsert = time.perf_counter() - w0
        table.delete(In("id", deletes))
        out["wall_s"], out["cpu_s"] = time.perf_counter() - w0, time.process_time() - c0
        out["upsert_s"] = t_upsert
        out["rows_updated"], out["rows_inserted"] = result.rows_updated, result.rows_inserted
    elif task == "check":
        out.update(check(spec))
    elif task == "scan-duckdb":
        con = scan_bench.duckdb_connection()
        w0, c0 = time.perf_counter(), time.process_time()
        result = scan_bench.fetch_arrow_table(con.execute(f"SELECT * FROM iceberg_scan('{spec['metadata']}')"))
        out.update({"wall_s": time.perf_counter() - w0, "cpu_s": time.process_time() - c0, "rows": result.num_rows})
    else:
        raise SystemExit(f"unknown worker task {task}")
    out["peak_rss_mib"] = scan_bench.peak_rss_mib()
    print(json.dumps(out), flush=True)
    # Skip interpreter teardown: with deltalake's and DuckDB's threads still around, it sometimes
    # aborts ("terminate called without an active exception") after the work is done and reported.
    os._exit(0)


def check(spec: dict) -> dict:
    """The final state of one engine's table, read by a reader that is not the writer where one can."""
    reader = spec["reader"]
    if reader == "duckdb-iceberg":
        con = scan_bench.duckdb_connection()
        return sql_checksums(con.execute(CHECK_SQL.format(f"iceberg_scan('{spec['metadata']}')")).fetchone())
    if reader == "duckdb":
        import duckdb

        con = duckdb.connect(spec["path"], read_only=True)
        return sql_checksums(con.execute(CHECK_SQL.format("t")).fetchone())
    if reader == "deltalake":
        from deltalake import DeltaTable

        return arrow_checksums(DeltaTable(spec["path"]).to_pyarrow_table(columns=["id", "v", "key"]))
    if reader == "pyiceberg":
        table = pyiceberg_catalog(Path(spec["warehouse"]), spec.get("catalog_name", "bench")).load_table(TABLE)
        return arrow_checksums(table.scan(selected_fields=("id", "v", "key")).to_arrow())
    if reader == "parquet":  # a file written by lakesync scan
        import pyarrow.parquet as pq

        return arrow_checksums(pq.read_table(spec["path"], columns=["id", "v", "key"]))
    raise SystemExit(f"unknown reader {reader}")


# ---------------------------------------------------------------------------------------------
# Tables on disk: pristine copies and restores (the same absolute paths, which Iceberg metadata holds).

def copy_tree(src: Path, dst: Path) -> None:
    """Data files (immutable in every format here) are hard-linked; everything else (SQLite catalogs,
    DuckDB databases, logs, metadata) is copied, since some of it is rewritten in place."""
    if dst.exists():
        shutil.rmtree(dst)
    for root, dirs, files in os.walk(src):
        rel = Path(root).relative_to(src)
        (dst / rel).mkdir(parents=True, exist_ok=True)
        for f in files:
            s, d = Path(root) / f, dst / rel / f
            if f.endswith(".parquet"):
                os.link(s, d)
            else:
                shutil.copy2(s, d)


class Bench:
    def __init__(self, args, build: Path, work: Path, expected: dict):
        self.args = args
        self.build = build
        self.work = work
        self.expected = expected
        self.live = work / "live"
        self.pristine = work / "pristine"
        self.duckdb_gave_up: dict[str, str] = {}

    def warehouse(self, name: str) -> Path:
        return self.live / name

    def lakesync(self, warehouse: Path, *cli: str, check: bool = True) -> dict:
        r = run_measured([str(self.build / "lakesync"), *cli], env=dict(os.environ, LAKESYNC_WAREHOUSE=str(warehouse)))
        if check and r["rc"] != 0:
            raise SystemExit(f"lakesync {' '.join(cli)} failed ({r['rc']}):\n{r['stderr'][-4000:]}")
        return r

    def worker(self, spec: dict, timeout: float | None = None, check: bool = True) -> dict:
        r = run_measured(worker_cmd(spec), timeout=timeout)
        if check and r["rc"] != 0:
            raise SystemExit(f"worker {spec['task']} failed ({r['rc']}):\n{r['stderr'][-4000:]}")
        if r["rc"] == 0:
            r["result"] = last_json(r["stdout"])
        return r

    def metadata_location(self, warehouse: Path) -> str:
        r = run_measured([str(self.build / "scan_bench"), "--mode", "files", "--table", TABLE],
                         env=dict(os.environ, LAKESYNC_WAREHOUSE=str(warehouse)))
        if r["rc"] != 0:
            raise SystemExit(f"scan_bench --mode files failed:\n{r['stderr'][-2000:]}")
        return last_json(r["stdout"])["metadata_location"]

    # -- set-up
    def set_up(self) -> None:
        self.live.mkdir(parents=True, exist_ok=True)
        self.pristine.mkdir(parents=True, exist_ok=True)
        base, small = self.work / "base.parquet", self.work / "small_base.parquet"
        engines = set(self.args.engines)
        lakesync_tables = [("ls_v3", "3", base), ("ls_v2", "2", base)]
        if "ls-v3-small" in engines:
            lakesync_tables.append(("ls_v3_small", "3", small))
        for name, version, source in lakesync_tables:
            t0 = time.perf_counter()
            wh = self.warehouse(name)
            self.lakesync(wh, "namespace", "create", NAMESPACE)
            self.lakesync(wh, "table", "create", TABLE, "--schema-from", str(source), "--format-version", version,
                          "--identifier-fields", "id")
            self.lakesync(wh, "table", "append", TABLE, str(source))
            copy_tree(wh, self.pristine / name)
            print(f"set up {name} in {time.perf_counter() - t0:.1f} s")
        if "delta-rs" in engines:
            t0 = time.perf_counter()
            self.worker({"task": "setup-delta", "path": str(self.live / "delta"), "base": str(base)})
            copy_tree(self.live / "delta", self.pristine / "delta")
            print(f"set up delta in {time.perf_counter() - t0:.1f} s")
        if "duckdb" in engines:
            t0 = time.perf_counter()
            (self.live / "duckdb").mkdir(exist_ok=True)
            self.worker({"task": "setup-duckdb", "path": str(self.live / "duckdb" / "t.duckdb"), "base": str(base)})
            copy_tree(self.live / "duckdb", self.pristine / "duckdb")
            print(f"set up duckdb in {time.perf_counter() - t0:.1f} s")
        for engine, name, source in (("pyiceberg", "pyiceberg", base), ("pyiceberg-small", "pyiceberg_small", small)):
            if engine in engines:
                t0 = time.perf_counter()
                (self.live / name).mkdir(exist_ok=True)
                self.worker({"task": "setup-pyiceberg", "warehouse": str(self.live / name), "base": str(source)})
                copy_tree(self.live / name, self.pristine / name)
                print(f"set up {name} in {time.perf_counter() - t0:.1f} s")

    def restore(self, name: str) -> None:
        copy_tree(self.pristine / name, self.live / name)
        os.sync()  # the restore's dirty pages are not written back during the timed run

    # -- one timed apply + its check
    def apply_once(self, engine: str) -> dict:
        small = engine in SMALL_ENGINES
        changes = self.work / ("small_changes.parquet" if small else "changes.parquet")
        source = self.work / ("small_source.parquet" if small else "source.parquet")
        expected = self.expected["small" if small else "merge"]["expected"]
        if engine in LAKESYNC_VARIANTS:
            wh_name, extra = LAKESYNC_VARIANTS[engine]
            self.restore(wh_name)
            wh = self.warehouse(wh_name)
            r = self.lakesync(wh, "apply", "--table", TABLE, "--changes", str(changes), "--change-type-column",
                              "_change_type", "--sequence-number-column", "_seq", "--equality-columns", "id",
                              "--sorter-memory-mb", str(self.args.sorter_memory_mb), "--json", *extra)
            detail = last_json(r["stdout"])
            sample = {"wall_s": r["wall_s"], "peak_rss_mib": r["peak_rss_mib"], "cpu_s": r["cpu_s"],
                      "detail": {"tables": detail["tables"], "changes": detail["changes"],
                                 "duration_seconds": detail["duration_seconds"]}}
            sample["check"] = self.check_iceberg(wh, expected, key=engine)
        elif engine == "delta-rs":
            self.restore("delta")
            path = self.live / "delta"
            r = self.worker({"task": "delta-rs", "path": str(path), "source": str(source)})
            sample = {"wall_s": r["result"]["wall_s"], "process_wall_s": r["wall_s"], "cpu_s": r["result"]["cpu_s"],
                      "peak_rss_mib": r["peak_rss_mib"], "detail": r["result"].get("metrics")}
            sample["check"] = self.check_with({"reader": "deltalake", "path": str(path)}, expected)
        elif engine == "duckdb":
            self.restore("duckdb")
            path = self.live / "duckdb" / "t.duckdb"
            r = self.worker({"task": "duckdb", "path": str(path), "source": str(source)})
            sample = {"wall_s": r["result"]["wall_s"], "process_wall_s": r["wall_s"], "cpu_s": r["result"]["cpu_s"],
                      "peak_rss_mib": r["peak_rss_mib"]}
            sample["check"] = self.check_with({"reader": "duckdb", "path": str(path)}, expected)
        elif engine in ("pyiceberg", "pyiceberg-small"):
            name = engine.replace("-", "_")
            self.restore(name)
            wh = self.live / name
            r = self.worker({"task": "pyiceberg", "warehouse": str(wh), "source": str(source)},
                            timeout=self.args.pyiceberg_timeout, check=False)
            if r["rc"] != 0:
                return {"failed": True, "timed_out": r["timed_out"], "wall_s": r["wall_s"],
                        "stderr": r["stderr"][-2000:]}
            sample = {"wall_s": r["result"]["wall_s"], "upsert_s": r["result"]["upsert_s"],
                      "process_wall_s": r["wall_s"], "cpu_s": r["result"]["cpu_s"], "peak_rss_mib": r["peak_rss_mib"]}
            sample["check"] = self.check_with({"reader": "pyiceberg", "warehouse": str(wh)}, expected)
        else:
            raise SystemExit(f"unknown engine {engine}")
        return sample

    def check_with(self, spec: dict, expected: dict) -> dict:
        got = self.worker({"task": "check", **spec})["result"]
        got = {k: got[k] for k in expected}
        if got != expected:
            raise SystemExit(f"wrong final state read by {spec['reader']}: {got} != expected {expected}")
        return {"reader": spec["reader"], "ok": True}

    def check_iceberg(self, warehouse: Path, expected: dict, key: str | None = None) -> dict:
        """DuckDB's iceberg_scan first (independent). Where it cannot read the table or reads other rows
        than the generated data says, pyiceberg (reads position deletes and DVs, not equality deletes),
        and last lakesync's own scan written to Parquet and summed by pyarrow; what each said is kept."""
        metadata = self.metadata_location(warehouse)
        if key in self.duckdb_gave_up:  # it timed out on this table before: do not wait again
            r = {"rc": -1, "stderr": self.duckdb_gave_up[key], "timed_out": True}
        else:
            r = self.worker({"task": "check", "reader": "duckdb-iceberg", "metadata": metadata},
                            timeout=self.args.check_timeout, check=False)
        if r["rc"] == 0:
            got = {k: r["result"][k] for k in expected}
            if got == expected:
                return {"reader": "duckdb-iceberg", "ok": True}
            duckdb_error = f"DuckDB read {got}, expected {expected}"
        elif r["timed_out"]:
            duckdb_error = f"DuckDB did not finish within {self.args.check_timeout:.0f} s"
            if key:
                self.duckdb_gave_up[key] = duckdb_error
        else:
            duckdb_error = (r["stderr"].strip().splitlines() or [f"rc {r['rc']}"])[-1][-500:]
        r = self.worker({"task": "check", "reader": "pyiceberg", "warehouse": str(warehouse),
                         "catalog_name": "lakesync"}, check=False)
        if r["rc"] == 0:
            got = {k: r["result"][k] for k in expected}
            if got != expected:
                raise SystemExit(f"wrong final state read by pyiceberg in {warehouse}: {got} != expected {expected} "
                                 f"({duckdb_error})")
            return {"reader": "pyiceberg", "ok": True, "duckdb_error": duckdb_error}
        pyiceberg_error = (r["stderr"].strip().splitlines() or [f"rc {r['rc']}"])[-1][-500:]
        out = self.work / "check_scan.parquet"
        self.lakesync(warehouse, "scan", "--table", TABLE, "--select", "id,v,key", "--format", "parquet",
                      "--output", str(out))
        got = {k: v for k, v in self.worker({"task": "check", "reader": "parquet", "path": str(out)})["result"].items()
               if k in expected}
        out.unlink()
        if got != expected:
            raise SystemExit(f"wrong final state read by lakesync scan in {warehouse}: {got} != expected {expected} "
                             f"({duckdb_error}; {pyiceberg_error})")
        return {"reader": "lakesync-scan", "ok": True, "duckdb_error": duckdb_error, "pyiceberg_error": pyiceberg_error}


# ---------------------------------------------------------------------------------------------
# Reporting.

def summarize(samples: list[dict]) -> dict:
    ok = [s for s in samples if not s.get("failed")]
    if not ok:
        return {"failed": True, "n": 0, "samples_failed": len(samples)}
    walls = sorted(s["wall_s"] for s in ok)
    return {"wall_median_s": statistics.median(walls), "wall_min_s": walls[0], "wall_max_s": walls[-1],
            "cpu_median_s": statistics.median(s["cpu_s"] for s in ok),
            "peak_rss_mib": max(s["peak_rss_mib"] for s in ok), "n": len(ok),
            "samples_failed": len(samples) - len(ok), "checked_by": sorted({s["check"]["reader"] for s in ok})}


def merge_phase(bench: Bench, args) -> dict:
    engines = [e for e in BIG_ENGINES + SMALL_ENGINES if e in args.engines]
    samples: dict[str, list] = {e: [] for e in engines}
    for round_ in range(args.repeat):
        for engine in engines:
            if engine.startswith("pyiceberg") and (round_ >= args.pyiceberg_repeat or
                                                   any(s.get("failed") for s in samples[engine])):
                continue  # slow: fewer rounds; and once it did not finish, no second timeout
            t0 = time.perf_counter()
            s = bench.apply_once(engine)
            samples[engine].append(s)
            state = "FAILED" if s.get("failed") else f"{s['wall_s']:.2f} s, {s['peak_rss_mib']:.0f} MiB"
            print(f"  round {round_ + 1} {engine}: {state} (with restore and check {time.perf_counter() - t0:.0f} s)",
                  flush=True)
        print(f"round {round_ + 1}/{args.repeat} done", flush=True)
    summary = {e: summarize(samples[e]) for e in engines}
    n_big, n_small = args.changes, args.small_changes
    for e, s in summary.items():
        if not s.get("failed"):
            s["changes_per_s"] = (n_small if e in SMALL_ENGINES else n_big) / s["wall_median_s"]
    return {"samples": samples, "summary": summary}


def bill_phase(bench: Bench, args) -> dict:
    """20 commits with lakesync onto the DV table and the equality-delete table, a compacted copy, scans."""
    out: dict = {"commits": {}}
    variants = {"dv": ("ls_v3", []), "eq": ("ls_v2", ["--delete-strategy", "equality"])}
    expected = bench.expected["bill"]["expected"]
    for variant, (wh_name, extra) in variants.items():
        bench.restore(wh_name)
        wh = bench.warehouse(wh_name)
        times = []
        for c in range(args.bill_commits):
            r = bench.lakesync(wh, "apply", "--table", TABLE, "--changes", str(bench.work / f"bill_{c + 1:02d}.parquet"),
                               "--change-type-column", "_change_type", "--sequence-number-column", "_seq",
                               "--equality-columns", "id", "--sorter-memory-mb", str(args.sorter_memory_mb),
                               "--json", *extra)
            times.append({"wall_s": r["wall_s"], "peak_rss_mib": r["peak_rss_mib"]})
        out["commits"][variant] = {"apply_wall_s": [t["wall_s"] for t in times],
                                   "apply_peak_rss_mib": max(t["peak_rss_mib"] for t in times)}
        print(f"bill: {args.bill_commits} commits onto {variant} in {sum(t['wall_s'] for t in times):.1f} s", flush=True)
    # The compacted copy of the DV table.
    t0 = time.perf_counter()
    compact_parquet = bench.work / "compact.parquet"
    bench.lakesync(bench.warehouse("ls_v3"), "scan", "--table", TABLE, "--format", "parquet", "--output",
                   str(compact_parquet))
    wh = bench.warehouse("compact")
    if wh.exists():
        shutil.rmtree(wh)
    bench.lakesync(wh, "namespace", "create", NAMESPACE)
    bench.lakesync(wh, "table", "create", TABLE, "--schema-from", str(compact_parquet), "--format-version", "3")
    bench.lakesync(wh, "table", "append", TABLE, str(compact_parquet))
    compact_parquet.unlink()
    out["compaction_s"] = time.perf_counter() - t0
    tables = {"dv": bench.warehouse("ls_v3"), "eq": bench.warehouse("ls_v2"), "compact": wh}
    plans = {}
    for name, w in tables.items():
        r = run_measured([str(bench.build / "scan_bench"), "--mode", "files", "--table", TABLE],
                         env=dict(os.environ, LAKESYNC_WAREHOUSE=str(w)))
        plan = last_json(r["stdout"])
        files = plan["files"]
        plans[name] = {"metadata_location": plan["metadata_location"], "data_files": len(files),
                       "data_bytes": sum(f["file_size_in_bytes"] for f in files),
                       "data_rows": sum(f["record_count"] for f in files),
                       "files_with_dv": sum(1 for f in files if f["deletion_vector"]),
                       "dv_deleted_rows": sum(f["deleted_rows"] for f in files),
                       # per data file: how many delete files a reader must apply to it (max over files)
                       "max_position_delete_files": max((f["position_delete_files"] for f in files), default=0),
                       "max_equality_delete_files": max((f["equality_delete_files"] for f in files), default=0),
                       "files": files}
    out["plans"] = {k: {kk: vv for kk, vv in v.items() if kk != "files"} for k, v in plans.items()}
    out["plan_files"] = {k: v["files"] for k, v in plans.items()}

    # Validation: every table, every reader.
    readable = {}
    for name, w in tables.items():
        out.setdefault("checks", {})[name] = bench.check_iceberg(w, expected)
        ls = scan_lakesync(bench, w, checksum=True)
        if ls["rows"] != expected["rows"] or ls["checksum"] != expected["sum_id"]:
            raise SystemExit(f"lakesync scan of {name}: {ls['rows']} rows, id sum {ls['checksum']} != {expected}")
        d = bench.worker({"task": "scan-duckdb", "metadata": plans[name]["metadata_location"]},
                         timeout=args.duckdb_scan_timeout, check=False)
        if d["rc"] == 0 and d["result"]["rows"] == expected["rows"]:
            readable[name] = "ok"
        elif d["rc"] == 0:
            # Timed anyway (the cost of reading is still informative) but flagged: the rows are wrong.
            readable[name] = f"wrong rows: {d['result']['rows']:,} instead of {expected['rows']:,}"
        else:
            readable[name] = "timed out" if d["timed_out"] else \
                "error: " + (d["stderr"].strip().splitlines() or ["?"])[-1][-500:]
    print(f"bill: validated; DuckDB reads: {readable}", flush=True)
    samples: dict = {name: {"lakesync": [], "duckdb": []} for name in tables}
    for round_ in range(args.repeat):
        for name, w in tables.items():
            samples[name]["lakesync"].append(scan_lakesync(bench, w))
            if readable[name] == "ok" or readable[name].startswith("wrong rows"):
                d = bench.worker({"task": "scan-duckdb", "metadata": plans[name]["metadata_location"]})
                samples[name]["duckdb"].append({"wall_s": d["result"]["wall_s"], "cpu_s": d["result"]["cpu_s"],
                                                "peak_rss_mib": d["peak_rss_mib"], "rows": d["result"]["rows"]})
        print(f"bill scans: round {round_ + 1}/{args.repeat} done", flush=True)
    med = {name: {eng: statistics.median(s["wall_s"] for s in ss) if ss else None for eng, ss in per.items()}
           for name, per in samples.items()}
    ratios = {}
    for eng in ("lakesync", "duckdb"):
        if med["compact"][eng]:
            if med["dv"][eng]:
                ratios[f"{eng}_dv_over_compact"] = med["dv"][eng] / med["compact"][eng]
            if med["eq"][eng]:
                ratios[f"{eng}_eq_over_compact"] = med["eq"][eng] / med["compact"][eng]
            if med["eq"][eng] and med["dv"][eng]:
                ratios[f"{eng}_eq_over_dv"] = med["eq"][eng] / med["dv"][eng]
    cpu = {name: {eng: statistics.median(s["cpu_s"] for s in ss) if ss else None for eng, ss in per.items()}
           for name, per in samples.items()}
    for eng in ("lakesync", "duckdb"):
        if cpu["compact"][eng] and cpu["dv"][eng]:
            ratios[f"{eng}_dv_over_compact_cpu"] = cpu["dv"][eng] / cpu["compact"][eng]
        if cpu["compact"][eng] and cpu["eq"][eng]:
            ratios[f"{eng}_eq_over_compact_cpu"] = cpu["eq"][eng] / cpu["compact"][eng]
    out.update({"samples": samples, "scan_median_s": med, "scan_cpu_median_s": cpu, "ratios": ratios,
                "duckdb_reads": readable})
    return out


def scan_lakesync(bench: Bench, warehouse: Path, checksum: bool = False) -> dict:
    cmd = [str(bench.build / "scan_bench"), "--mode", "lakesync", "--table", TABLE]
    if checksum:
        cmd += ["--checksum-column", "id"]
    r = run_measured(cmd, env=dict(os.environ, LAKESYNC_WAREHOUSE=str(warehouse)))
    if r["rc"] != 0:
        raise SystemExit(f"scan_bench failed on {warehouse}:\n{r['stderr'][-2000:]}")
    line = last_json(r["stdout"])
    return {k: line[k] for k in ("wall_s", "cpu_s", "rows", "peak_rss_mib", "checksum") if k in line}


def print_report(result: dict, args) -> None:
    m = result.get("merge")
    if m:
        print(f"\nApplying {args.changes:,} changes to {args.rows:,} rows (*-small: {args.small_changes:,} to "
              f"{args.small_rows:,}); sorter_memory_mb={args.sorter_memory_mb}")
        print(f"{'engine':<12} {'wall med':>9} {'min..max':>14} {'cpu med':>8} {'changes/s':>11} {'peak RSS':>9} "
              f"{'n':>2}  checked by")
        for e, s in m["summary"].items():
            if s.get("failed"):
                print(f"{e:<12} did not finish ({s['samples_failed']} tries)")
                continue
            print(f"{e:<12} {s['wall_median_s']:>8.2f}s {s['wall_min_s']:>6.2f}..{s['wall_max_s']:<7.2f}"
                  f"{s['cpu_median_s']:>8.1f}s {s['changes_per_s']:>11,.0f} {s['peak_rss_mib']:>7.0f}Mi {s['n']:>2}  "
                  f"{','.join(s['checked_by'])}")
        for k, v in m["goals"].items():
            print(f"  {k}: {v}")
    b = result.get("bill")
    if b:
        print(f"\nReader's bill after {args.bill_commits} commits of {args.bill_changes:,} changes "
              f"(scan medians, s): {json.dumps(b['scan_median_s'])}")
        print(f"  ratios: {json.dumps({k: round(v, 3) for k, v in b['ratios'].items()})}")
        print(f"  plans: {json.dumps(b['plans'])}")
        print(f"  scan CPU medians, s: {json.dumps(b['scan_cpu_median_s'])}")
        print(f"  DuckDB: {json.dumps(b['duckdb_reads'])}")
        print(f"  checks: {json.dumps(b['checks'])}")
        for k, v in b.get("goals", {}).items():
            print(f"  {k}: {v}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--changes", type=int, default=1_000_000)
    parser.add_argument("--small-rows", type=int, default=0,
                        help="also a smaller size for pyiceberg-small and ls-v3-small (add them to --engines)")
    parser.add_argument("--small-changes", type=int, default=0)
    parser.add_argument("--pyiceberg-repeat", type=int, default=1, help="rounds for pyiceberg (slow)")
    parser.add_argument("--pyiceberg-timeout", type=float, default=600.0)
    parser.add_argument("--bill-commits", type=int, default=20)
    parser.add_argument("--bill-changes", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--duckdb-scan-timeout", type=float, default=300.0)
    parser.add_argument("--check-timeout", type=float, default=150.0,
                        help="DuckDB's check of a final state; on timeout another reader checks it")
    parser.add_argument("--sorter-memory-mb", type=int, default=100, help="lakesync's sorter_memory_mb (default 100)")
    parser.add_argument("--engines", default=",".join(BIG_ENGINES))
    parser.add_argument("--threads", default="",
                        help="comma-separated lakesync thread counts, e.g. 1,2: adds engines ls-v3-dv-tN (the v3 "
                             "apply with --threads N) to --engines, timed round-robin with the others")
    parser.add_argument("--skip-merge", action="store_true")
    parser.add_argument("--skip-bill", action="store_true")
    parser.add_argument("--setup-only", action="store_true", help="generate and set up, then stop (see --keep)")
    parser.add_argument("--keep", action="store_true", help="reuse generated data and pristine tables if present")
    parser.add_argument("--seed", type=int, default=20240301)
    parser.add_argument("--work-dir", type=Path)
    parser.add_argument("--build-dir", type=Path, default=Path(os.environ.get("LAKESYNC_BUILD_DIR", REPO / "build")))
    parser.add_argument("--results-dir", type=Path, default=REPO / "bench" / "results")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    args.engines = [e for e in args.engines.split(",") if e]
    for t in [int(t) for t in args.threads.split(",") if t]:
        name = f"ls-v3-dv-t{t}"
        LAKESYNC_VARIANTS[name] = ("ls_v3", ["--threads", str(t)])
        BIG_ENGINES.append(name)
        if name not in args.engines:
            args.engines.append(name)
    build = args.build_dir.resolve()
    for binary in ("lakesync", "scan_bench"):
        if not (build / binary).exists():
            raise SystemExit(f"{build / binary} is missing: build the lakesync and scan_bench targets")
    work = (args.work_dir or Path(f"/tmp/lakesync-apply-bench-{args.rows}")).resolve()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    host = scan_bench.machine()
    gen_spec = {"task": "generate", "work": str(work), "rows": args.rows, "changes": args.changes,
                "seed": args.seed, "small_rows": args.small_rows, "small_changes": args.small_changes,
                "bill_commits": args.bill_commits, "bill_changes": args.bill_changes}
    data_stamp, tables_stamp = work / "spec.json", work / "tables.json"
    reuse = args.keep and data_stamp.exists() and json.loads(data_stamp.read_text()) == gen_spec
    if not reuse:
        if work.exists():
            shutil.rmtree(work)
        work.mkdir(parents=True)
        t0 = time.perf_counter()
        run = run_measured(worker_cmd(gen_spec))
        if run["rc"] != 0:
            raise SystemExit(f"generation failed:\n{run['stderr'][-4000:]}")
        data_stamp.write_text(json.dumps(gen_spec))
        print(f"generated the data in {time.perf_counter() - t0:.1f} s (peak {run['peak_rss_mib']:.0f} MiB)",
              flush=True)
    else:
        print(f"reusing the generated data in {work} (--keep)")
    expected = json.loads((work / "expected.json").read_text())
    bench = Bench(args, build, work, expected)
    tables = {"engines": sorted(args.engines), "build": str(build)}
    if not (reuse and tables_stamp.exists() and json.loads(tables_stamp.read_text()) == tables):
        for d in (bench.live, bench.pristine):
            if d.exists():
                shutil.rmtree(d)
        bench.set_up()
        tables_stamp.write_text(json.dumps(tables))
    else:
        print(f"reusing the pristine tables in {work} (--keep)")
    if args.setup_only:
        return

    result: dict = {"started": started, "command": " ".join([Path(sys.executable).name, *sys.argv]),
                    "machine": host, "rows": args.rows, "changes": args.changes, "small_rows": args.small_rows,
                    "small_changes": args.small_changes, "sorter_memory_mb": args.sorter_memory_mb,
                    "repeat": args.repeat, "expected": expected}
    if not args.skip_merge:
        m = merge_phase(bench, args)
        s = m["summary"]
        goals = {}
        if "ls-v3-dv" in s and not s["ls-v3-dv"].get("failed"):
            ls = s["ls-v3-dv"]
            goals["ls-v3-dv >= 1M changes/s"] = f"{ls['changes_per_s']:,.0f}/s: " + \
                ("met" if ls["changes_per_s"] >= 1_000_000 else "missed")
            t1, t2 = s.get("ls-v3-dv-t1"), s.get("ls-v3-dv-t2")
            if t1 and t2 and not t1.get("failed") and not t2.get("failed"):
                scaling = t1["wall_median_s"] / t2["wall_median_s"]
                m.setdefault("ratios", {})["ls_v3_t1_over_t2"] = scaling
                goals["ls-v3-dv 1 -> 2 threads >= 1.7x"] = f"{scaling:.2f}x: " + ("met" if scaling >= 1.7 else "missed")
            limit = args.sorter_memory_mb + 512
            for e in ("ls-v3-dv", "ls-v2-pos", "ls-v2-eq"):
                if e in s and not s[e].get("failed"):
                    goals[f"{e} peak RSS <= {limit} MiB"] = f"{s[e]['peak_rss_mib']:.0f} MiB: " + \
                        ("met" if s[e]["peak_rss_mib"] <= limit else "missed")
            if "delta-rs" in s and not s["delta-rs"].get("failed"):
                ratio = s["delta-rs"]["wall_median_s"] / ls["wall_median_s"]
                m["ratios"] = {"delta_over_ls_v3": ratio}
                goals["ls-v3-dv >= 5x delta-rs"] = f"{ratio:.2f}x: " + ("met" if ratio >= 5 else "missed")
            if "duckdb" in s and not s["duckdb"].get("failed"):
                m.setdefault("ratios", {})["duckdb_over_ls_v3"] = s["duckdb"]["wall_median_s"] / ls["wall_median_s"]
            if "pyiceberg" in s and not s["pyiceberg"].get("failed"):
                m.setdefault("ratios", {})["pyiceberg_over_ls_v3"] = s["pyiceberg"]["wall_median_s"] / ls["wall_median_s"]
        if all(e in s and not s[e].get("failed") for e in ("pyiceberg-small", "ls-v3-small")):
            m.setdefault("ratios", {})["pyiceberg_small_over_ls_v3_small"] = \
                s["pyiceberg-small"]["wall_median_s"] / s["ls-v3-small"]["wall_median_s"]
        m["goals"] = goals
        result["merge"] = m
    if not args.skip_bill:
        b = bill_phase(bench, args)
        if "lakesync_dv_over_compact" in b["ratios"]:
            r = b["ratios"]["lakesync_dv_over_compact"]
            b["goals"] = {"DV scan <= 1.2x compacted (lakesync)": f"{r:.3f}x: " + ("met" if r <= 1.2 else "missed")}
        result["bill"] = b
    result["loadavg_at_end"] = os.getloadavg()
    print_report(result, args)
    args.results_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = args.results_dir / f"apply_bench-{args.rows}-{stamp}.json"
    out.write_text(json.dumps(result, indent=2))
    print(f"\nresults: {out}")


if __name__ == "__main__":
    main()
