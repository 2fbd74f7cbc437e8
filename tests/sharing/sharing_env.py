"""Helpers of the Delta Sharing suites (a module with its own name, so that test files never import a
`conftest` that another suite's directory may shadow): `lakesync share serve` on loopback (port 0),
shares.yaml and profile files, and a condition wait. Not a test module."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
# delta_oracles and delta_tables: the Delta suites' helpers. Appended, never put first: an early
# entry would let tests/delta modules shadow same-named modules of other suites.
if str(HERE.parent / "delta") not in sys.path:
    sys.path.append(str(HERE.parent / "delta"))

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
