"""Shared helpers for the end-to-end suites that drive the real `lakesync` binary.

Not a test module. It holds:

- `Cli`: runs LAKESYNC_BUILD_DIR/lakesync against one private embedded catalog (LAKESYNC_WAREHOUSE
  set to a test's tmp dir) or a --catalog-config file, and parses the documented outputs
  (`scan --format jsonl`, `table history --json`, `table describe --json`).
- Oracles: pyiceberg's SqlCatalog over the same SQLite file, DuckDB with the iceberg/avro/httpfs
  extensions loaded from the installed wheels (never downloaded), chDB (icebergLocal and its Puffin
  input format), fastavro for reading manifests, and a loopback REST catalog facade over a pyiceberg
  SqlCatalog so DuckDB can write into the same catalog (v3 commits are applied to the metadata JSON
  by the facade itself, since pyiceberg 0.12 cannot write v3 metadata).
- Builders for test inputs: Parquet and JSON Lines files from canonical rows.
- Row normalisation, defined once. Every reader's value is turned into one canonical Python form,
  driven by the Iceberg type of the column (so "14.20" from JSON Lines, Decimal('14.2') from pyarrow
  and Decimal('14.20') from DuckDB all compare equal, but 14.2 as a double would not):

    boolean -> bool             int, long -> int
    float   -> the float32 value as a Python float; NaN -> NAN (a marker that equals itself)
    double  -> float; NaN -> NAN
    decimal(P, S) -> Decimal quantised to S places
    date    -> datetime.date    time -> int microseconds since midnight
    timestamp, timestamptz -> int microseconds since the epoch (UTC instant for tz)
    timestamp_ns, timestamptz_ns -> int nanoseconds since the epoch
    string  -> str              uuid -> uuid.UUID            fixed, binary -> bytes
    struct  -> tuple in field order   list -> tuple   map -> tuple of (key, value) sorted by key

  The JSON Lines decoder checks the documented contract (decimals with exactly S digits, "Z" on
  timestamptz, base64, canonical uuids, keys equal to the column names, ...) while decoding, so a
  contract violation fails the comparison with a message naming the column. Source "jsonl"
  tolerates the known lakesync deviations listed below (each held by a strict xfail test);
  "jsonl-strict" tolerates nothing.

  Readers with known limitations are compared against `reader_view` of the expected rows, which
  documents each limitation.

Types are written in Iceberg's JSON form: primitives as strings ("decimal(9, 2)", "fixed[8]"), nested
types as dicts ({"type": "struct", "fields": [{"name", "type", "required"}]}, {"type": "list",
"element", "element-required"}, {"type": "map", "key", "value", "value-required"}) -- the same form
`lakesync table create --schema` accepts without ids.
"""

from __future__ import annotations

import base64
import binascii
import collections
import datetime as dt
import decimal
import json
import math
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Iterable

import pytest

BUILD_DIR = Path(os.environ.get("LAKESYNC_BUILD_DIR", "/work/main/build"))
LAKESYNC = BUILD_DIR / "lakesync"
VENV_BIN = Path(sys.executable).parent

needs_lakesync = pytest.mark.skipif(
    not LAKESYNC.exists(), reason=f"{LAKESYNC} is not built (build the lakesync target; set LAKESYNC_BUILD_DIR)")

# Exit codes from docs/cli.md.
EXIT_OK, EXIT_FAILURE, EXIT_INVALID, EXIT_NOT_FOUND, EXIT_CORRUPT = 0, 1, 2, 3, 4


# ---------------------------------------------------------------------------------------------
# Running the CLI


class Cli:
    """One lakesync catalog: the embedded one under `workdir/wh`, or the one a config file names."""

    def __init__(self, workdir: Path, catalog_config: Path | None = None, env: dict[str, str] | None = None):
        self.workdir = Path(workdir)
        self.warehouse = self.workdir / "wh"
        self.catalog_config = catalog_config
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "GOOGLE_", "STORAGE_EMULATOR"))}
        self.env["LAKESYNC_WAREHOUSE"] = str(self.warehouse)
        self.env["AWS_EC2_METADATA_DISABLED"] = "true"
        self.env.update(env or {})

    @property
    def catalog_db(self) -> Path:
        return self.warehouse / "catalog.db"

    def run(self, *args: Any, input: str | None = None, timeout: float = 180,
            config: bool = True) -> subprocess.CompletedProcess:
        cmd = [str(LAKESYNC), *map(str, args)]
        if config and self.catalog_config is not None:
            cmd += ["--catalog-config", str(self.catalog_config)]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=self.env,
                              cwd=self.workdir, input=input)

    def ok(self, *args: Any, **kw) -> str:
        done = self.run(*args, **kw)
        assert done.returncode == 0, (
            f"lakesync {' '.join(map(str, args))} exited {done.returncode}\nstderr: {done.stderr}")
        return done.stdout

    def fail(self, *args: Any, **kw) -> tuple[int, str]:
        """Runs a command that must fail cleanly; returns (exit code, the error message)."""
        done = self.run(*args, **kw)
        assert done.returncode != 0, f"lakesync {' '.join(map(str, args))} succeeded: {done.stdout[:2000]}"
        assert done.returncode > 0, f"lakesync crashed with signal {-done.returncode}: {done.stderr}"
        return done.returncode, done.stderr

    def scan_jsonl(self, table: str, *extra: Any) -> list[dict]:
        out = self.ok("scan", "--table", table, "--format", "jsonl", *extra)
        rows = []
        for n, line in enumerate(out.splitlines(), 1):
            row = json.loads(line)
            assert isinstance(row, dict), f"jsonl line {n} is not an object: {line[:200]}"
            rows.append(row)
        return rows

    def history(self, table: str) -> list[dict]:
        return json.loads(self.ok("table", "history", table, "--json"))

    def metadata(self, table: str) -> dict:
        return json.loads(self.ok("table", "describe", table, "--json"))

    def snapshot_ids(self, table: str) -> list[int]:
        return [s["snapshot-id"] for s in self.history(table)]

    def current_snapshot(self, table: str) -> dict:
        m = self.metadata(table)
        [snap] = [s for s in m["snapshots"] if s["snapshot-id"] == m["current-snapshot-id"]]
        return snap


