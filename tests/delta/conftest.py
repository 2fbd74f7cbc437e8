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


@pytest.fixture(scope="session")
def chdb_cdf(corpus):
    """D.chdb_cdf, once chDB's Delta CDF has proved itself (oracles.md: "prove it with a probe query"):
    on cdf-table [0, 3] it must return the three metadata columns and the same rows (metadata
    columns but the timestamp included) as deltalake `load_cdf`. The pinned chDB does; a chDB that
    errors, lacks the columns or disagrees fails every test that needs it (no silent skip: the
    tests would otherwise check nothing)."""
    root = corpus["cdf-table"]
    got = D.chdb_cdf(root, 0, 3)
    schema = D.delta_schema(root)
    columns = schema.names + ["_change_type", "_commit_version"]
    types = {f.name: f.type for f in schema} | D.META_TYPES
    missing = [c for c in D.META_COLUMNS if c not in got.column_names]
    if missing:
        pytest.fail(f"chDB's Delta CDF output lacks {missing}")
    ch, dl = D.rows_of_arrow(got, columns, types), D.rows_of_arrow(D.deltalake_cdf(root, 0, 3), columns, types)
    if sorted(ch) != sorted(dl) or not ch:
        pytest.fail(f"chDB's Delta CDF disagrees with deltalake on cdf-table [0, 3] ({len(ch)} vs {len(dl)} rows)")
    return D.chdb_cdf
