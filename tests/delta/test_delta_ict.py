"""In-Commit Timestamps (delta.md 4.5 and 5): a deltalake history in which ICT is switched on at
v3 (delta_tables.enable_in_commit_timestamps). `_commit_timestamp` must be the ICT from v3 on and
the monotonic modification time before; both chDB (kernel-rs: ICT when enabled as of the commit)
and deltalake (commitInfo.inCommitTimestamp) report the ICTs, so the two oracles judge those
versions directly. Timestamp bounds resolve against ICT after enablement.
"""

from __future__ import annotations

import random

import pytest

import delta_oracles as D
import delta_tables as T

pytestmark = D.needs_lakesync

ICT_FROM = 3


@pytest.fixture(scope="module")
def ict_table(tmp_path_factory):
    from deltalake import DeltaTable, write_deltalake

    path = tmp_path_factory.mktemp("delta-ict") / "t"
    rng = random.Random(4)
    write_deltalake(str(path), T.make_rows(rng, list(range(10))), configuration={"delta.enableChangeDataFeed": "true"})
    write_deltalake(str(path), T.make_rows(rng, list(range(10, 20))), mode="append")
    DeltaTable(str(path)).update(predicate="id < 5", updates={"note": "'u'"})
    write_deltalake(str(path), T.make_rows(rng, list(range(20, 25))), mode="append")
    DeltaTable(str(path)).delete("id >= 15")
    write_deltalake(str(path), T.make_rows(rng, list(range(30, 33))), mode="append")
    icts = T.enable_in_commit_timestamps(path, ICT_FROM)
    return path, icts


def test_commit_timestamps_follow_ict_after_enablement(ict_table, chdb_cdf):
    path, icts = ict_table
    latest = max(icts)
    schema = D.delta_schema(path)
    columns = schema.names + D.META_COLUMNS
    types = {f.name: f.type for f in schema} | D.META_TYPES
    ours = D.rows_of_json(D.lakesync_changes(path, 0, latest), columns, types)
    ch = D.rows_of_arrow(chdb_cdf(path, 0, latest), columns, types)
    dl = D.rows_of_arrow(D.deltalake_cdf(path, 0, latest), columns, types)
    D.assert_same_multiset(D.without(ours, columns, "_commit_timestamp"), D.without(dl, columns, "_commit_timestamp"),
                           "rows vs deltalake")
    # from the enablement version on, all three must agree on _commit_timestamp itself
    after = lambda rows: [r for r in rows if r[-2] >= ICT_FROM]  # noqa: E731 (r[-2] = _commit_version)
    D.assert_same_multiset(after(ours), after(ch), f"versions >= {ICT_FROM} (ICT) vs chDB")
    D.assert_same_multiset(after(ours), after(dl), f"versions >= {ICT_FROM} (ICT) vs deltalake")
    for r in after(ours):
        assert r[-1] == D.ms_to_iso(icts[r[-2]])
    # before it: the monotonic modification time
    rule = D.expected_commit_timestamps(path, 0, latest)
    for r in ours:
        assert r[-1] == D.ms_to_iso(rule[r[-2]]), f"version {r[-2]}: {r[-1]}"


def test_timestamp_bounds_resolve_against_ict(ict_table):
    path, icts = ict_table
    latest = max(icts)
    rule = D.expected_commit_timestamps(path, 0, latest)
    cases = [
        (icts[4] - 1, icts[5] - 1, 4, 4),            # both inside the ICT region
        (rule[1], icts[ICT_FROM] + 1, 1, ICT_FROM),  # start before enablement, end after
        (rule[2] + 1, None, ICT_FROM, latest),       # between the last mtime and the first ICT
    ]
    schema = D.delta_schema(path)
    columns = schema.names + D.META_COLUMNS
    types = {f.name: f.type for f in schema} | D.META_TYPES
    for start_ms, end_ms, want_start, want_end in cases:
        ours = D.rows_of_json(D.lakesync_changes(path, start_ms, end_ms, by="timestamp"), columns, types)
        dl = D.rows_of_arrow(D.deltalake_cdf(path, want_start, want_end), columns, types)
        D.assert_same_multiset(D.without(ours, columns, "_commit_timestamp"),
                               D.without(dl, columns, "_commit_timestamp"),
                               f"timestamps {start_ms}..{end_ms} -> versions [{want_start}, {want_end}]")
