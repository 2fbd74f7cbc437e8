"""`lakesync catalog serve` as the heavy oracle suites start it (tests/spark, tests/trino; not a test
module): over the catalog a config file names, on 127.0.0.1 with a port the OS chooses."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import oracles as O


class CatalogServer:
    """One `lakesync catalog serve` process; `url` is where it listens (it prints the URL once it
    does). `stop()` ends it with SIGTERM and checks that it shut down cleanly."""

    def __init__(self, workdir: Path, catalog_config: Path, env: dict[str, str] | None = None):
        self.log_path = Path(workdir) / "catalog-serve.log"
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [str(O.LAKESYNC), "--log-level", "info", "catalog", "serve", "--catalog-config", str(catalog_config),
             "--listen", "127.0.0.1:0"],
            cwd=workdir, stdout=subprocess.PIPE, stderr=self._log, stdin=subprocess.DEVNULL, text=True, env=env)
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait(timeout=30)
            self._log.close()
            raise RuntimeError(f"lakesync catalog serve exited {self.proc.returncode}: {self.log_path.read_text()}")
        self.url = line.strip().rsplit(" ", 1)[-1]
        assert self.url.startswith("http://127.0.0.1:"), line

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        assert self.proc.returncode == 0, f"catalog serve exited {self.proc.returncode}: {self.log_path.read_text()}"
