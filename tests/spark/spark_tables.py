"""Shared pieces of the Spark oracle suite (not a test module): the column set Spark can read (that of
tests/interop/generated_rows.py without uuid and fixed), the Spark DDL for it, one lakesync catalog
that Spark's Iceberg catalogs also open, and the readers that turn each side's rows into oracles.py's
canonical form.

Row normalisation is defined once, in tests/interop/oracles.py: lakesync's `scan --format jsonl`
goes through its JSON Lines decoder (which checks the docs/cli.md contract), Spark's rows come back
as Parquet written by Spark and go through its Arrow normaliser.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import oracles as O
import spark_runner as SR
from catalog_server import CatalogServer
# The column set, the row generator and the row helpers are shared with the Trino suite.
from generated_rows import COLUMNS, INDEX, canonical, col, generate_rows, project, with_values  # noqa: F401

SPARK_COLUMNS = [c for c in COLUMNS if c["name"] not in ("u", "fx")]


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

