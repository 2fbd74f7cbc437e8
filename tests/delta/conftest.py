"""Fixtures for the Delta source suites (tests/delta)."""

from __future__ import annotations

import pytest

import delta_oracles as D


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> dict:
    """Every table of ../shared/corpora/delta-cdf, extracted once per session: name -> table root."""
    return D.extract_corpus(tmp_path_factory.mktemp("delta-corpus"))


@pytest.fixture(scope="session")
def oracle_scratch(tmp_path_factory):
    """Where oracle-only copies of tables go (see delta_oracles._percent_copy)."""
    return tmp_path_factory.mktemp("delta-oracle-scratch")
