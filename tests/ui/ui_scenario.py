"""The dashboard tests' scenario and server (conftest.py makes them fixtures): one scenario (a Delta table kept in sync by a job that has
made several commits, plus a v2 table with position deletes written by `lakesync table` commands) and
a running `lakesync ui` over it.

The scenario and the server are made once for the whole suite (both test modules) to keep its CI cost
small; the tests only read them."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path


HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

# The job tests' scratch environment (lakesync, the deltalake writer, pyiceberg): one definition.
# Its conftest imports job_support from its own folder, which pytest puts on sys.path only when it
# collects tests/jobs too: without this, `pytest tests/ui` alone failed to import.
if str(REPO / "tests" / "jobs") not in sys.path:
    sys.path.insert(0, str(REPO / "tests" / "jobs"))
_spec = importlib.util.spec_from_file_location("lakesync_jobs_conftest", REPO / "tests" / "jobs" / "conftest.py")
jobs_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(jobs_conftest)
Env = jobs_conftest.Env
LAKESYNC = jobs_conftest.LAKESYNC

JOB_NAME = "delta-cdf-to-iceberg-v3-dv.yaml"
TARGET = "shop.orders_v3"
V2_TABLE = "shop.events_v2"


class Scenario:
    def __init__(self, env: Env, job: Path):
        self.env = env
        self.job = job
        self.summaries: list[dict] = []

    def status(self) -> dict:
        return json.loads(self.env.lakesync("status", self.job).stdout)


def build_scenario(root: Path) -> Scenario:
    env = Env(root)
    env.delta_create()
    jobs_dir = root / "jobs"
    jobs_dir.mkdir()
    job = env.job_from_example(JOB_NAME)
    job = job.rename(jobs_dir / job.name)
    s = Scenario(env, job)
    # Three job commits (the import at version 0, then 1..2, then 3..6), then two more source versions
    # the job has not applied: a lag of 2 versions.
    _, out = env.run_job(job)
    s.summaries += out
    env.delta_change()
    _, out = env.run_job(job)
    s.summaries += out
    env.delta_change(times=2)
    _, out = env.run_job(job)
    s.summaries += out
    env.delta_change()
    # A v2 table written by `lakesync table` commands: appends and a delete (position delete files).
    schema = root / "events.yaml"
    schema.write_text("fields:\n  - {name: id, type: long, required: true}\n  - {name: kind, type: string}\n"
                      "identifier-fields: [id]\n")
    env.lakesync("table", "create", V2_TABLE, "--schema", schema, "--partition", "kind", "--format-version", "2")
    for start in (0, 100, 200):
        rows = root / f"events-{start}.jsonl"
        rows.write_text("".join(json.dumps({"id": start + i, "kind": "a" if i % 3 else "b"}) + "\n"
                                for i in range(30)))
        env.lakesync("table", "append", V2_TABLE, rows)
    env.lakesync("table", "delete", V2_TABLE, "--where", "id < 10")
    return s


class UiServer:
    """`lakesync ui` on a free loopback port (port 0), stopped with SIGTERM at the end."""

    def __init__(self, env: Env, *args: str):
        self.proc = subprocess.Popen([str(LAKESYNC), "--log-level", "info", "ui", "--listen", "127.0.0.1:0", *args],
                                     cwd=env.root, env=env.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"(http://\S+?)/?$", line.strip())
        if not m:
            self.proc.kill()
            raise AssertionError(f"lakesync ui did not print its URL: {line!r} {self.proc.stderr.read()}")
        self.url = m.group(1)

    def request(self, path: str, method: str = "GET", token: str | None = None, body: bytes | None = None):
        req = urllib.request.Request(self.url + path, method=method, data=body)
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, timeout=120) as res:
                return res.status, dict(res.headers), res.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def get_json(self, path: str, token: str | None = None):
        status, _, body = self.request(path, token=token)
        assert status == 200, (path, status, body[:2000])
        return json.loads(body)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.proc.returncode


