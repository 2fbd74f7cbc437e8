"""Plain helpers of the sync-job tests, imported by name (`from job_support import ...`). They live
outside conftest.py because `from conftest import` finds whichever conftest module Python imported
first under that name: another folder's, when several folders are named on one pytest command line."""
from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
BUILD = Path(os.environ.get("LAKESYNC_BUILD_DIR", REPO / "build"))
LAKESYNC = BUILD / "lakesync"

COLUMNS = ["order_id", "customer", "region", "amount"]


def rows(table):
    """The rows as a sorted list, duplicates kept (a duplicate is a bug the tests must see)."""
    return sorted(tuple(r[c] for c in COLUMNS) for r in table.select(COLUMNS).to_pylist())
