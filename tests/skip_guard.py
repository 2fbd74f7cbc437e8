"""The skip guard: a pytest plugin (registered by tests/conftest.py) that fails the run when a test is
skipped for a reason tests/expected_skips.py does not list, when a listed reason is skipped more often
than its entry allows, or when, under CI (LAKESYNC_CI=1, set by scripts/test.sh), a test is skipped
for an environment reason (a suite that was not set up) at all. It prints the count either way, so the
log says how many skips there were and which entry each came from.

Why: a skip is a test that checked nothing. A blanket `except Exception: pytest.skip(...)` turns a
real failure into a skip, and nothing noticed when their number grew.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

import expected_skips


def _reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        text = str(longrepr[2])
    else:
        text = str(longrepr)
    return text.removeprefix("Skipped: ")


class SkipGuard:
    def __init__(self, ci: bool):
        self.ci = ci
        self.by_entry: Counter[str] = Counter()
        self.problems: list[str] = []
        self.total = 0

    def pytest_runtest_logreport(self, report):
        if not report.skipped or hasattr(report, "wasxfail"):
            return  # xfail/xpass are not skips: strict xfails fail on their own
        self.total += 1
        reason = _reason(report)
        entry = expected_skips.match(reason)
        if entry is None:
            self.problems.append(f"{report.nodeid}: skipped for a reason tests/expected_skips.py does not list: "
                                 f"{reason[:300]}")
            return
        if self.ci and entry.kind == "environment":
            self.problems.append(f"{report.nodeid}: skipped in CI for an environment reason [{entry.key}]: "
                                 f"{reason[:300]}")
        self.by_entry[entry.key] += 1

    def _over(self) -> list[str]:
        out = []
        for key, n in sorted(self.by_entry.items()):
            entry = expected_skips.BY_KEY[key]
            if n > entry.max_count:
                out.append(f"[{key}] skipped {n} tests, more than the {entry.max_count} its entry expects")
        return out

    def violations(self) -> list[str]:
        return self.problems + self._over()

    def pytest_terminal_summary(self, terminalreporter):
        tr = terminalreporter
        expected = sum(e.max_count for e in expected_skips.ENTRIES if e.kind != "environment")
        tr.write_sep("=", "skip guard (tests/expected_skips.py)")
        tr.write_line(f"skip guard: {self.total} skipped, at most {expected} expected (known oracle limitations "
                      f"and generated data); environment skips "
                      f"{'not allowed (CI)' if self.ci else 'allowed outside CI'}")
        for key, n in sorted(self.by_entry.items()):
            entry = expected_skips.BY_KEY[key]
            tr.write_line(f"  [{key}] {n} of at most {entry.max_count} ({entry.kind}: {entry.what})")
        for v in self.violations():
            tr.write_line(f"  UNEXPECTED: {v}", red=True)
        if self.violations():
            tr.write_line(f"skip guard: FAILED ({len(self.violations())} unexpected)", red=True, bold=True)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        if self.violations() and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def register(config) -> None:
    if os.environ.get("LAKESYNC_SKIP_GUARD", "1") == "0":
        return
    config.pluginmanager.register(SkipGuard(ci=os.environ.get("LAKESYNC_CI") == "1"), "lakesync-skip-guard")
