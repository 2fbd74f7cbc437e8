"""A fault-injecting HTTP proxy for object-store tests: it forwards every request to an S3 or GCS
emulator on loopback and, by a seeded schedule, answers some of them badly instead.

Faults (`FaultPlan.kind`):
  "503"       an HTTP 503 with the store's error body (S3 XML SlowDown, GCS JSON), nothing forwarded;
  "truncate"  the upstream answer with its full Content-Length but only half its body, then a closed
              connection (a connection dropped mid-download);
  "slow"      the upstream answer after `delay_s`;
  "stall"     no answer for `delay_s`, then a closed connection (longer than the client's timeout).
A plan applies to requests whose method is in `methods` and whose path contains `path_contains`,
either to every `every`-th such request or to all of them (`every=1`), optionally only `limit` times.
The proxy counts what it injected so that a test can prove the faults happened.

The proxy never changes a request it forwards (the Host header included, so signatures stay valid).
It listens on 127.0.0.1 with a port the OS picks and stops with stop().
"""

from __future__ import annotations

import http.client
import http.server
import socket
import threading
import time
from dataclasses import dataclass, field


@dataclass
class FaultPlan:
    kind: str = "none"
    every: int = 3
    methods: tuple = ("GET", "PUT", "POST", "HEAD", "DELETE")
    path_contains: str = ""
    delay_s: float = 1.0
    limit: int | None = None


@dataclass
class Stats:
    requests: int = 0
    injected: dict = field(default_factory=dict)


class FaultProxy:
    def __init__(self, upstream_host: str, upstream_port: int, store: str):
        self.upstream = (upstream_host, upstream_port)
        self.store = store  # "s3" | "gcs": the shape of a 503 body
        self.plan = FaultPlan()
        self.stats = Stats()
        self._matched = 0
        self._lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    data = b""
                    while True:
                        size = int(self.rfile.readline().strip().split(b";")[0], 16)
                        if size == 0:
                            self.rfile.readline()
                            return data
                        data += self.rfile.read(size)
                        self.rfile.readline()
                n = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(n) if n else b""

            def _handle(self):
                body = self._body()
                fault = proxy._choose(self.command, self.path)
                if fault == "503":
                    payload = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
                               b'<Message>injected</Message></Error>') if proxy.store == "s3" else (
                        b'{"error": {"code": 503, "message": "injected"}}')
                    self.send_response(503)
                    self.send_header("Content-Type", "application/xml" if proxy.store == "s3" else "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(payload)
                    return
                if fault == "stall":
                    time.sleep(proxy.plan.delay_s)
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection", "transfer-encoding")}
                if body or self.command in ("PUT", "POST"):
                    headers["Content-Length"] = str(len(body))
                conn = http.client.HTTPConnection(*proxy.upstream, timeout=60)
                try:
                    conn.request(self.command, self.path, body=body or None, headers=headers)
                    resp = conn.getresponse()
                    data = resp.read()
                    status, resp_headers = resp.status, resp.getheaders()
                finally:
                    conn.close()
                if fault == "slow":
                    time.sleep(proxy.plan.delay_s)
                self.send_response(status)
                for k, v in resp_headers:
                    if k.lower() not in ("connection", "transfer-encoding", "content-length", "date", "server"):
                        self.send_header(k, v)
                if self.command == "HEAD":
                    # A HEAD answer's length is the object's, not that of the (empty) body.
                    length = dict((k.lower(), v) for k, v in resp_headers).get("content-length", "0")
                    self.send_header("Content-Length", length)
                    self.end_headers()
                    return
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if fault == "truncate" and len(data) > 1:
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = do_PATCH = _handle

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def set_plan(self, plan: FaultPlan) -> None:
        with self._lock:
            self.plan = plan
            self._matched = 0

    def _choose(self, method: str, path: str) -> str | None:
        with self._lock:
            self.stats.requests += 1
            plan = self.plan
            if plan.kind == "none" or method not in plan.methods or plan.path_contains not in path:
                return None
            self._matched += 1
            if self._matched % plan.every != 0:
                return None
            injected = self.stats.injected.get(plan.kind, 0)
            if plan.limit is not None and injected >= plan.limit:
                return None
            self.stats.injected[plan.kind] = injected + 1
            return plan.kind

    def injected(self, kind: str) -> int:
        with self._lock:
            return self.stats.injected.get(kind, 0)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