def write_yaml(path: Path, doc: Any) -> Path:
    import yaml

    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    return path


def schema_file(path: Path, columns: list[dict], identifier_fields: list[str] | None = None) -> Path:
    doc: dict = {"fields": columns}
    if identifier_fields:
        doc["identifier-fields"] = identifier_fields
    return write_yaml(path, doc)


def local_path(location: str) -> str:
    return location[len("file://"):] if location.startswith("file://") else location


# ---------------------------------------------------------------------------------------------
# Oracles


def sql_catalog(cli: Cli, **props):
    """pyiceberg's SqlCatalog over lakesync's embedded catalog file (as docs/cli.md shows)."""
    pytest.importorskip("pyiceberg")
    from pyiceberg.catalog import load_catalog

    cli.warehouse.mkdir(parents=True, exist_ok=True)
    return load_catalog("lakesync", type="sql", uri=f"sqlite:///{cli.catalog_db}",
                        warehouse=f"file://{cli.warehouse}", **props)


def _extension_file(module_name: str, name: str) -> str:
    module = pytest.importorskip(module_name)
    found = sorted(Path(module.__file__).parent.glob(f"extensions/*/{name}.duckdb_extension"))
    if not found:
        pytest.skip(f"the {name} DuckDB extension file is not installed")
    return str(found[-1])


def duckdb_connection(httpfs: bool = False):
    """DuckDB with the avro and iceberg extensions (and httpfs) loaded from the wheel packages."""
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    con.execute(f"LOAD '{_extension_file('duckdb_extension_avro', 'avro')}'")
    con.execute(f"LOAD '{_extension_file('duckdb_extension_iceberg', 'iceberg')}'")
    if httpfs:
        con.execute(f"LOAD '{_extension_file('duckdb_extension_httpfs', 'httpfs')}'")
    con.execute("SET TimeZone = 'UTC'")
    return con


def duckdb_select_list(columns: list[dict]) -> str:
    """Column expressions for DuckDB: nanosecond timestamps as integers (its Python client would
    truncate them to microseconds)."""
    out = []
    for c in columns:
        name = '"' + c["name"].replace('"', '""') + '"'
        out.append(f"epoch_ns({name})" if c["type"] in ("timestamp_ns", "timestamptz_ns") else name)
    return ", ".join(out)


def duckdb_rows(con, metadata_location: str, columns: list[dict], where: str = "") -> list[tuple]:
    sql = f"SELECT {duckdb_select_list(columns)} FROM iceberg_scan('{metadata_location}') {where}"
    return normalise_rows(con.execute(sql).fetchall(), columns, "duckdb")


def chdb_session():
    chdb = pytest.importorskip("chdb")
    from chdb import session

    return session.Session()


def chdb_query(sess, sql: str, fmt: str = "ArrowTable"):
    """Runs a chDB query. chDB only opens files under its user_files_path, which is the working
    directory at query time, so the query runs with the working directory set to /."""
    previous = os.getcwd()
    os.chdir("/")
    try:
        return sess.query(sql, fmt)
    finally:
        os.chdir(previous)


def chdb_select_list(columns: list[dict]) -> str:
    """Column expressions for chDB: binary and fixed as hex text (ClickHouse keeps them as String and
    FixedString, which its Arrow output marks as UTF-8 text)."""
    out = []
    for c in columns:
        name = "`" + c["name"].replace("`", "\\`") + "`"
        out.append(f"hex({name})" if c["type"] == "binary" or str(c["type"]).startswith("fixed") else name)
    return ", ".join(out)


def chdb_rows(sess, table_location: str, columns: list[dict], where: str = "", settings: str = "") -> list[tuple]:
    """Rows of an Iceberg table read by chDB's icebergLocal() at the table's location (it finds the
    newest metadata file itself; `settings` may pin a snapshot: "iceberg_snapshot_id = N")."""
    sql = (f"SELECT {chdb_select_list(columns)} FROM icebergLocal('{local_path(table_location)}') {where}"
           + (f" SETTINGS {settings}" if settings else ""))
    table = chdb_query(sess, sql)
    return normalise_rows([tuple(r.values()) for r in table.to_pylist()], columns, "chdb")


def reader_view(rows: list[tuple], columns: list[dict], reader: str) -> list[tuple]:
    """Expected rows as a reader with a known, documented limitation can show them:

    - "pyiceberg": pyiceberg 0.12 reads a null list<struct> as an empty list (it does so for tables
      it wrote itself; the Parquet files hold a null).
    - "chdb": ClickHouse's Tuple, Array and Map are not nullable: a null struct reads as a struct of
      nulls, a null list or map as an empty one. chDB 4.4 maps Iceberg `time` to Int64 and returns
      whole seconds (the Parquet files hold microseconds, which pyarrow and DuckDB read).
    """

    def view(v, t):
        if reader == "chdb" and t == "time" and v is not None:
            return v // 1_000_000
        if isinstance(t, dict):
            kind = t["type"]
            if reader == "chdb":
                if kind == "struct":
                    if v is None:
                        v = (None,) * len(t["fields"])
                    return tuple(view(x, f["type"]) for x, f in zip(v, t["fields"]))
                if v is None:
                    return ()
            if v is None:
                if reader == "pyiceberg" and kind == "list" and isinstance(t["element"], dict):
                    return ()
                return None
            if kind == "struct":
                return tuple(view(x, f["type"]) for x, f in zip(v, t["fields"]))
            if kind == "list":
                return tuple(view(x, t["element"]) for x in v)
            return tuple((k, view(x, t["value"])) for k, x in v)
        return v

    return [tuple(view(v, c["type"]) for v, c in zip(r, columns)) for r in rows]


