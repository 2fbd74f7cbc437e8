"""Fixtures of the Beam suite: the Beam venv (scripts/setup-beam.sh) and scratch warehouses."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE.parent / "delta"))


@pytest.fixture(scope="session")
def beam():
    from beam_testing import Beam

    return Beam.require()
