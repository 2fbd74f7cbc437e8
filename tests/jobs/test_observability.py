"""What a running job tells its operator: log lines that say what happened (as JSON fields with
--log-format json, fatal errors included), the terminal progress line, Ctrl-C (first: stop after this
run; second: stop now), a scheduled job that rides out a source outage, and object-store calls that
give up in a stated time with a clear message instead of hanging.

The outage is made by a TCP proxy in front of moto_server (S3) that the test switches off and on; the
Delta table on S3 is written by deltalake locally and uploaded with boto3; the target is read back
with pyiceberg. Every wait is on a condition with a generous deadline, never a sleep."""
from __future__ import annotations

import json
import os
import pty
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from job_support import LAKESYNC, rows

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
import oracles as O  # noqa: E402


def wait_for(condition, what, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


class StreamCollector:
    """Reads a pipe on a thread so the test can wait for a line without blocking the process."""

    def __init__(self, stream):
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream):
        for line in stream:
            self.lines.append(line)

    def has(self, needle: str) -> bool:
        return any(needle in line for line in list(self.lines))

    def text(self) -> str:
        return "".join(self.lines)


def test_json_logs_carry_what_happened_as_fields(env):
    env.delta_create()
    env.delta_change(1)
    job = env.job_from_example("delta-cdf-to-iceberg-v2.yaml")
    p = env.lakesync("--log-format", "json", "run", job, "--once", "--log-level", "info")  # options after too
    records = [json.loads(line) for line in p.stderr.splitlines() if line.strip()]
    assert all({"time", "level", "logger", "message"} <= r.keys() for r in records)
    runs = [r for r in records if r.get("event") == "run"]
    assert [r["status"] for r in runs] == ["committed", "committed"], records
    changes = runs[-1]
    assert (changes["from"], changes["through"]) == (1, 2) and changes["target"] == "shop.orders_v2"
    assert changes["inserted"] >= 0 and changes["deleted"] > 0 and changes["snapshot_id"]
    summary = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")][-1]
    assert (changes["rows"], changes["inserted"], changes["updated"], changes["deleted"]) == (
        summary["rows"]["total"], summary["rows"]["insert"], summary["rows"]["update_after"], summary["rows"]["delete"])
    assert changes["snapshot_id"] == summary["snapshot_id"]
    assert "duration_seconds" in changes and changes["sink_id"]
    assert "deleted" in changes["message"] and "positions 1..2" in changes["message"]
    start = [r for r in records if r.get("event") == "start"]
    assert start and start[0]["sink_id"] == changes["sink_id"] and start[0]["warehouse"].endswith(str(env.warehouse))

    # A fatal error is a JSON line too, with its exit code.
    p = env.lakesync("--log-format", "json", "run", env.root / "missing.yaml", check=False)
    assert p.returncode == 2
    fatal = json.loads(p.stderr.strip().splitlines()[-1])
    assert fatal["level"] == "error" and fatal["event"] == "fatal" and fatal["exit_code"] == 2


def test_polls_that_find_nothing_are_logged_at_debug_only(env):
    # A schedule (or a stream) polls again and again; a poll that finds nothing is not news: it is a
    # debug line, never an info line nor a summary on standard output.
    env.delta_create()
    job = env.job_from_example("delta-cdf-to-iceberg-v2.yaml")
    proc = env.popen("--log-format", "json", "--log-level", "debug", "run", job, "--every", "1s")
    out = StreamCollector(proc.stdout)
    err = StreamCollector(proc.stderr)

    def runs():
        records = [json.loads(x) for x in list(err.lines) if x.startswith("{")]
        return [r for r in records if r.get("event") == "run"]

    try:
        wait_for(lambda: sum(r["status"] == "nothing-new" for r in runs()) >= 3, "three polls that find nothing")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    assert proc.returncode == 0, err.text()
    assert [r["level"] for r in runs() if r["status"] == "committed"] and all(
        r["level"] == "info" for r in runs() if r["status"] == "committed"), runs()
    assert all(r["level"] == "debug" for r in runs() if r["status"] == "nothing-new"), runs()
    statuses = [json.loads(x)["status"] for x in out.lines if x.startswith("{")]
    assert statuses and "nothing-new" not in statuses, statuses


