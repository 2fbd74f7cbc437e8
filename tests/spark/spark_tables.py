"""Shared pieces of the Spark oracle suite (not a test module): the column set Spark can read, the
row generator, the Spark DDL for it, one lakesync catalog that Spark's Iceberg catalogs also open,
and the readers that turn each side's rows into oracles.py's canonical form.

Row normalisation is defined once, in tests/interop/oracles.py: lakesync's `scan --format jsonl`
goes through its JSON Lines decoder (which checks the docs/cli.md contract), Spark's rows come back
as Parquet written by Spark and go through its Arrow normaliser.
"""

from __future__ import annotations

import datetime as dt
import decimal
import itertools
import math
import random
import signal
import subprocess
import uuid
from pathlib import Path

import oracles as O
import spark_runner as SR

# Spark 4.0 has no time type and Iceberg's Spark runtime refuses `time` columns, so the column set is
# that of tests/interop without `tm`; uuid and fixed exist only in tables lakesync creates (Spark's
# DDL cannot declare them; Spark reads them as string and binary).
INNER = {"type": "struct", "fields": [
    {"name": "x", "type": "double", "required": False},
    {"name": "d", "type": "date", "required": False}]}
STRUCT = {"type": "struct", "fields": [
    {"name": "a", "type": "int", "required": False},
    {"name": "b", "type": "string", "required": False},
    {"name": "inner", "type": INNER, "required": False}]}
KV = {"type": "struct", "fields": [{"name": "k", "type": "string", "required": False},
                                   {"name": "v", "type": "long", "required": False}]}

COLUMNS = [
    {"name": "id", "type": "long", "required": True},
    {"name": "b", "type": "boolean"},
    {"name": "i", "type": "int"},
    {"name": "l", "type": "long"},
    {"name": "f", "type": "float"},
    {"name": "d", "type": "double"},
    {"name": "dec9", "type": "decimal(9, 2)"},
    {"name": "dec38", "type": "decimal(38, 10)"},
    {"name": "dt", "type": "date"},
    {"name": "ts", "type": "timestamp"},
    {"name": "tstz", "type": "timestamptz"},
    {"name": "s", "type": "string"},
    {"name": "cat", "type": "string"},
    {"name": "u", "type": "uuid"},
    {"name": "fx", "type": "fixed[8]"},
    {"name": "bin", "type": "binary"},
    {"name": "st", "type": STRUCT},
    {"name": "li", "type": {"type": "list", "element": "int", "element-required": False}},
    {"name": "ls", "type": {"type": "list", "element": KV, "element-required": False}},
    {"name": "mp", "type": {"type": "map", "key": "string", "value": "long", "value-required": False}},
]
for _c in COLUMNS:
    _c.setdefault("required", False)
SPARK_COLUMNS = [c for c in COLUMNS if c["name"] not in ("u", "fx")]
INDEX = {c["name"]: k for k, c in enumerate(COLUMNS)}

MICROS_PER_HOUR = 3_600_000_000
MICROS_PER_DAY = 24 * MICROS_PER_HOUR


def _micros(text: str) -> int:
    return (dt.datetime.fromisoformat(text) - O.EPOCH) // dt.timedelta(microseconds=1)


# Small pools so that identity/truncate/day partitionings make a handful of partitions, with values
# on both sides of the epoch (negative day ordinals) and of a leap day.
DATE_POOL = [dt.date(1969, 12, 31), dt.date(1970, 1, 1), dt.date(1999, 12, 31), dt.date(2024, 2, 29)]
DAY_POOL = [_micros(t) for t in ("1969-12-31T00:00:00", "1970-01-02T00:00:00", "2000-01-01T00:00:00",
                                 "2024-02-29T00:00:00")]
CATEGORIES = ["", "ab", "abc", "abd", "日本語", "日本", "zz", "ünï"]
TEXT_CHARS = "abcxyz é日本🙂\t\"\\'"


def _decimal(r: random.Random, precision: int, scale: int) -> decimal.Decimal:
    bound = 10 ** precision - 1
    n = r.choice([bound, -bound, 0]) if r.random() < 0.05 else r.randint(-bound, bound)
    return decimal.Decimal(n).scaleb(-scale, context=decimal.Context(prec=100))


