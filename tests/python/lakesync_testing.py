"""Helpers shared by the tests/python and tests/beam suites: the Python package as the normal build
makes it (build/python: the extension next to links to the package's sources, put on sys.path here)
and a scratch SQL catalog readable by lakesync (file, dict), the CLI and pyiceberg. Not a test module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("LAKESYNC_BUILD_DIR", REPO / "build"))
PACKAGE = BUILD / "python"
LAKESYNC = BUILD / "lakesync"

if not list((PACKAGE / "lakesync").glob("_core*.so")):
    raise ImportError(f"{PACKAGE}/lakesync/_core*.so is missing: build with -DLAKESYNC_BUILD_PYTHON=ON (the default)")
if str(PACKAGE) not in sys.path:
    sys.path.insert(0, str(PACKAGE))


class Warehouse:
    """A scratch SQL catalog on SQLite: its config for lakesync (file, dict) and pyiceberg."""

    def __init__(self, root: Path):
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        self.config = {
            "catalog_name": "lakesync",
            "catalog_properties": {
                "type": "sql",
                "uri": f"sqlite:///{root / 'catalog.db'}",
                "warehouse": f"file://{root}",
            },
        }
        self.config_file = root / "catalog.yaml"
        self.config_file.write_text(json.dumps(self.config))

    def pyiceberg(self):
        from pyiceberg.catalog.sql import SqlCatalog

        return SqlCatalog("lakesync", uri=f"sqlite:///{self.root / 'catalog.db'}", warehouse=f"file://{self.root}")

    def rows(self, table: str, columns) -> list[tuple]:
        """The table's rows as pyiceberg reads them, sorted, duplicates kept."""
        t = self.pyiceberg().load_table(table).scan().to_arrow()
        return sorted(tuple(r[c] for c in columns) for r in t.select(columns).to_pylist())

    def cli(self, *args, check=True):
        p = subprocess.run([str(LAKESYNC), *map(str, args), "--catalog-config", str(self.config_file)],
                           capture_output=True, text=True, timeout=300)
        if check and p.returncode != 0:
            raise AssertionError(f"lakesync {' '.join(map(str, args))} exited {p.returncode}:\n{p.stderr}")
        return p

    def cli_rows(self, table: str, columns) -> list[tuple]:
        """The table's rows as `lakesync scan` prints them (JSON Lines), sorted."""
        out = self.cli("scan", "--table", table, "--format", "jsonl").stdout
        return sorted(tuple(json.loads(line)[c] for c in columns) for line in out.splitlines() if line)