def test_the_progress_line_counts_the_rows_read(env):
    env.delta_create()
    env.delta_change(2)
    job = env.job_from_example("delta-cdf-to-iceberg-v2.yaml")
    # Standard error on a terminal (a pseudo-terminal) draws the progress line.
    main, secondary = pty.openpty()
    proc = subprocess.Popen([str(LAKESYNC), "run", str(job), "--once"], cwd=env.root, env=env.env,
                            stdout=subprocess.PIPE, stderr=secondary, text=True)
    os.close(secondary)
    out = b""
    while True:
        ready, _, _ = select.select([main], [], [], 120)
        if not ready:
            break
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the process closed the terminal
            break
        if not chunk:
            break
        out += chunk
    stdout, _ = proc.communicate(timeout=60)
    os.close(main)
    assert proc.returncode == 0
    summaries = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    # Each run's line ends (before its newline) with the final count of rows read.
    finals = [seg.rstrip("\r").split("\r")[-1] for seg in out.decode().split("\n") if "rows read" in seg]
    counts = [int(line.split("rows read")[1].split()[0]) for line in finals]
    assert counts == [s["rows"]["total"] for s in summaries], (finals, summaries)


def test_first_ctrl_c_stops_after_the_run_second_stops_now(env):
    env.delta_create()
    job = env.job_from_example("delta-cdf-to-iceberg-v2.yaml")
    proc = env.popen("run", job, "--every", "1h")
    err = StreamCollector(proc.stderr)
    out = StreamCollector(proc.stdout)
    try:
        wait_for(lambda: out.has('"status":"committed"'), "the first run")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
        assert err.has("stopping after this run"), err.text()
    finally:
        if proc.poll() is None:
            proc.kill()

    # A run that cannot finish (its source hangs) stops at the second signal.
    hang = socket.socket()
    hang.bind(("127.0.0.1", 0))
    hang.listen(16)  # accepts connections, never answers
    try:
        port = hang.getsockname()[1]
        stuck = env.root / "stuck.yaml"
        stuck.write_text(yaml.safe_dump({
            "source": {"type": "delta_lake_cdc", "table": "s3://bucket/t", "start_version": 0,
                       "storage_properties": {"s3.endpoint": f"http://127.0.0.1:{port}", "s3.access-key-id": "k",
                                              "s3.secret-access-key": "s", "s3.request-timeout": "600",
                                              "s3.connect-timeout": "600"}},
            "sink": {"table": "shop.stuck", "equality_columns": ["order_id"]}}))
        proc = env.popen("--log-level", "info", "run", stuck)
        err = StreamCollector(proc.stderr)
        wait_for(lambda: hang_has_connection(hang), "the job to reach its source")
        proc.send_signal(signal.SIGINT)
        wait_for(lambda: err.has("stopping after this run"), "the first Ctrl-C to be acknowledged")
        assert proc.poll() is None  # still waiting for the source
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130
        wait_for(lambda: err.has("stopping now"), "the second Ctrl-C message")
    finally:
        if proc.poll() is None:
            proc.kill()
        hang.close()


def hang_has_connection(listener: socket.socket) -> bool:
    listener.setblocking(False)
    try:
        conn, _ = listener.accept()
    except BlockingIOError:
        return False
    hang_has_connection.kept = getattr(hang_has_connection, "kept", []) + [conn]  # keep it open, unanswered
    return True


class SwitchableProxy:
    """A TCP proxy to `target` that can be taken down (new connections are reset) and brought back."""

    def __init__(self, target_port: int):
        self.target_port = target_port
        self.up = True
        self.refused = 0
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.up:
                self.refused += 1
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                client.close()  # a reset, as from a host that is down
                continue
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src, dst):
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self):
        self.listener.close()


def upload(client, bucket: str, local: Path, prefix: str):
    for path in sorted(local.rglob("*")):
        if path.is_file():
            client.upload_file(str(path), bucket, f"{prefix}/{path.relative_to(local)}")


def test_a_scheduled_job_rides_out_a_source_outage(env, tmp_path):
    boto3 = pytest.importorskip("boto3")
    port = O.free_port()
    endpoint = f"http://127.0.0.1:{port}"
    server = O.start_server([O.venv_tool("moto_server"), "-H", "127.0.0.1", "-p", str(port)], endpoint + "/",
                            tmp_path / "moto.log")
    proxy = SwitchableProxy(port)
    proc = None
    try:
        client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="k", aws_secret_access_key="s",
                              region_name="us-east-1")
        client.create_bucket(Bucket="lake")
        env.delta_create()
        upload(client, "lake", env.delta, "orders_delta")
        job = env.root / "s3job.yaml"
        job.write_text(yaml.safe_dump({
            "source": {"type": "delta_lake_cdc", "table": "s3://lake/orders_delta", "start_version": 0,
                       "initial_snapshot": True,
                       "storage_properties": {"s3.endpoint": f"http://127.0.0.1:{proxy.port}",
                                              "s3.access-key-id": "k", "s3.secret-access-key": "s",
                                              "s3.connect-timeout": "1", "s3.request-timeout": "2"}},
            "sink": {"table": "shop.from_s3", "equality_columns": ["order_id"]},
            "retry": {"max_attempts": 2, "initial_backoff_seconds": 0.2}}))
        # Started during an outage: the job waits for its source instead of exiting.
        proxy.up = False
        proc = env.popen("--log-format", "json", "run", job, "--every", "1s")
        out = StreamCollector(proc.stdout)
        err = StreamCollector(proc.stderr)
        wait_for(lambda: err.has('"stage":"open-source"') and proxy.refused > 0, "the job to retry opening its source")
        wait_for(lambda: len([x for x in err.lines if '"stage":"open-source"' in x]) > 2,
                 "more retries than max_attempts (a schedule keeps trying)")
        assert proc.poll() is None, "the job exited during the outage:\n" + err.text()
        proxy.up = True
        wait_for(lambda: out.has('"status":"committed"'), "the import")

        proxy.up = False
        env.delta_change(1)
        upload(client, "lake", env.delta, "orders_delta")
        wait_for(lambda: err.has('"event":"run-failed"'), "a run to fail for the outage and be logged")
        assert err.has('"event":"retry"'), err.text()
        assert proc.poll() is None, "the job exited during the outage:\n" + err.text()

        proxy.up = True
        wait_for(lambda: env_rows(env) == env.delta_rows(), "the job to catch up after the outage")
    finally:
        if proc:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        proxy.close()
        O.stop_server(server)
    assert proc.returncode == 0


