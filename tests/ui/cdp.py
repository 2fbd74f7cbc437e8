"""A headless Chromium (Debian's `chromium` package) driven through the Chrome DevTools Protocol with
websocket-client: just what the dashboard's browser tests need (open a URL, evaluate JavaScript, wait
for a DOM condition, take a screenshot). No Playwright: its own browser download is not reachable here,
and the protocol is small.

Nothing here waits a fixed time: `wait_for` evaluates a condition in the page until it holds or a
generous deadline passes, and then fails saying which condition and what the page showed.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--no-default-browser-check", "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0", "--window-size=1280,1800",
]


def chromium_binary() -> str | None:
    for name in (os.environ.get("LAKESYNC_CHROMIUM"), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class Browser:
    """One Chromium process with one page, for a whole test module."""

    def __init__(self, binary: str, deadline_s: float = 60):
        import websocket  # websocket-client, pinned in requirements/test.txt

        self.profile = Path(tempfile.mkdtemp(prefix="lakesync-chromium-"))
        # Chromium keeps its singleton socket in a TMPDIR folder (org.chromium.Chromium.*) that a
        # terminated browser leaves behind: inside the profile, close() removes it with the rest.
        (self.profile / "tmp").mkdir()
        self.proc = subprocess.Popen([binary, *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     env=dict(os.environ, TMPDIR=str(self.profile / "tmp")))
        # Chromium writes the port it chose (port 0) into the profile once it listens.
        port_file = self.profile / "DevToolsActivePort"
        end = time.monotonic() + deadline_s
        while not (port_file.exists() and port_file.read_text().strip()):
            if self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited {self.proc.returncode}: {self.proc.stderr.read().decode()[-2000:]}")
            if time.monotonic() > end:
                raise RuntimeError("chromium did not open its DevTools port in time")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        pages = []
        while not pages:
            targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
            pages = [t for t in targets if t.get("type") == "page"]
            if time.monotonic() > end:
                raise RuntimeError("chromium has no page to drive")
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=60, suppress_origin=True)
        self.next_id = 0
        self.console: list[str] = []
        self.call("Page.enable")
        self.call("Runtime.enable")

    def call(self, method: str, **params):
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("method") == "Runtime.exceptionThrown":
                self.console.append(json.dumps(msg["params"]["exceptionDetails"])[:2000])
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, url: str):
        self.call("Page.navigate", url=url)

    def wait_for(self, condition: str, what: str, deadline_s: float = 60):
        """Evaluates `condition` (JavaScript) until it is truthy; fails after `deadline_s` saying `what`."""
        end = time.monotonic() + deadline_s
        while True:
            try:
                value = self.evaluate(condition)
            except RuntimeError:
                value = None  # the page is between documents
            if value:
                return value
            if time.monotonic() > end:
                body = self.evaluate("document.body ? document.body.innerText.slice(0, 2000) : ''")
                raise AssertionError(f"timed out waiting for {what} ({condition}); page shows:\n{body}\n"
                                     f"exceptions: {self.console}")
            time.sleep(0.05)

    def screenshot(self, path: Path):
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))

    def close(self):
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            shutil.rmtree(self.profile, ignore_errors=True)