def generate_rows(n: int, seed: int, first_id: int = 0, ids: list[int] | None = None) -> list[tuple]:
    """Canonical rows (oracles.py) for COLUMNS, ids first_id.. (or `ids`); ~10% nulls per column."""
    r = random.Random(seed)

    def maybe(make, p: float = 0.1):
        return None if r.random() < p else make()

    def double():
        if r.random() < 0.08:
            return r.choice([O.NAN, math.inf, -math.inf, 0.0, 5e-324, 1.7976931348623157e308])
        return r.uniform(-1e3, 1e3)

    def single():
        if r.random() < 0.08:
            return r.choice([O.NAN, math.inf, -math.inf, 0.0])
        return O._f32(r.uniform(-1e6, 1e6))

    def text(k: int = 8) -> str:
        return "".join(r.choice(TEXT_CHARS) for _ in range(r.randint(0, k)))

    out = []
    for k in range(n):
        inner = maybe(lambda: (maybe(double), maybe(lambda: r.choice(DATE_POOL))))
        out.append((
            ids[k] if ids is not None else first_id + k,
            maybe(lambda: r.random() < 0.5),
            maybe(lambda: r.randint(-500, 500)),
            maybe(lambda: r.choice([r.randint(-2**63, 2**63 - 1), -2**63, 2**63 - 1, 0])),
            maybe(single),
            maybe(double),
            maybe(lambda: _decimal(r, 9, 2)),
            maybe(lambda: _decimal(r, 38, 10)),
            maybe(lambda: r.choice(DATE_POOL) + dt.timedelta(days=r.randint(0, 2))),
            maybe(lambda: r.choice(DAY_POOL) + r.randrange(2 * MICROS_PER_DAY)),
            maybe(lambda: r.choice(DAY_POOL) + r.randrange(MICROS_PER_DAY)),
            maybe(text),
            maybe(lambda: r.choice(CATEGORIES)),
            maybe(lambda: uuid.UUID(int=r.getrandbits(128))),
            maybe(lambda: r.randbytes(8)),
            maybe(lambda: r.randbytes(r.randint(0, 12))),
            maybe(lambda: (maybe(lambda: r.randint(-9, 9)), maybe(text), inner)),
            maybe(lambda: tuple(maybe(lambda: r.randint(-2**31, 2**31 - 1)) for _ in range(r.randint(0, 4)))),
            maybe(lambda: tuple(maybe(lambda: (maybe(text), maybe(lambda: r.randint(-99, 99))))
                                for _ in range(r.randint(0, 3)))),
            maybe(lambda: tuple(sorted({text(3): maybe(lambda: r.randint(-5, 5))
                                        for _ in range(r.randint(0, 3))}.items()))),
        ))
    return out


def col(row: tuple, name: str):
    return row[INDEX[name]]


def project(rows: list[tuple], columns: list[dict]) -> list[tuple]:
    """Rows of COLUMNS cut down to `columns` (a subset, in COLUMNS order)."""
    keep = [INDEX[c["name"]] for c in columns]
    return [tuple(r[k] for k in keep) for r in rows]


def with_values(row: tuple, **values) -> tuple:
    out = list(row)
    for name, v in values.items():
        out[INDEX[name]] = v
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# Spark DDL


def spark_type(t) -> str:
    if isinstance(t, dict):
        if t["type"] == "struct":
            return "STRUCT<" + ", ".join(f"`{f['name']}`: {spark_type(f['type'])}" for f in t["fields"]) + ">"
        if t["type"] == "list":
            return f"ARRAY<{spark_type(t['element'])}>"
        return f"MAP<{spark_type(t['key'])}, {spark_type(t['value'])}>"
    if t.startswith("decimal"):
        return "DECIMAL(%d, %d)" % O.decimal_scale(t)
    return {"boolean": "BOOLEAN", "int": "INT", "long": "BIGINT", "float": "FLOAT", "double": "DOUBLE",
            "date": "DATE", "timestamp": "TIMESTAMP_NTZ", "timestamptz": "TIMESTAMP", "string": "STRING",
            "binary": "BINARY"}[t]


def spark_ddl(columns: list[dict]) -> str:
    return ", ".join(f"`{c['name']}` {spark_type(c['type'])}" + (" NOT NULL" if c["required"] else "")
                     for c in columns)


def select_list(columns: list[dict]) -> str:
    return ", ".join(f"`{c['name']}`" for c in columns)


# ---------------------------------------------------------------------------------------------
# One catalog that both lakesync and Spark open

_CATALOG_NUMBERS = itertools.count(1)
# Every Lake of the running test; conftest.py closes them (stopping REST servers) after each test.
OPEN_LAKES: list["Lake"] = []


class CatalogServer:
    """`lakesync catalog serve` over the catalog a config file names, on 127.0.0.1 with a port the
    OS chooses (the server prints its URL once it listens)."""

    def __init__(self, workdir: Path, catalog_config: Path):
        self.log_path = Path(workdir) / "catalog-serve.log"
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [str(O.LAKESYNC), "--log-level", "info", "catalog", "serve", "--catalog-config", str(catalog_config),
             "--listen", "127.0.0.1:0"],
            cwd=workdir, stdout=subprocess.PIPE, stderr=self._log, stdin=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait(timeout=30)
            raise RuntimeError(f"lakesync catalog serve exited {self.proc.returncode}: {self.log_path.read_text()}")
        self.url = line.strip().rsplit(" ", 1)[-1]
        assert self.url.startswith("http://127.0.0.1:"), line

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=60)
        self._log.close()
        assert self.proc.returncode == 0, f"catalog serve exited {self.proc.returncode}: {self.log_path.read_text()}"


