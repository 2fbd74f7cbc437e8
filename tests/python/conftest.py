"""Fixtures of the Python package tests (helpers in lakesync_testing.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture
def warehouse(tmp_path):
    from lakesync_testing import Warehouse

    return Warehouse(tmp_path / "warehouse")