def env_rows(env):
    from pyiceberg.exceptions import NoSuchTableError

    try:
        return env.iceberg_rows("shop.from_s3")
    except NoSuchTableError:  # not created yet; any other error fails the test at once
        return None


def test_an_unreachable_object_store_fails_in_a_stated_time_with_a_clear_message(env):
    # A gs:// table behind an endpoint that refuses connections: the SDK retries for
    # gcs.retry-limit-seconds, then the command fails saying what to check (not a hang).
    closed = O.free_port()
    config = env.root / "gcs.yaml"
    config.write_text(yaml.safe_dump({"catalog_name": "x", "catalog_properties": {
        "type": "hadoop", "warehouse": str(env.root / "wh"), "gcs.endpoint": f"http://127.0.0.1:{closed}",
        "gcs.no-auth": "true", "gcs.retry-limit-seconds": "2"}}))
    p = env.lakesync("scan", "--delta", "gs://bucket/orders", "--catalog-config", config, check=False, timeout=120)
    assert p.returncode != 0
    assert "gcs.retry-limit-seconds" in p.stderr and "gs://bucket/orders" in p.stderr, p.stderr


def test_metrics_listen_serves_prometheus_metrics(env):
    requests = pytest.importorskip("requests")
    parser = pytest.importorskip("prometheus_client.parser")
    env.delta_create()
    env.delta_change(1)
    job = env.job_from_example("delta-cdf-to-iceberg-v2.yaml")
    proc = env.popen("run", job, "--every", "1h", "--metrics-listen", "127.0.0.1:0")
    out = StreamCollector(proc.stdout)
    err = StreamCollector(proc.stderr)
    try:
        wait_for(lambda: err.has("Prometheus metrics at http://"), "the metrics address")
        line = next(x for x in err.lines if "Prometheus metrics at http://" in x)
        url = line[line.index("http://"):].split()[0]
        wait_for(lambda: len([x for x in out.lines if x.startswith("{")]) == 2, "the import and the changes")
        summaries = [json.loads(x) for x in out.lines if x.startswith("{")]

        def scrape():
            families = {f.name: f for f in parser.text_string_to_metric_families(requests.get(url, timeout=10).text)}
            return {(s.name, s.labels.get("status") or s.labels.get("kind") or ""): s.value
                    for f in families.values() for s in f.samples}

        # Positions are taken when a run has ended: wait for the gauges of this one.
        wait_for(lambda: scrape().get(("lakesync_job_running", "")) == 0
                 and scrape().get(("lakesync_job_lag_commits", "")) == 0, "the end of the first run")
        m = scrape()
        assert m[("lakesync_job_runs_total", "committed")] == 2
        assert m[("lakesync_job_commits_total", "")] == 2
        for kind in ("insert", "update_before", "update_after", "delete"):
            assert m[("lakesync_job_change_rows_total", kind)] == sum(s["rows"][kind] for s in summaries), kind
        assert m[("lakesync_job_committed_position", "")] == summaries[-1]["range"]["through"]
        assert m[("lakesync_job_lag_seconds", "")] == 0
        assert m[("lakesync_job_run_duration_seconds_count", "")] == 2
        assert m[("lakesync_job_errors_total", "none")] == 0
        samples = parser.text_string_to_metric_families(requests.get(url, timeout=10).text)
        labels = next(iter(next(samples).samples)).labels
        assert labels["job"] == "orders-delta-to-iceberg" and labels["sink_id"] == summaries[-1]["sink_id"]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    assert proc.returncode == 0
