"""The skip guard (tests/skip_guard.py) fails runs it must fail: each case runs a small pytest session
in a subprocess, with the guard registered as tests/conftest.py registers it, and checks its exit code
and what it printed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]


def session(tmp_path: Path, body: str, ci: bool = False) -> subprocess.CompletedProcess:
    (tmp_path / "conftest.py").write_text(
        f"import sys\nsys.path.insert(0, {str(TESTS)!r})\nimport skip_guard\n\n"
        "def pytest_configure(config):\n    skip_guard.register(config)\n")
    (tmp_path / "test_case.py").write_text("import pytest\nimport expected_skips\n\n" + body)
    env = {k: v for k, v in os.environ.items() if k not in ("LAKESYNC_CI", "LAKESYNC_SKIP_GUARD")}
    if ci:
        env["LAKESYNC_CI"] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_case.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_an_unlisted_skip_fails_the_run(tmp_path):
    done = session(tmp_path, "def test_a():\n    pytest.skip('some reason nobody listed')\n")
    assert done.returncode == 1, done.stdout
    assert "UNEXPECTED" in done.stdout and "skip guard: 1 skipped" in done.stdout, done.stdout
    assert done.stdout.strip().splitlines()[-1].startswith("1 skipped"), "pytest's summary must end the output"


KNOWN = ("def test_duckdb_{n}():\n"
         "    try:\n"
         "        raise RuntimeError({error!r})\n"
         "    except RuntimeError as e:\n"
         "        expected_skips.oracle_limitation('duckdb-timestamptz-ns', e)\n"
         "        raise\n")


def test_a_known_oracle_limitation_is_an_allowed_skip_even_in_ci(tmp_path):
    done = session(tmp_path, KNOWN.format(n=1, error="Unrecognized primitive type: timestamptz_ns"), ci=True)
    assert done.returncode == 0, done.stdout
    assert "[duckdb-timestamptz-ns] 1 of at most 1" in done.stdout, done.stdout


def test_another_error_of_the_same_oracle_fails_the_test(tmp_path):
    done = session(tmp_path, KNOWN.format(n=1, error="Catalog Error: something else"))
    assert done.returncode == 1 and "1 failed" in done.stdout, done.stdout


def test_more_skips_than_an_entry_expects_fail_the_run(tmp_path):
    body = "".join(KNOWN.format(n=n, error="Unrecognized primitive type: timestamptz_ns") + "\n\n" for n in (1, 2))
    done = session(tmp_path, body)
    assert done.returncode == 1, done.stdout
    assert "more than the 1 its entry expects" in done.stdout, done.stdout


@pytest.mark.parametrize("ci", [False, True])
def test_environment_skips_are_refused_in_ci_only(tmp_path, ci):
    done = session(tmp_path, "def test_a():\n    pytest.skip('PostgreSQL is not installed (no server here)')\n", ci=ci)
    assert done.returncode == (1 if ci else 0), done.stdout