# A loopback REST catalog facade over a pyiceberg catalog, serving just the endpoints DuckDB's
# iceberg extension calls. Commits go through the pyiceberg catalog, so every writer shares it.

def rest_catalog_over(catalog):
    """Starts the facade on 127.0.0.1; returns (url, stop)."""
    flask = pytest.importorskip("flask")
    from werkzeug.serving import make_server
    from pyiceberg.catalog.rest import CreateTableRequest
    from pyiceberg.exceptions import (CommitFailedException, NamespaceAlreadyExistsError, NoSuchNamespaceError,
                                      NoSuchTableError, TableAlreadyExistsError)
    from pyiceberg.table import CommitTableRequest

    app = flask.Flask("lakesync-rest-oracle")

    class Named:  # what SqlCatalog.commit_table needs of a table: its identifier
        def __init__(self, identifier):
            self.identifier = identifier

        def name(self):
            return self.identifier

    def error(code, kind, message):
        return flask.Response(json.dumps({"error": {"message": message, "type": kind, "code": code}}),
                              status=code, mimetype="application/json")

    def table_json(metadata_location, metadata=None):
        # The metadata file as it is on disk (pyiceberg 0.12 refuses to serialise v3 metadata).
        if metadata is None or getattr(metadata, "format_version", 2) >= 3:
            with open(local_path(metadata_location), encoding="utf-8") as f:
                document = json.load(f)
        else:
            document = json.loads(metadata.model_dump_json(by_alias=True, exclude_none=True))
        body = {"metadata-location": metadata_location, "config": {}, "metadata": document}
        return flask.Response(json.dumps(body), mimetype="application/json")

    def commit(identifier, body):
        table = catalog.load_table(identifier) if catalog.table_exists(identifier) else None
        if table is not None and table.metadata.format_version >= 3:
            return raw_v3_commit(catalog, identifier, table.metadata_location, body)
        request = CommitTableRequest.model_validate(
            {"identifier": {"namespace": list(identifier[:-1]), "name": identifier[-1]}, **body})
        response = catalog.commit_table(Named(identifier), request.requirements, request.updates)
        return response.metadata_location, response.metadata

    @app.get("/v1/config")
    def config():
        return flask.jsonify({"defaults": {}, "overrides": {}})

    @app.get("/v1/namespaces")
    def list_namespaces():
        return flask.jsonify({"namespaces": [list(ns) for ns in catalog.list_namespaces()]})

    @app.post("/v1/namespaces")
    def create_namespace():
        body = flask.request.get_json()
        try:
            catalog.create_namespace(tuple(body["namespace"]), body.get("properties", {}))
        except NamespaceAlreadyExistsError as e:
            return error(409, "AlreadyExistsException", str(e))
        return flask.jsonify({"namespace": body["namespace"], "properties": body.get("properties", {})})

    @app.route("/v1/namespaces/<ns>", methods=["GET", "HEAD"])
    def load_namespace(ns):
        try:
            return flask.jsonify({"namespace": [ns], "properties": catalog.load_namespace_properties(ns)})
        except NoSuchNamespaceError:
            return error(404, "NoSuchNamespaceException", ns)

    @app.get("/v1/namespaces/<ns>/tables")
    def list_tables(ns):
        return flask.jsonify({"identifiers": [{"namespace": list(t[:-1]), "name": t[-1]}
                                              for t in catalog.list_tables(ns)]})

    @app.post("/v1/namespaces/<ns>/tables")
    def create_table(ns):
        body = {"location": None, **json.loads(flask.request.data)}
        request = CreateTableRequest.model_validate(body)
        args = {k: v for k, v in dict(schema=request.table_schema, partition_spec=request.partition_spec,
                                      sort_order=request.write_order, properties=request.properties,
                                      location=request.location).items() if v is not None}
        try:
            if request.stage_create:  # DuckDB stages, then commits the creation with its first change
                table = catalog._create_staged_table((ns, request.name), **args)
            else:
                table = catalog.create_table((ns, request.name), **args)
        except TableAlreadyExistsError as e:
            return error(409, "AlreadyExistsException", str(e))
        return table_json(table.metadata_location, table.metadata)

    @app.route("/v1/namespaces/<ns>/tables/<name>", methods=["GET", "HEAD"])
    def load_table(ns, name):
        try:
            table = catalog.load_table((ns, name))
        except NoSuchTableError:
            return error(404, "NoSuchTableException", name)
        return table_json(table.metadata_location, table.metadata)

    @app.post("/v1/namespaces/<ns>/tables/<name>")
    def commit_table(ns, name):
        try:
            location, metadata = commit((ns, name), json.loads(flask.request.data))
        except CommitFailedException as e:
            return error(409, "CommitFailedException", str(e))
        except NotImplementedError as e:
            return error(400, "BadRequestException", str(e))
        return table_json(location, metadata)

    @app.post("/v1/transactions/commit")
    def commit_transaction():
        for change in json.loads(flask.request.data)["table-changes"]:
            identifier = tuple(change["identifier"]["namespace"]) + (change["identifier"]["name"],)
            try:
                commit(identifier, {k: v for k, v in change.items() if k != "identifier"})
            except CommitFailedException as e:
                return error(409, "CommitFailedException", str(e))
            except NotImplementedError as e:
                return error(400, "BadRequestException", str(e))
        return flask.Response(status=204)

    server = make_server("127.0.0.1", 0, app, threaded=False)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def stop():
        server.shutdown()
        thread.join(timeout=10)

    return f"http://127.0.0.1:{server.server_port}", stop


