"""Fixtures for the REST catalog tests: `lakesync catalog serve` on loopback (port 0) over a scratch
embedded warehouse, and helpers to reach it."""
from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("LAKESYNC_BUILD_DIR", REPO / "build"))
LAKESYNC = BUILD / "lakesync"


class Server:
    """One `lakesync catalog serve` process; `log_lines()` are its JSON request log lines."""

    def __init__(self, root: Path, auth: dict | None = None, extra: tuple = ()):
        self.root = root
        self.warehouse = root / "warehouse"
        self.env = dict(os.environ, LAKESYNC_WAREHOUSE=str(self.warehouse))
        self.env.pop("LAKESYNC_FAILPOINT", None)
        self.log_path = root / "server.log"
        cmd = [str(LAKESYNC), "--log-level", "info", "--log-format", "json", "catalog", "serve",
               "--listen", "127.0.0.1:0", *extra]
        if auth is not None:
            auth_path = root / "auth.yaml"
            auth_path.write_text(yaml.safe_dump(auth))
            cmd += ["--auth", str(auth_path)]
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(cmd, cwd=root, env=self.env, stdout=subprocess.PIPE, stderr=self.log,
                                     stdin=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()  # printed once listening
        if not line:
            self.proc.wait(timeout=30)
            pytest.fail(f"lakesync catalog serve exited {self.proc.returncode}: {self.log_path.read_text()}")
        self.url = line.strip().rsplit(" ", 1)[-1]
        assert self.url.startswith("http://127.0.0.1:"), line

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=30)
        self.log.close()
        return self.proc.returncode

    def log_lines(self):
        out = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass
        return out

    def config_file(self, name="rest.yaml", **props) -> Path:
        path = self.root / name
        path.write_text(yaml.safe_dump({"catalog_name": "remote",
                                        "catalog_properties": {"type": "rest", "uri": self.url, **props}}))
        return path

    def lakesync(self, *args, check=True, env=None, timeout=300):
        p = subprocess.run([str(LAKESYNC), *map(str, args)], cwd=self.root, env=env or self.env,
                           capture_output=True, text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f"lakesync {' '.join(map(str, args))} exited {p.returncode}:\n{p.stderr}")
        return p


@pytest.fixture
def serve(tmp_path):
    if not LAKESYNC.exists():
        pytest.fail(f"{LAKESYNC} is missing: build first")
    servers = []

    def start(auth=None, extra=(), root=None):
        r = root or tmp_path
        r.mkdir(parents=True, exist_ok=True)
        s = Server(r, auth=auth, extra=extra)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.stop()
