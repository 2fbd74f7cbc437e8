"""Fixtures of the Trino oracle suite (tests/trino; run by scripts/test-trino.sh, not by CI).

One Trino server serves the whole session (it takes 20-60 s to start); tests that need it take the
`trino` fixture, which skips with the reason when the server, its Java or the client are absent, or
when the suite is not enabled. Each test gets its own lakesync warehouse, `lakesync catalog serve`
and Trino catalog through the `lake` fixture.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent / "interop"):  # trino_runner, and the shared oracles/normalisation
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import trino_runner  # noqa: E402
import trino_tables  # noqa: E402


@pytest.fixture(scope="session")
def trino(tmp_path_factory):
    reason = trino_runner.missing()
    if reason:
        pytest.skip(f"Trino oracle unavailable: {reason}")
    server = trino_runner.TrinoServer(tmp_path_factory.mktemp("trino"))
    print(f"\nTrino {server.version} started in {server.start_seconds:.1f}s at {server.url} "
          f"(log: {server.log_path})")
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def lake(tmp_path, trino):
    lake = trino_tables.Lake(tmp_path, trino)
    try:
        yield lake
    finally:
        lake.close()