def raw_v3_commit(catalog, identifier: tuple, base_location: str, body: dict):
    """Applies a REST commit to a v3 table's metadata JSON directly, since pyiceberg 0.12 cannot
    write v3 metadata. Knows just what DuckDB sends for INSERT/DELETE/UPDATE (add-snapshot and
    set-snapshot-ref, guarded by assert-table-uuid and assert-ref-snapshot-id); anything else is
    refused, so a test never passes on a half-applied commit. Swaps the catalog row like the SQL
    catalogs do (UPDATE ... WHERE metadata_location = <base>). Returns (new location, None)."""
    from pyiceberg.exceptions import CommitFailedException
    from sqlalchemy import text

    with open(local_path(base_location), encoding="utf-8") as f:
        metadata = json.load(f)
    for requirement in body.get("requirements", []):
        kind = requirement["type"]
        if kind == "assert-table-uuid":
            if requirement["uuid"] != metadata["table-uuid"]:
                raise CommitFailedException(f"table uuid is {metadata['table-uuid']}")
        elif kind == "assert-ref-snapshot-id":
            ref = metadata.get("refs", {}).get(requirement["ref"])
            if (ref["snapshot-id"] if ref else None) != requirement["snapshot-id"]:
                raise CommitFailedException(f"ref {requirement['ref']} is at {ref}")
        else:
            raise NotImplementedError(f"requirement {kind} (test catalog facade)")
    now = int(time.time() * 1000)
    for update in body.get("updates", []):
        action = update["action"]
        if action == "add-snapshot":
            snapshot = update["snapshot"]
            if snapshot["sequence-number"] <= metadata.get("last-sequence-number", 0):
                raise CommitFailedException("stale sequence number")
            metadata.setdefault("snapshots", []).append(snapshot)
            metadata["last-sequence-number"] = snapshot["sequence-number"]
            if "first-row-id" in snapshot:
                metadata["next-row-id"] = max(metadata.get("next-row-id", 0),
                                              snapshot["first-row-id"] + snapshot.get("added-rows", 0))
        elif action == "set-snapshot-ref":
            metadata.setdefault("refs", {})[update["ref-name"]] = {"snapshot-id": update["snapshot-id"],
                                                                   "type": update["type"]}
            if update["ref-name"] == "main":
                metadata["current-snapshot-id"] = update["snapshot-id"]
                metadata.setdefault("snapshot-log", []).append({"snapshot-id": update["snapshot-id"],
                                                                "timestamp-ms": now})
        else:
            raise NotImplementedError(f"update {action} (test catalog facade)")
    metadata["last-updated-ms"] = now
    metadata.setdefault("metadata-log", []).append({"metadata-file": base_location, "timestamp-ms": now})
    version = int(Path(local_path(base_location)).name.split("-")[0]) + 1
    location = f"{metadata['location']}/metadata/{version:05d}-{uuid.uuid4()}.metadata.json"
    with open(local_path(location), "x", encoding="utf-8") as f:
        json.dump(metadata, f)
    with catalog.engine.begin() as conn:
        swapped = conn.execute(text(
            "UPDATE iceberg_tables SET metadata_location = :new, previous_metadata_location = :old "
            "WHERE catalog_name = :catalog AND table_namespace = :ns AND table_name = :name "
            "AND metadata_location = :old"),
            {"new": location, "old": base_location, "catalog": catalog.name,
             "ns": ".".join(identifier[:-1]), "name": identifier[-1]}).rowcount
    if swapped != 1:
        raise CommitFailedException(f"{'.'.join(identifier)} changed under the commit")
    return location, None


def duckdb_attach_rest(con, url: str, alias: str = "ice") -> None:
    con.execute(f"ATTACH 'wh' AS {alias} (TYPE iceberg, ENDPOINT '{url}', AUTHORIZATION_TYPE 'none')")


# ---------------------------------------------------------------------------------------------
# Servers on loopback


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def venv_tool(name: str) -> str:
    import shutil

    candidate = VENV_BIN / name
    if candidate.exists():
        return str(candidate)
    found = shutil.which(name)
    if not found:
        pytest.skip(f"{name} is not installed next to {sys.executable} or on PATH")
    return found


def start_server(cmd: list[str], ready_url: str, log_path: Path) -> subprocess.Popen:
    requests = pytest.importorskip("requests")
    log = open(log_path, "wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"{cmd[0]} exited with {proc.returncode}: {log_path.read_text(errors='replace')}")
        try:
            requests.get(ready_url, timeout=1)
            return proc
        except requests.RequestException:
            time.sleep(0.2)
    proc.kill()
    pytest.fail(f"{cmd[0]} did not answer at {ready_url} within 30 s: {log_path.read_text(errors='replace')}")


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# ---------------------------------------------------------------------------------------------
# Normalisation


class _NaN:
    """The canonical NaN: equal to itself (float NaN is not), hashable, printable."""

    def __eq__(self, other):
        return isinstance(other, _NaN)

    def __hash__(self):
        return hash("NaN")

    def __repr__(self):
        return "NaN"


NAN = _NaN()
EPOCH = dt.datetime(1970, 1, 1)
_DECIMAL_CONTEXT = decimal.Context(prec=100)  # the default 28 digits would round decimal(38, S)
EPOCH_DATE = dt.date(1970, 1, 1)
_DECIMAL = re.compile(r"decimal\((\d+),\s*(\d+)\)")
_FIXED = re.compile(r"fixed\[(\d+)\]")
_DATE_RE = re.compile(r"^-?\d{4,}-\d{2}-\d{2}$")
_TIME_RE = re.compile(r"^(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$")
_TS_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z?)$")


