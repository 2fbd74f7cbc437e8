"""Fixtures for the Delta Sharing suites: `lakesync share serve` on loopback (port 0) over Delta tables
written by deltalake or taken from the shared corpus, profile files for its recipients, and the
independent readers (the official `delta-sharing` Python client, deltalake) to hold it against."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "delta"))  # delta_oracles: the Delta suites' oracle helpers

REPO = HERE.parents[1]
BUILD = Path(os.environ.get("LAKESYNC_BUILD_DIR", REPO / "build"))
LAKESYNC = BUILD / "lakesync"

TOKEN = "test-token-for-everything"


class Server:
    """One `lakesync share serve` process; stop() ends it with SIGTERM (a graceful stop)."""

    def __init__(self, root: Path, config: dict):
        self.root = root
        self.config_path = root / "shares.yaml"
        self.config_path.write_text(yaml.safe_dump(config))
        self.proc = subprocess.Popen([str(LAKESYNC), "share", "serve", "--config", str(self.config_path),
                                      "--listen", "127.0.0.1:0"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()  # blocks until the server says where it listens, or dies
        if not line.startswith("serving Delta Sharing at "):
            err = self.proc.stderr.read()
            raise AssertionError(f"share serve did not start: {line!r} {err}")
        self.endpoint = line.split(" at ", 1)[1].strip()

    def profile(self, name: str = "profile", token: str = TOKEN, **extra) -> Path:
        path = self.root / f"{name}.share"
        path.write_text(json.dumps({"shareCredentialsVersion": 1, "endpoint": self.endpoint, "bearerToken": token,
                                    **extra}))
        return path

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def shares_config(tables: dict[str, Path], history: bool = True, **extra) -> dict:
    """One share `share1`, schema `default`, a table per entry."""
    config = {
        "version": 1,
        "shares": [{"name": "share1", "schemas": [{"name": "default", "tables": [
            {"name": name, "location": str(path), "historyShared": history} for name, path in tables.items()]}]}],
        "authorization": {"bearerToken": TOKEN},
    }
    config.update(extra)
    return config


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


def wait_for(predicate, timeout: float = 60.0, what: str = "condition"):
    """Polls `predicate` until it is true; fails after a generous deadline (never a fixed sleep)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
