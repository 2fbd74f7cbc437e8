"""Fixtures for the Delta Sharing suites (helpers in sharing_env.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from sharing_env import LAKESYNC, Server


@pytest.fixture
def serve(tmp_path):
    """serve(config) starts a server for the test and stops it afterwards."""
    if not LAKESYNC.exists():
        pytest.fail(f"{LAKESYNC} is missing: build first")
    servers = []

    def start(config: dict, root: Path | None = None) -> Server:
        root = root or tmp_path
        root.mkdir(parents=True, exist_ok=True)
        s = Server(root, config)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.stop()


