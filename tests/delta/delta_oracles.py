"""Helpers for the Delta source suites: run `lakesync changes/scan` on Delta tables and read the
same tables with independent readers. Not a test module.

Oracles (../shared/specs/oracles.md section 1):
  - deltalake (delta-rs) `DeltaTable.load_cdf` for change feeds, and its DataFusion `QueryBuilder`
    (`SELECT * FROM t`) for snapshots. Not `to_pyarrow_table()`: in 1.6.6 it refuses deletion
    vectors, v2 checkpoints and reader-version-3 column mapping ("not yet supported by the
    deltalake reader") and, worse, reads the reader-version-2 column-mapping tables of the corpus
    (cdf-column-mapping-{name,id}-mode) as rows of NULLs, where QueryBuilder, DuckDB and chDB
    agree on the values;
  - chDB `deltaLakeLocal()` (delta-kernel-rs inside) with the CDF settings
    `delta_lake_snapshot_start_version` / `delta_lake_snapshot_end_version`, and
    `delta_lake_snapshot_version` for snapshots;
  - DuckDB's delta extension `delta_scan(path, version => N)`, loaded from the installed
    `duckdb-extension-delta` wheel (never downloaded).

`_commit_timestamp` is not compared with any of them: delta-rs uses `commitInfo.timestamp` and
kernel-rs the raw file modification time, while lakesync follows Spark's monotonic modification
time (delta.md section 4.5). `expected_commit_timestamps` computes that rule from the files
themselves; the tests check our column against it and compare every other column with the oracles.

Values are normalised in one place (`normalise`), driven by the Arrow type of the column, so that
the text lakesync prints and each reader's Python values meet in one canonical form:

  bool -> bool; integers -> int; float/double -> float (NaN -> "NaN", +-inf -> "Infinity"/"-Infinity");
  decimal(p, s) -> str with exactly s decimals; date -> "YYYY-MM-DD";
  timestamp (UTC-adjusted) -> "YYYY-MM-DDTHH:MM:SS.ffffffZ" (the JSON value must carry a zone);
  timestamp_ntz -> "YYYY-MM-DDTHH:MM:SS.ffffff" (the JSON value must not carry one);
  string -> str; binary -> bytes (JSON: base64); struct -> tuple in field order; list -> tuple;
  map -> tuple of (key, value) sorted.
"""

from __future__ import annotations

import base64
import collections
import datetime as dt
import decimal
import glob
import io
import json
import math
import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any, Iterable

import pytest

pa = pytest.importorskip("pyarrow")

BUILD_DIR = Path(os.environ.get("LAKESYNC_BUILD_DIR", Path(__file__).resolve().parents[2] / "build"))
LAKESYNC = BUILD_DIR / "lakesync"
SHARED_DIR = Path(os.environ.get("LAKESYNC_SHARED_DIR", "/work/shared"))
CORPUS_DIR = SHARED_DIR / "corpora" / "delta-cdf"

needs_lakesync = pytest.mark.skipif(
    not LAKESYNC.exists(), reason=f"{LAKESYNC} is not built (build the lakesync target; set LAKESYNC_BUILD_DIR)")

EXIT_OK, EXIT_FAILURE, EXIT_INVALID, EXIT_NOT_FOUND, EXIT_CORRUPT = 0, 1, 2, 3, 4
META_COLUMNS = ["_change_type", "_commit_version", "_commit_timestamp"]
META_TYPES = {"_change_type": pa.string(), "_commit_version": pa.int64(),
              "_commit_timestamp": pa.timestamp("us", tz="UTC")}

# ---------------------------------------------------------------------------------------------
# Corpus


def extract_corpus(dest: Path, names: list[str] | None = None) -> dict[str, Path]:
    """Extracts every corpus archive (or those `names` lists) into dest; returns archive name -> table
    root. The golden
    archives keep the table under `<name>/delta/` (their `expected/` folder is never read).
    tarfile keeps the archived modification times, which the commit timestamps depend on."""
    zstd = pytest.importorskip("zstandard")
    roots = {}
    for archive in sorted(CORPUS_DIR.glob("*.tar.zst")):
        name = archive.name[: -len(".tar.zst")]
        if names is not None and name not in names:
            continue
        with open(archive, "rb") as fh:
            data = zstd.ZstdDecompressor().stream_reader(fh).read()
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(dest)
        root = dest / name
        roots[name] = root / "delta" if (root / "delta" / "_delta_log").is_dir() else root
    return roots


# ---------------------------------------------------------------------------------------------
# Running lakesync