def decimal_scale(t: str) -> tuple[int, int]:
    m = _DECIMAL.fullmatch(t)
    return int(m.group(1)), int(m.group(2))


class ContractError(AssertionError):
    pass


# "jsonl" is lakesync's JSON Lines output with the known deviations below tolerated, so that one
# known bug does not hide every other comparison; "jsonl-strict" is the contract exactly as
# docs/cli.md states it (tests/interop/test_tables_written_by_lakesync.py holds the known bugs to it
# in strict xfail tests, which start failing once the bug is fixed: then drop the tolerance here).
JSONL = ("jsonl", "jsonl-strict")
# lakesync bug: uuid columns come out as base64 of the 16 bytes instead of the canonical text form.
TOLERATE_UUID_AS_BASE64 = False
# lakesync bug: decimals whose adjusted exponent is below -6 come out in scientific notation
# ("-5.68E-8" for decimal(38, 10) -0.0000000568) instead of "with exactly S decimals".
TOLERATE_DECIMAL_EXPONENT = False


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _float(v, t: str, src: str):
    if isinstance(v, _NaN):
        return NAN
    if isinstance(v, str):
        if src not in JSONL:
            raise ContractError(f"{src}: float value given as text {v!r}")
        special = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
        if v not in special:
            raise ContractError(f"jsonl: float text must be NaN/Infinity/-Infinity, got {v!r}")
        v = special[v]
    elif isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ContractError(f"{src}: {t} value {v!r} is not a number")
    elif src in JSONL and isinstance(v, float) and not math.isfinite(v):
        raise ContractError("jsonl: non-finite floats must be strings")
    v = float(v)
    if math.isnan(v):
        return NAN
    return _f32(v) if t == "float" else v


def _micros_of_datetime(v: dt.datetime) -> int:
    if v.tzinfo is not None:
        v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return (v - EPOCH) // dt.timedelta(microseconds=1)


def _timestamp(v, t: str, src: str) -> int:
    nanos = t.endswith("_ns")
    with_tz = t.startswith("timestamptz")
    if src in JSONL:
        if not isinstance(v, str):
            raise ContractError(f"jsonl: {t} must be a string, got {v!r}")
        m = _TS_RE.fullmatch(v)
        if not m:
            raise ContractError(f"jsonl: {t} value {v!r} is not YYYY-MM-DDTHH:MM:SS[.f]")
        if bool(m.group(8)) != with_tz:
            raise ContractError(f"jsonl: {t} value {v!r} {'needs' if with_tz else 'must not have'} a trailing Z")
        frac = m.group(7) or ""
        if len(frac) > (9 if nanos else 6):
            raise ContractError(f"jsonl: {t} value {v!r} has too many fractional digits")
        base = dt.datetime(*(int(m.group(i)) for i in range(1, 7)))
        seconds = (base - EPOCH) // dt.timedelta(seconds=1)
        frac_ns = int(frac.ljust(9, "0")) if frac else 0
        total_ns = seconds * 1_000_000_000 + frac_ns
        if nanos:
            return total_ns
        return total_ns // 1000
    if isinstance(v, bool):
        raise ContractError(f"{src}: {t} value {v!r}")
    if isinstance(v, int):  # readers asked to return epoch integers in the column's unit
        return v
    if hasattr(v, "value") and type(v).__name__ == "Timestamp":  # pandas Timestamp: exact nanoseconds
        ns = v.value
        return ns if nanos else ns // 1000
    if isinstance(v, dt.datetime):
        if with_tz and v.tzinfo is None and src not in ("arrow",):
            raise ContractError(f"{src}: {t} value {v!r} has no time zone")
        us = _micros_of_datetime(v)
        return us * 1000 if nanos else us
    raise ContractError(f"{src}: {t} value {v!r} of type {type(v).__name__}")