class Lake:
    """A warehouse in `workdir` shared by lakesync (`--catalog-config`) and Spark (an Iceberg catalog
    of the same name registered in the running session).

    kind "sql": lakesync's SQL catalog on SQLite, opened by Spark with Iceberg's JdbcCatalog and the
    SQLite JDBC driver (the strongest form: the same catalog rows, the same commit protocol).
    kind "hadoop": the filesystem catalog (Iceberg's HadoopCatalog layout) on both sides.
    kind "rest": lakesync's SQL catalog served by `lakesync catalog serve` on loopback; Spark opens it
    with Iceberg's RESTCatalog and lakesync's CLI with its own REST client (`type: rest`), so every
    read and commit of both sides crosses the REST protocol. `close()` stops the server."""

    def __init__(self, workdir: Path, spark: SR.SparkProcess, kind: str = "sql"):
        self.workdir = Path(workdir)
        self.server: CatalogServer | None = None
        OPEN_LAKES.append(self)
        self.spark = spark
        self.kind = kind
        # Catalog names stay registered in the Spark session, so every Lake gets its own.
        self.name = f"ls_{kind}_{next(_CATALOG_NUMBERS)}"
        warehouse = self.workdir / "wh"
        warehouse.mkdir(parents=True, exist_ok=True)
        self.warehouse = warehouse
        if kind == "sql":
            db = warehouse / "catalog.db"
            props = {"type": "sql", "uri": f"sqlite:///{db}", "warehouse": f"file://{warehouse}"}
            spark_props = {"type": "jdbc", "uri": f"jdbc:sqlite:{db}", "warehouse": f"file://{warehouse}",
                           "jdbc.schema-version": "V1"}
        elif kind == "rest":
            db = warehouse / "catalog.db"
            served = O.write_yaml(self.workdir / "served-catalog.yaml", {"catalog_name": self.name,
                "catalog_properties": {"type": "sql", "uri": f"sqlite:///{db}", "warehouse": f"file://{warehouse}"}})
            self.server = CatalogServer(self.workdir, served)
            props = {"type": "rest", "uri": self.server.url}
            spark_props = {"type": "rest", "uri": self.server.url}
        else:
            props = {"type": "hadoop", "warehouse": f"file://{warehouse}"}
            spark_props = {"type": "hadoop", "warehouse": f"file://{warehouse}"}
        # Spark must see every commit lakesync makes between two queries.
        spark_props["cache-enabled"] = "false"
        config = O.write_yaml(self.workdir / "catalog.yaml", {"catalog_name": self.name,
                                                             "catalog_properties": props})
        self.cli = O.Cli(self.workdir, catalog_config=config)
        # lakesync creates the SQLite file (pyiceberg's layout) before Spark first touches it.
        self.cli.ok("namespace", "create", "db", "--if-not-exists")
        spark.run("add_iceberg_catalog(spark, args['name'], args['props'])", name=self.name, props=spark_props)
        self._reads = itertools.count()

    def close(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

    def table(self, name: str) -> str:
        """The Spark name of lakesync's NS.T."""
        return f"{self.name}.{name}"

    def sql(self, *statements: str) -> list[dict]:
        return self.spark.sql(*statements)

    def spark_rows(self, name: str, columns: list[dict], *, snapshot_id: int | None = None,
                   where: str | None = None) -> list[tuple]:
        """Canonical rows of the table as Spark reads it."""
        query = f"SELECT {select_list(columns)} FROM {self.table(name)}"
        if snapshot_id is not None:
            query += f" VERSION AS OF {snapshot_id}"
        if where:
            query += f" WHERE {where}"
        out = self.workdir / f"spark-read-{next(self._reads)}"
        self.spark.query_to_parquet(query, out)
        return O.arrow_rows(SR.read_parquet_dir(out), columns)

    def lakesync_rows(self, name: str, columns: list[dict], *extra) -> list[tuple]:
        return O.normalise_rows(self.cli.scan_jsonl(name, *extra), columns, "jsonl")

    def summary(self, name: str) -> dict:
        return self.cli.current_snapshot(name)["summary"]


def canonical(rows: list[tuple], columns: list[dict]) -> list[tuple]:
    return O.normalise_rows(rows, columns, "python")
