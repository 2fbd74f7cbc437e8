"""Fixtures for the dashboard tests (tests/ui): the scenario and a running `lakesync ui` over it, made once
for the whole suite (ui_scenario.py says what they hold). Test modules import helpers from ui_scenario,
never from this file: another folder's conftest may hold the name `conftest` in a run of several folders."""

from __future__ import annotations

import pytest

from ui_scenario import LAKESYNC, UiServer, build_scenario


@pytest.fixture(scope="session")
def scenario(tmp_path_factory):
    if not LAKESYNC.exists():
        pytest.fail(f"{LAKESYNC} is missing: build first")
    return build_scenario(tmp_path_factory.mktemp("ui"))


@pytest.fixture(scope="session")
def ui(scenario):
    server = UiServer(scenario.env, "--jobs", str(scenario.job.parent))
    yield server
    server.stop()
