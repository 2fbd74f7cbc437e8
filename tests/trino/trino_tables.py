"""Shared pieces of the Trino oracle suite (not a test module): one lakesync warehouse served over
the Iceberg REST protocol by `lakesync catalog serve`, which Trino (an Iceberg catalog of type rest)
and pyiceberg (RestCatalog) open, and the readers that turn each side's rows into oracles.py's
canonical form.

lakesync's own commands (`table create/append/delete`, `scan`, `changes`, `run`) use the SQL catalog
on SQLite directly, as a job does on the machine that owns the catalog; the server in front of the
same file is how other engines reach it.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import oracles as O
import trino_runner as TR
from catalog_server import CatalogServer
from generated_rows import COLUMNS, canonical  # noqa: F401

_CATALOG_NUMBERS = itertools.count(1)


def trino_type(t) -> str:
    """The Trino type of an Iceberg type (fixed has none: Trino reads it as varbinary)."""
    if isinstance(t, dict):
        if t["type"] == "struct":
            return "ROW(" + ", ".join(f'"{f["name"]}" {trino_type(f["type"])}' for f in t["fields"]) + ")"
        if t["type"] == "list":
            return f"ARRAY({trino_type(t['element'])})"
        return f"MAP({trino_type(t['key'])}, {trino_type(t['value'])})"
    if t.startswith("decimal"):
        return "DECIMAL(%d, %d)" % O.decimal_scale(t)
    return {"boolean": "BOOLEAN", "int": "INTEGER", "long": "BIGINT", "float": "REAL", "double": "DOUBLE",
            "date": "DATE", "time": "TIME(6)", "timestamp": "TIMESTAMP(6)",
            "timestamptz": "TIMESTAMP(6) WITH TIME ZONE", "string": "VARCHAR", "uuid": "UUID",
            "binary": "VARBINARY"}[t]


def trino_ddl(columns: list[dict]) -> str:
    return ", ".join(f'"{c["name"]}" {trino_type(c["type"])}' + (" NOT NULL" if c["required"] else "")
                     for c in columns)


def select_list(columns: list[dict]) -> str:
    return ", ".join(f'"{c["name"]}"' for c in columns)


class Lake:
    """A lakesync SQL catalog in `workdir`, served by `lakesync catalog serve` on loopback, and the
    Trino catalog over that server (named `self.name`). `close()` drops the Trino catalog and stops
    the server."""

    def __init__(self, workdir: Path, trino: TR.TrinoServer):
        self.workdir = Path(workdir)
        self.trino = trino
        self.name = f"ls_{next(_CATALOG_NUMBERS)}"
        self.warehouse = self.workdir / "wh"
        self.warehouse.mkdir(parents=True, exist_ok=True)
        self.catalog_props = {"type": "sql", "uri": f"sqlite:///{self.warehouse / 'catalog.db'}",
                              "warehouse": f"file://{self.warehouse}"}
        self.catalog_config = O.write_yaml(self.workdir / "catalog.yaml",
                                           {"catalog_name": "lakesync", "catalog_properties": self.catalog_props})
        self.cli = O.Cli(self.workdir, catalog_config=self.catalog_config)
        self.cli.ok("namespace", "create", "db", "--if-not-exists")
        self.server = CatalogServer(self.workdir, self.catalog_config, env=self.cli.env)
        self.url = self.server.url
        # Trino's native local file system, rooted at /, reads and writes the file:// locations.
        try:
            trino.query(f"CREATE CATALOG {self.name} USING iceberg WITH ("
                        f"\"iceberg.catalog.type\" = 'rest', \"iceberg.rest-catalog.uri\" = '{self.url}', "
                        "\"fs.native-local.enabled\" = 'true', \"local.location\" = '/')")
        except BaseException:
            self.server.stop()
            raise
        self._reads = itertools.count()

    def close(self) -> None:
        try:
            if self.trino.proc.poll() is None:
                self.trino.query(f"DROP CATALOG IF EXISTS {self.name}")
        finally:
            self.server.stop()

    # ---- naming ----
    def table(self, name: str) -> str:
        """Trino's name of lakesync's NS.T."""
        ns, t = name.split(".")
        return f'{self.name}."{ns}"."{t}"'

    def sql(self, statement: str) -> list[list]:
        return self.trino.query(statement)

    # ---- readers, each giving canonical rows ----
    def trino_rows(self, name: str, columns: list[dict], *, snapshot_id: int | None = None,
                   where: str | None = None) -> list[tuple]:
        query = f"SELECT {select_list(columns)} FROM {self.table(name)}"
        if snapshot_id is not None:
            query += f" FOR VERSION AS OF {snapshot_id}"
        if where:
            query += f" WHERE {where}"
        return O.normalise_rows(self.trino.query(query), columns, "python")

    def lakesync_rows(self, name: str, columns: list[dict], *extra) -> list[tuple]:
        return O.normalise_rows(self.cli.scan_jsonl(name, *extra), columns, "jsonl")

    def pyiceberg_table(self, name: str):
        from pyiceberg.catalog.rest import RestCatalog

        return RestCatalog("lakesync", uri=self.url).load_table(name)

    def pyiceberg_rows(self, name: str, columns: list[dict], *, snapshot_id: int | None = None) -> list[tuple]:
        scan = self.pyiceberg_table(name).scan(snapshot_id=snapshot_id)
        return O.arrow_rows(scan.to_arrow(), columns)

    # ---- metadata ----
    def summary(self, name: str) -> dict:
        return self.cli.current_snapshot(name)["summary"]

    def snapshot_id(self, name: str) -> int:
        return self.cli.current_snapshot(name)["snapshot-id"]

    def changes(self, name: str, *extra) -> list[dict]:
        out = self.cli.ok("changes", "--source", "iceberg", "--table", name, "--format", "jsonl", *extra)
        return [json.loads(line) for line in out.splitlines()]

    def job(self, path: Path, *extra) -> list[dict]:
        """Runs `lakesync run JOB --once`; returns its JSON summary lines."""
        out = self.cli.ok("run", path, "--once", *extra, config=False, timeout=600)
        return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def delete_kind_counts(summary: dict) -> tuple[int, int, int]:
    """(added DVs, added position delete files, added equality delete files) of a snapshot."""
    return (int(summary.get("added-dvs", 0)), int(summary.get("added-position-delete-files", 0)),
            int(summary.get("added-equality-delete-files", 0)))