def _time(v, src: str) -> int:
    if src in JSONL:
        m = _TIME_RE.fullmatch(v) if isinstance(v, str) else None
        if not m:
            raise ContractError(f"jsonl: time value {v!r} is not HH:MM:SS[.ffffff]")
        if m.group(4) is not None and int(m.group(4)) == 0:
            raise ContractError(f"jsonl: time value {v!r} has a zero fraction (contract: only when non-zero)")
        frac = int((m.group(4) or "").ljust(6, "0") or 0)
        return ((int(m.group(1)) * 60 + int(m.group(2))) * 60 + int(m.group(3))) * 1_000_000 + frac
    if isinstance(v, dt.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
    if isinstance(v, dt.timedelta):
        return v // dt.timedelta(microseconds=1)
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    raise ContractError(f"{src}: time value {v!r}")


def _decimal(v, t: str, src: str) -> decimal.Decimal:
    _, scale = decimal_scale(t)
    if src in JSONL:
        if not isinstance(v, str):
            raise ContractError(f"jsonl: {t} must be a string, got {v!r}")
        pattern = r"-?\d+" + (r"\.\d{%d}" % scale if scale else "")
        if not re.fullmatch(pattern, v):
            if not (src == "jsonl" and TOLERATE_DECIMAL_EXPONENT and re.fullmatch(r"-?\d(\.\d+)?E-\d+", v)):
                raise ContractError(f"jsonl: {t} value {v!r} must have exactly {scale} decimals")
            return decimal.Decimal(v).quantize(decimal.Decimal(1).scaleb(-scale, context=_DECIMAL_CONTEXT),
                                               context=_DECIMAL_CONTEXT)
        return decimal.Decimal(v)
    quantum = decimal.Decimal(1).scaleb(-scale, context=_DECIMAL_CONTEXT)
    if isinstance(v, decimal.Decimal):
        out = v.quantize(quantum, context=_DECIMAL_CONTEXT)
        if out != v:
            raise ContractError(f"{src}: {t} value {v!r} has more than {scale} decimals")
        return out
    if isinstance(v, int) and not isinstance(v, bool):
        return decimal.Decimal(v).quantize(quantum, context=_DECIMAL_CONTEXT)
    raise ContractError(f"{src}: {t} value {v!r} of type {type(v).__name__}")


def _bytes(v, t: str, src: str) -> bytes:
    if src in JSONL:
        if not isinstance(v, str):
            raise ContractError(f"jsonl: {t} must be a base64 string, got {v!r}")
        try:
            out = base64.b64decode(v, validate=True)
        except binascii.Error as e:
            raise ContractError(f"jsonl: {t} value {v!r} is not base64: {e}") from None
    elif isinstance(v, (bytes, bytearray, memoryview)):
        out = bytes(v)
    elif isinstance(v, str) and src == "chdb":  # chdb_select_list asks for hex(...)
        out = bytes.fromhex(v)
    else:
        raise ContractError(f"{src}: {t} value {v!r} of type {type(v).__name__}")
    m = _FIXED.fullmatch(t)
    if m and len(out) != int(m.group(1)):
        raise ContractError(f"{src}: {t} value has {len(out)} bytes")
    return out


def _uuid(v, src: str) -> uuid.UUID:
    if isinstance(v, uuid.UUID):
        return v
    if src == "jsonl" and TOLERATE_UUID_AS_BASE64 and isinstance(v, str) and len(v) == 24 and v.endswith("=="):
        return uuid.UUID(bytes=base64.b64decode(v, validate=True))
    if isinstance(v, str):
        u = uuid.UUID(v)
        if src in JSONL and str(u) != v:
            raise ContractError(f"jsonl: uuid {v!r} is not in canonical lower-case form")
        return u
    if isinstance(v, (bytes, bytearray)) and len(v) == 16:
        return uuid.UUID(bytes=bytes(v))
    raise ContractError(f"{src}: uuid value {v!r}")


def _map_pairs(v) -> Iterable[tuple]:
    if isinstance(v, dict):
        if set(v) == {"key", "value"} and isinstance(v["key"], list):  # DuckDB's older map form
            return list(zip(v["key"], v["value"]))
        return list(v.items())
    return [tuple(p) if not isinstance(p, dict) else (p["key"], p["value"]) for p in v]


def normaliser(t, src: str):
    """A function giving the canonical form of one value of Iceberg type `t` as reader `src`
    returned it. src: "python" (canonical values), "arrow" (pyarrow to_pylist), "jsonl" (lakesync
    scan, known deviations tolerated), "jsonl-strict", "duckdb", "chdb"."""
    key = (json.dumps(t, sort_keys=True), src)
    made = _NORMALISERS.get(key)
    if made is None:
        made = _NORMALISERS[key] = _make_normaliser(t, src)
    return made


_NORMALISERS: dict = {}


def _make_normaliser(t, src: str):
    jsonl = src in JSONL
    if isinstance(t, dict):
        kind = t["type"]
        if kind == "struct":
            fields = t["fields"]
            names = [f["name"] for f in fields]
            subs = [normaliser(f["type"], src) for f in fields]

            def struct(v):
                if v is None:
                    return None
                if isinstance(v, dict):
                    if jsonl and list(v) != names:
                        raise ContractError(f"jsonl: struct keys {list(v)} != fields {names}")
                    values = [v.get(n) for n in names]
                elif isinstance(v, (tuple, list)):
                    values = v
                else:
                    raise ContractError(f"{src}: struct value {v!r}")
                return tuple(f(x) for f, x in zip(subs, values))
            return struct
        if kind == "list":
            element = normaliser(t["element"], src)

            def list_(v):
                if v is None:
                    return None
                if not isinstance(v, (list, tuple)):
                    raise ContractError(f"{src}: list value {v!r}")
                return tuple(element(x) for x in v)
            return list_
        if kind == "map":
            key_of, value_of = normaliser(t["key"], src), normaliser(t["value"], src)
            string_keys = t["key"] == "string"

            def map_(v):
                if v is None:
                    return None
                if jsonl and string_keys and not isinstance(v, dict):
                    raise ContractError(f"jsonl: a map with string keys must be an object, got {v!r}")
                pairs = [(key_of(k), value_of(x)) for k, x in _map_pairs(v)]
                return tuple(sorted(pairs, key=lambda p: repr(p[0])))
            return map_
        raise AssertionError(f"unknown nested type {t}")

    def nullable(f):
        return lambda v: None if v is None else f(v)

    if t == "boolean":
        def boolean(v):
            if isinstance(v, bool):
                return v
            if src == "chdb" and v in (0, 1):
                return bool(v)
            raise ContractError(f"{src}: boolean value {v!r}")
        return nullable(boolean)
    if t in ("int", "long"):
        def integer(v):
            if isinstance(v, bool) or not isinstance(v, int):
                raise ContractError(f"{src}: {t} value {v!r}")
            return v
        return nullable(integer)
    if t in ("float", "double"):
        return nullable(lambda v: _float(v, t, src))
    if t.startswith("decimal"):
        quantum = decimal.Decimal(1).scaleb(-decimal_scale(t)[1], context=_DECIMAL_CONTEXT)
        if src in ("python", "arrow", "duckdb", "chdb"):
            def fast_decimal(v):  # the common case without text parsing
                if isinstance(v, decimal.Decimal):
                    out = v.quantize(quantum, context=_DECIMAL_CONTEXT)
                    if out == v:
                        return out
                return _decimal(v, t, src)
            return nullable(fast_decimal)
        return nullable(lambda v: _decimal(v, t, src))
    if t == "date":
        def date(v):
            if jsonl:
                if not (isinstance(v, str) and _DATE_RE.fullmatch(v)):
                    raise ContractError(f"jsonl: date value {v!r}")
                return dt.date.fromisoformat(v)
            if isinstance(v, dt.datetime) or not isinstance(v, dt.date):
                raise ContractError(f"{src}: date value {v!r}")
            return v
        return nullable(date)
    if t == "time":
        return nullable(lambda v: _time(v, src))
    if t.startswith("timestamp"):
        return nullable(lambda v: _timestamp(v, t, src))
    if t == "string":
        def string(v):
            if not isinstance(v, str):
                raise ContractError(f"{src}: string value {v!r}")
            return v
        return nullable(string)
    if t == "uuid":
        return nullable(lambda v: _uuid(v, src))
    if t == "binary" or t.startswith("fixed"):
        return nullable(lambda v: _bytes(v, t, src))
    raise AssertionError(f"unknown type {t}")


def normalise(v, t, src: str):
    """The canonical form of one value (see normaliser)."""
    return normaliser(t, src)(v)


def normalise_rows(rows, columns: list[dict], src: str) -> list[tuple]:
    """Canonical rows (tuples in `columns` order) from dicts keyed by column name or from sequences."""
    names = [c["name"] for c in columns]
    functions = [normaliser(c["type"], src) for c in columns]
    jsonl = src in JSONL
    out = []
    for row in rows:
        if isinstance(row, dict):
            if jsonl and list(row) != names:
                raise ContractError(f"jsonl: row keys {list(row)} != columns {names}")
            values = [row.get(n) for n in names]
        else:
            values = row
            assert len(values) == len(columns), f"{src}: row has {len(values)} values for {len(columns)} columns"
        try:
            out.append(tuple(f(v) for f, v in zip(functions, values)))
        except ContractError as e:
            bad = next(n for f, v, n in zip(functions, values, names) if not _normalises(f, v))
            raise ContractError(f"column {bad!r}: {e}") from None
    return out


def _normalises(f, v) -> bool:
    try:
        f(v)
        return True
    except ContractError:
        return False


def normalise_row(row, columns: list[dict], src: str) -> tuple:
    return normalise_rows([row], columns, src)[0]


def arrow_rows(table, columns: list[dict], src: str = "arrow") -> list[tuple]:
    """Rows of a pyarrow Table, selected in `columns` order."""
    table = table.select([c["name"] for c in columns])
    return normalise_rows(table.to_pylist(), columns, src)


def assert_same_rows(actual: list[tuple], expected: list[tuple], what: str, limit: int = 5) -> None:
    """Multiset equality with a readable difference."""
    a, e = collections.Counter(actual), collections.Counter(expected)
    if a == e:
        return
    missing = list((e - a).elements())
    extra = list((a - e).elements())
    lines = [f"{what}: {len(actual)} rows, expected {len(expected)}; "
             f"{len(missing)} expected rows missing, {len(extra)} unexpected rows"]
    lines += [f"  missing: {r}" for r in missing[:limit]]
    lines += [f"  unexpected: {r}" for r in extra[:limit]]
    if missing and extra:  # point at the first differing column of the closest pair
        m, x = missing[0], min(extra, key=lambda r: sum(p != q for p, q in zip(r, missing[0])))
        diff = [(i, p, q) for i, (p, q) in enumerate(zip(m, x)) if p != q]
        lines.append(f"  first missing vs closest unexpected differ at columns {diff[:4]}")
    raise AssertionError("\n".join(lines))


# ---------------------------------------------------------------------------------------------
# Canonical values to Arrow (building inputs)


def arrow_type(t):
    import pyarrow as pa

    if isinstance(t, dict):
        kind = t["type"]
        if kind == "struct":
            return pa.struct([pa.field(f["name"], arrow_type(f["type"]), nullable=not f.get("required", False))
                              for f in t["fields"]])
        if kind == "list":
            return pa.list_(pa.field("element", arrow_type(t["element"]),
                                     nullable=not t.get("element-required", False)))
        if kind == "map":
            return pa.map_(pa.field("key", arrow_type(t["key"]), nullable=False),
                           pa.field("value", arrow_type(t["value"]), nullable=not t.get("value-required", False)))
    simple = {"boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
              "double": pa.float64(), "date": pa.date32(), "time": pa.time64("us"),
              "timestamp": pa.timestamp("us"), "timestamptz": pa.timestamp("us", tz="UTC"),
              "timestamp_ns": pa.timestamp("ns"), "timestamptz_ns": pa.timestamp("ns", tz="UTC"),
              "string": pa.string(), "uuid": pa.uuid(), "binary": pa.binary()}
    if t in simple:
        return simple[t]
    if t.startswith("decimal"):
        return pa.decimal128(*decimal_scale(t))
    if t.startswith("fixed"):
        return pa.binary(int(_FIXED.fullmatch(t).group(1)))
    raise AssertionError(f"no Arrow type for {t}")


def _native(v, t):
    """Canonical value -> what pa.array accepts for the Arrow type of `t` (nested types included)."""
    if v is None:
        return None
    if isinstance(t, dict):
        if t["type"] == "struct":
            return {f["name"]: _native(x, f["type"]) for x, f in zip(v, t["fields"])}
        if t["type"] == "list":
            return [_native(x, t["element"]) for x in v]
        return [(_native(k, t["key"]), _native(x, t["value"])) for k, x in v]
    if isinstance(v, _NaN):
        return math.nan
    if t == "uuid":
        return v.bytes
    if t == "time":
        return dt.time(v // 3_600_000_000, v // 60_000_000 % 60, v // 1_000_000 % 60, v % 1_000_000)
    if t in ("timestamp", "timestamptz"):
        out = EPOCH + dt.timedelta(microseconds=v)
        return out.replace(tzinfo=dt.timezone.utc) if t == "timestamptz" else out
    return v


def arrow_column(values: list, t):
    import pyarrow as pa

    if t in ("time", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"):
        return pa.array(values, pa.int64()).cast(arrow_type(t))
    if t == "uuid":
        storage = pa.array([None if v is None else v.bytes for v in values], pa.binary(16))
        return pa.ExtensionArray.from_storage(pa.uuid(), storage)
    return pa.array([_native(v, t) for v in values], type=arrow_type(t))


def arrow_table(rows: list[tuple], columns: list[dict]):
    import pyarrow as pa

    arrays = [arrow_column([r[i] for r in rows], c["type"]) for i, c in enumerate(columns)]
    fields = [pa.field(c["name"], arrow_type(c["type"]), nullable=not c.get("required", False)) for c in columns]
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def jsonl_value(v, t):
    """Canonical value -> its JSON Lines form per docs/cli.md (used to write append inputs)."""
    if v is None:
        return None
    if isinstance(t, dict):
        if t["type"] == "struct":
            return {f["name"]: jsonl_value(x, f["type"]) for x, f in zip(v, t["fields"])}
        if t["type"] == "list":
            return [jsonl_value(x, t["element"]) for x in v]
        if t["key"] == "string":
            return {k: jsonl_value(x, t["value"]) for k, x in v}
        return [{"key": jsonl_value(k, t["key"]), "value": jsonl_value(x, t["value"])} for k, x in v]
    if isinstance(v, _NaN):
        return "NaN"
    if t in ("float", "double"):
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if t.startswith("decimal"):
        return str(v)
    if t == "date":
        return v.isoformat()
    if t == "time":
        text = "%02d:%02d:%02d" % (v // 3_600_000_000, v // 60_000_000 % 60, v // 1_000_000 % 60)
        return text + (".%06d" % (v % 1_000_000) if v % 1_000_000 else "")
    if t.startswith("timestamp"):
        nanos = t.endswith("_ns")
        unit = 1_000_000_000 if nanos else 1_000_000
        seconds, frac = divmod(v, unit)
        text = (EPOCH + dt.timedelta(seconds=seconds)).isoformat()
        if frac:
            text += "." + (("%09d" if nanos else "%06d") % frac)
        return text + ("Z" if t.startswith("timestamptz") else "")
    if t == "uuid":
        return str(v)
    if t == "binary" or t.startswith("fixed"):
        return base64.b64encode(v).decode()
    return v


def write_jsonl(path: Path, rows: list[tuple], columns: list[dict]) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps({c["name"]: jsonl_value(v, c["type"]) for v, c in zip(r, columns)},
                               ensure_ascii=False) + "\n")
    return path


def write_parquet(path: Path, rows: list[tuple], columns: list[dict]) -> Path:
    import pyarrow.parquet as pq

    pq.write_table(arrow_table(rows, columns), path)
    return path


# ---------------------------------------------------------------------------------------------
# Looking at a table's files


def list_files(root: Path) -> list[str]:
    """Every file under root, relative, sorted (empty when root does not exist)."""
    root = Path(root)
    if not root.exists():
        return []
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def catalog_rows(db: Path) -> list[tuple]:
    """The SQL catalog's iceberg_tables rows (pyiceberg/JdbcCatalog layout)."""
    import sqlite3

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return sorted(con.execute("SELECT * FROM iceberg_tables").fetchall())
    finally:
        con.close()


def read_avro_records(location: str) -> list[dict]:
    import fastavro

    with open(local_path(location), "rb") as f:
        return list(fastavro.reader(f))


def manifest_entries(metadata: dict, snapshot_id: int | None = None, live: bool = True) -> list[dict]:
    """The manifest entries of a snapshot (default: the current one), read with fastavro straight
    from the manifest list and manifests the metadata names. Each entry is the Avro record with
    "manifest_content" (0 data, 1 deletes) added; with `live`, DELETED entries (status 2) are left out."""
    if snapshot_id is None:
        snapshot_id = metadata["current-snapshot-id"]
    [snapshot] = [s for s in metadata["snapshots"] if s["snapshot-id"] == snapshot_id]
    out = []
    for manifest in read_avro_records(snapshot["manifest-list"]):
        # v3 row lineage (spec "Row Lineage"): a data file with a null first_row_id gets the manifest's
        # first_row_id plus the record counts of the null-id data files before it in the manifest.
        next_row_id = manifest.get("first_row_id")
        for entry in read_avro_records(manifest["manifest_path"]):
            data_file = entry["data_file"]
            if next_row_id is not None and data_file["content"] == 0 and data_file.get("first_row_id") is None:
                data_file["first_row_id"] = next_row_id
                next_row_id += data_file["record_count"]
            if live and entry["status"] == 2:
                continue
            entry["manifest_content"] = manifest.get("content", 0)
            # Inheritance (spec "Manifest Entry Fields"): null snapshot ids come from the manifest's
            # added_snapshot_id, null sequence numbers of ADDED entries from its sequence number.
            if entry.get("snapshot_id") is None:
                entry["snapshot_id"] = manifest["added_snapshot_id"]
            if entry.get("sequence_number") is None and entry["status"] == 1:
                entry["sequence_number"] = manifest.get("sequence_number")
            out.append(entry)
    return out


def data_file_column(location: str, column: str) -> list:
    """One column of a data file, in file order (positions), read with pyarrow."""
    import pyarrow.parquet as pq

    return pq.read_table(local_path(location), columns=[column])[column].to_pylist()