def run_lakesync(*args: Any, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "GOOGLE_"))}
    env["AWS_EC2_METADATA_DISABLED"] = "true"
    return subprocess.run([str(LAKESYNC), *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          env=env)


def _parse_jsonl(out: str) -> list[dict]:
    rows = []
    for n, line in enumerate(out.splitlines(), 1):
        row = json.loads(line)
        assert isinstance(row, dict), f"jsonl line {n} is not an object: {line[:200]}"
        rows.append(row)
    return rows


def changes_args(table: Path, start: int | str | None = None, end: int | str | None = None, *,
                 by: str = "version", columns: list[str] | None = None) -> list[str]:
    args = ["changes", "--source", "delta", "--table", str(table)]
    if start is not None:
        args += [f"--start-{by}", str(start)]
    if end is not None:
        args += [f"--end-{by}", str(end)]
    if columns is not None:
        args += ["--columns", ",".join(columns)]
    return args + ["--format", "jsonl"]


def lakesync_changes(table: Path, start=None, end=None, *, by: str = "version",
                     columns: list[str] | None = None) -> list[dict]:
    done = run_lakesync(*changes_args(table, start, end, by=by, columns=columns))
    assert done.returncode == 0, (f"lakesync changes {table.name} [{start}, {end}] by {by} exited "
                                  f"{done.returncode}\nstderr: {done.stderr[-3000:]}")
    return _parse_jsonl(done.stdout)


def lakesync_scan(table: Path, version: int | None = None) -> list[dict]:
    args = ["scan", "--delta", str(table), "--format", "jsonl"]
    if version is not None:
        args += ["--version", str(version)]
    done = run_lakesync(*args)
    assert done.returncode == 0, (f"lakesync scan --delta {table.name} (version {version}) exited "
                                  f"{done.returncode}\nstderr: {done.stderr[-3000:]}")
    return _parse_jsonl(done.stdout)


def lakesync_fails(*args: Any) -> tuple[int, str]:
    """Runs a command that must fail cleanly: non-zero exit, no signal, nothing on stdout."""
    done = run_lakesync(*args)
    assert done.returncode != 0, f"lakesync {' '.join(map(str, args))} succeeded: {done.stdout[:2000]}"
    assert done.returncode > 0, f"lakesync crashed with signal {-done.returncode}: {done.stderr[-2000:]}"
    assert done.stdout == "", f"a failing command emitted rows on stdout: {done.stdout[:500]!r}"
    return done.returncode, done.stderr


# ---------------------------------------------------------------------------------------------
# Oracles


def _pa_table(obj) -> "pa.Table":
    """deltalake 1.x returns arro3 objects; pyarrow takes them through the Arrow C stream."""
    return obj if isinstance(obj, pa.Table) else pa.table(obj)


def delta_schema(table: Path, version: int | None = None) -> "pa.Schema":
    from deltalake import DeltaTable

    d = DeltaTable(str(table), version=version)
    return pa.schema(d.schema().to_arrow())


def _percent_copy(table: Path, scratch: Path) -> Path:
    """delta-rs `load_cdf` (1.6.6) does not percent-decode `add`/`cdc` paths: it asks for
    `test%25file%25prefix-...` while the file on disk is `test%file%prefix-...` (delta.md section 2,
    "Paths": percent-decode before use; its snapshot reader does decode). So the oracle reads a copy
    of the table in which every file with '%' in its name also exists under the encoded name, with
    the same bytes. lakesync always reads the original table."""
    copy = scratch / f"pct-{table.parent.name}-{table.name}"
    if copy.exists():
        return copy
    shutil.copytree(table, copy)
    for dirpath, _, files in os.walk(copy):
        for f in files:
            if "%" in f:
                shutil.copy2(os.path.join(dirpath, f), os.path.join(dirpath, f.replace("%", "%25")))
    return copy


def deltalake_cdf(table: Path, start: int, end: int | None = None, scratch: Path | None = None) -> "pa.Table":
    from deltalake import DeltaTable

    root = table
    if scratch is not None and any("%" in f for _, _, fs in os.walk(table) for f in fs):
        root = _percent_copy(table, scratch)
    d = DeltaTable(str(root))
    return _pa_table(d.load_cdf(starting_version=start, ending_version=end).read_all())


def deltalake_snapshot(table: Path, version: int | None = None) -> "pa.Table":
    from deltalake import DeltaTable, QueryBuilder

    d = DeltaTable(str(table), version=version)
    return _pa_table(QueryBuilder().register("t", d).execute("SELECT * FROM t").read_all())


_CHDB = None


def _chdb_session():
    global _CHDB
    if _CHDB is None:
        pytest.importorskip("chdb")
        from chdb import session

        _CHDB = session.Session()
    return _CHDB


def chdb_query(sql: str) -> "pa.Table":
    """chDB opens only files under its user_files_path (the working directory at query time), so
    the query runs from /."""
    sess = _chdb_session()
    previous = os.getcwd()
    os.chdir("/")
    try:
        return sess.query(sql, "ArrowTable")
    finally:
        os.chdir(previous)


# ClickHouse keeps Delta binary and string alike as String; it hands both over as Arrow binary and
# `normalise` decodes the ones the Delta schema calls string.
_CH_SETTINGS = "session_timezone = 'UTC', output_format_arrow_string_as_string = 0"


def chdb_cdf(table: Path, start: int, end: int) -> "pa.Table":
    return chdb_query(f"SELECT * FROM deltaLakeLocal('{table}') SETTINGS delta_lake_snapshot_start_version = {start}, "
                      f"delta_lake_snapshot_end_version = {end}, {_CH_SETTINGS}")


def chdb_snapshot(table: Path, version: int | None = None) -> "pa.Table":
    pin = f"delta_lake_snapshot_version = {version}, " if version is not None else ""
    return chdb_query(f"SELECT * FROM deltaLakeLocal('{table}') SETTINGS {pin}{_CH_SETTINGS}")


_DUCK = None


def duckdb_connection():
    global _DUCK
    if _DUCK is None:
        duckdb = pytest.importorskip("duckdb")
        module = pytest.importorskip("duckdb_extension_delta")
        found = sorted(glob.glob(os.path.join(os.path.dirname(module.__file__), "extensions", "*",
                                              "delta.duckdb_extension")))
        assert found, "duckdb-extension-delta is installed without its extension binary"
        con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
        con.execute(f"LOAD '{found[-1]}'")
        _DUCK = con
    return _DUCK


def duckdb_snapshot(table: Path, version: int | None = None) -> "pa.Table":
    pin = f", version => {version}" if version is not None else ""
    return duckdb_connection().execute(f"SELECT * FROM delta_scan('{table}'{pin})").to_arrow_table()


# ---------------------------------------------------------------------------------------------
# _commit_timestamp (delta.md section 4.5, lakesync rule)


def commit_files(table: Path) -> dict[int, Path]:
    log = table / "_delta_log"
    return {int(p.name[:20]): p for p in log.iterdir()
            if len(p.name) == 25 and p.name.endswith(".json") and p.name[:20].isdigit()}


def _ict_config(table: Path, version: int) -> tuple[bool, int | None]:
    """(ICT on as of version, delta.inCommitTimestampEnablementVersion) from the metaData actions of
    commits 0..version."""
    on, since = False, None
    files = commit_files(table)
    for v in range(0, version + 1):
        if v not in files:
            continue
        for line in files[v].read_text().splitlines():
            if '"metaData"' in line:
                conf = json.loads(line)["metaData"].get("configuration") or {}
                on = conf.get("delta.enableInCommitTimestamps") == "true"
                since = int(conf["delta.inCommitTimestampEnablementVersion"]) if (
                    "delta.inCommitTimestampEnablementVersion" in conf) else None
    return on, since


def _ict_of(path: Path) -> int | None:
    for line in path.read_text().splitlines():
        action = json.loads(line)
        if "commitInfo" in action:
            return action["commitInfo"].get("inCommitTimestamp")
    return None


def expected_commit_timestamps(table: Path, start: int, end: int) -> dict[int, int]:
    """Version -> epoch milliseconds by lakesync's rule: the in-commit timestamp for versions at or
    after the ICT enablement version (all versions when ICT was on from creation); otherwise the
    commit file's modification time made monotonic Spark's way, over a window starting at
    max(0, start - 100): ts[v] = max(mtime[v], ts[v - 1] + 1)."""
    files = commit_files(table)
    on, since = _ict_config(table, end)
    out: dict[int, int] = {}
    prev = None
    for v in range(max(0, start - 100), end + 1):
        if on and (since is None or v >= since):
            ts = _ict_of(files[v])
            assert ts is not None, f"version {v} has no inCommitTimestamp although ICT is on"
        else:
            ts = files[v].stat().st_mtime_ns // 1_000_000
            if prev is not None:
                ts = max(ts, prev + 1)
        prev = ts
        if v >= start:
            out[v] = ts
    return out


def ms_to_iso(ms: int) -> str:
    return (dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(milliseconds=ms)).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ")


# ---------------------------------------------------------------------------------------------
# Normalisation (one helper for every source)


def _float(v):
    if isinstance(v, str):
        assert v in ("NaN", "Infinity", "-Infinity"), f"float given as the string {v!r}"
        return v
    v = float(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def _timestamp(v, t) -> str:
    with_zone = t.tz is not None
    if isinstance(v, str):
        parsed = dt.datetime.fromisoformat(v)
        assert (parsed.tzinfo is not None) == with_zone, (
            f"timestamp {v!r}: {'a UTC-adjusted timestamp needs a zone' if with_zone else 'timestamp_ntz takes no zone'}")
        v = parsed
    elif isinstance(v, (int,)):
        unit = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}[t.unit]
        v = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc if with_zone else None) + dt.timedelta(
            microseconds=v * 1_000_000 // unit)
    elif hasattr(v, "to_pydatetime"):  # pandas Timestamp
        v = v.to_pydatetime()
    if with_zone:
        if v.tzinfo is None:  # a reader handing back UTC as naive (asked for UTC explicitly)
            v = v.replace(tzinfo=dt.timezone.utc)
        return v.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert v.tzinfo is None, f"timestamp_ntz value with a zone: {v!r}"
    return v.strftime("%Y-%m-%dT%H:%M:%S.%f")


def normalise(v, t) -> Any:
    """One value of Arrow type t, from any source, in canonical form (see the module docstring)."""
    if v is None:
        return None
    if pa.types.is_boolean(t):
        assert isinstance(v, bool) or v in (0, 1), f"boolean given as {v!r}"
        return bool(v)
    if pa.types.is_integer(t):
        assert not isinstance(v, (bool, float, str)), f"integer given as {v!r}"
        return int(v)
    if pa.types.is_floating(t):
        return _float(v)
    if pa.types.is_decimal(t):
        d = decimal.Decimal(v) if isinstance(v, str) else decimal.Decimal(v)
        return str(d.quantize(decimal.Decimal(1).scaleb(-t.scale)))
    if pa.types.is_date(t):
        return v if isinstance(v, str) and dt.date.fromisoformat(v) else v.isoformat()
    if pa.types.is_timestamp(t):
        return _timestamp(v, t)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        if isinstance(v, bytes):  # chDB (see _CH_SETTINGS)
            v = v.decode("utf-8")
        assert isinstance(v, str), f"string given as {v!r}"
        return v
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return base64.b64decode(v, validate=True) if isinstance(v, str) else bytes(v)
    if pa.types.is_struct(t):
        assert isinstance(v, dict), f"struct given as {v!r}"
        return tuple(normalise(v.get(t.field(i).name), t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return tuple(normalise(x, t.value_type) for x in v)
    if pa.types.is_map(t):
        if isinstance(v, dict):
            pairs = v.items()
        else:
            pairs = [(p["key"], p["value"]) if isinstance(p, dict) else p for p in v]
        return tuple(sorted(((normalise(k, t.key_type), normalise(x, t.item_type)) for k, x in pairs), key=repr))
    raise AssertionError(f"no normalisation for Arrow type {t}")


def rows_of_arrow(table: "pa.Table", columns: list[str], types: dict[str, Any]) -> list[tuple]:
    missing = [c for c in columns if c not in table.column_names]
    assert not missing, f"reader output lacks columns {missing}; it has {table.column_names}"
    cols = [table.column(c).to_pylist() for c in columns]
    return [tuple(normalise(col[i], types[c]) for c, col in zip(columns, cols)) for i in range(table.num_rows)]


def rows_of_json(rows: list[dict], columns: list[str], types: dict[str, Any]) -> list[tuple]:
    out = []
    for n, row in enumerate(rows, 1):
        assert list(row) == columns, f"row {n}: keys {list(row)}, expected {columns} in that order"
        out.append(tuple(normalise(row[c], types[c]) for c in columns))
    return out


def assert_same_multiset(actual: list[tuple], expected: list[tuple], what: str, limit: int = 8) -> None:
    a, e = collections.Counter(actual), collections.Counter(expected)
    if a == e:
        return
    extra, missing = a - e, e - a
    lines = [f"{what}: {len(actual)} rows, expected {len(expected)}"]
    lines += [f"  unexpected x{n}: {r}" for r, n in list(extra.items())[:limit]]
    lines += [f"  missing    x{n}: {r}" for r, n in list(missing.items())[:limit]]
    raise AssertionError("\n".join(lines))


def without(rows: Iterable[tuple], columns: list[str], drop: str) -> list[tuple]:
    i = columns.index(drop)
    return [r[:i] + r[i + 1:] for r in rows]


def names_version(message: str, version: int) -> bool:
    """A message names a version as "version N" or by its commit file name. (A bare number is no
    evidence: the table's path in the message may contain digits.)"""
    return (re.search(rf"version\s+{version}(?![0-9])", message, re.IGNORECASE) is not None
            or f"{version:020d}.json" in message)
