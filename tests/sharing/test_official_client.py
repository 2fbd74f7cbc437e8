"""`lakesync share serve` read by the official Delta Sharing Python client (`delta-sharing`, PyPI), in
both response formats, held against deltalake reading the same Delta table directly: snapshots, every
version, timestamps, and `load_table_changes_as_pandas`, on a table deltalake writes (CDF, partitions,
updates, deletes, merges), on Databricks-written tables with deletion vectors and on tables with
column mapping from the shared corpus.

Known client behaviour the comparisons allow for (shared/specs/delta-sharing.md section 11): parquet
mode gives `_commit_timestamp` as int64 milliseconds, delta mode as a timestamp truncated to whole
seconds (the client stamps its rebuilt log files with `timestamp // 1000`)."""
from __future__ import annotations

import datetime as dt
import math

import pyarrow as pa
import pytest

import sharing_env  # noqa: F401  (puts tests/delta on sys.path)
import delta_oracles as D
from sharing_env import shares_config

delta_sharing = pytest.importorskip("delta_sharing")
deltalake = pytest.importorskip("deltalake")

FORMATS = {"auto": None, "parquet": False, "delta": True}


def norm(v):
    """One comparable form for pandas, pyarrow and deltalake values."""
    if v is None:
        return None
    if isinstance(v, bytes):  # chDB gives strings as binary; both sides meet as text
        return v.decode("utf-8", "backslashreplace")
    if isinstance(v, float):
        if math.isnan(v):
            return None
        return round(v, 9)
    if hasattr(v, "item") and not isinstance(v, (bytes, str)):  # numpy scalars
        return norm(v.item())
    if isinstance(v, dt.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=dt.timezone.utc)
        return v.astimezone(dt.timezone.utc).isoformat()
    if hasattr(v, "to_pydatetime"):  # pandas Timestamp
        return norm(v.to_pydatetime())
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, (list, tuple)):
        return tuple(norm(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, norm(x)) for k, x in v.items()))
    if hasattr(v, "tolist"):  # numpy arrays inside pandas cells
        return norm(v.tolist())
    return v


def rows_of_pandas(df, columns):
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover
        pd = None
    out = []
    for rec in df[columns].itertuples(index=False, name=None):
        out.append(tuple(None if (pd is not None and not isinstance(x, (list, tuple, dict)) and
                                  not hasattr(x, "tolist") and pd.isna(x)) else norm(x) for x in rec))
    return sorted(out, key=repr)


def rows_of_table(table: pa.Table, columns):
    cols = [table.column(c).to_pylist() for c in columns]
    return sorted((tuple(norm(col[i]) for col in cols) for i in range(table.num_rows)), key=repr)


def make_orders_table(path):
    """A partitioned CDF table through deltalake: create, append, MERGE (update + insert), DELETE, UPDATE
    (moving a row to another partition). Returns the latest version."""
    from deltalake import DeltaTable, write_deltalake

    schema = pa.schema([("order_id", pa.int64()), ("customer", pa.string()), ("region", pa.string()),
                        ("amount", pa.float64())])

    def t(rows):
        return pa.table({k: [r[i] for r in rows] for i, k in enumerate(schema.names)}, schema=schema)

    write_deltalake(str(path), t([(1, "ana", "eu", 19.9), (2, "bruno", "eu", 5.0), (3, "chen", "asia", 120.0),
                                  (4, "dara", "us", 42.1)]),
                    partition_by=["region"], configuration={"delta.enableChangeDataFeed": "true"})
    write_deltalake(str(path), t([(5, "emil", "us", 7.5), (6, "fatou", "africa", None)]), mode="append")
    (DeltaTable(str(path)).merge(t([(1, "ana", "eu", 25.0), (7, "gus", "eu", 1.0)]), "t.order_id = s.order_id",
                                 source_alias="s", target_alias="t")
     .when_matched_update_all().when_not_matched_insert_all().execute())
    DeltaTable(str(path)).delete("order_id = 2")
    DeltaTable(str(path)).update(predicate="order_id = 4", updates={"region": "'eu'", "amount": "50.5"})
    return DeltaTable(str(path)).version()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return D.extract_corpus(tmp_path_factory.mktemp("sharing-corpus"))


@pytest.fixture
def orders(tmp_path, serve):
    table = tmp_path / "orders"
    latest = make_orders_table(table)
    server = serve(shares_config({"orders": table}))
    return server, table, latest, f"{server.profile()}#share1.default.orders"


def test_lists_shares_schemas_and_tables(orders):
    server, _, _, _ = orders
    client = delta_sharing.SharingClient(str(server.profile()))
    assert [s.name for s in client.list_shares()] == ["share1"]
    share = client.list_shares()[0]
    assert [s.name for s in client.list_schemas(share)] == ["default"]
    assert [(t.share, t.schema, t.name) for t in client.list_all_tables()] == [("share1", "default", "orders")]
    schema = client.list_schemas(share)[0]
    assert [t.name for t in client.list_tables(schema)] == ["orders"]


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_snapshots_at_every_version_equal_deltalake(orders, fmt):
    _, table, latest, url = orders
    columns = ["order_id", "customer", "region", "amount"]
    got = delta_sharing.load_as_pandas(url, use_delta_format=FORMATS[fmt])
    assert rows_of_pandas(got, columns) == rows_of_table(D.deltalake_snapshot(table), columns)
    for v in range(latest + 1):
        got = delta_sharing.load_as_pandas(url, version=v, use_delta_format=FORMATS[fmt])
        assert rows_of_pandas(got, columns) == rows_of_table(D.deltalake_snapshot(table, v), columns), f"version {v}"
    assert delta_sharing.get_table_version(url) == latest


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_snapshot_by_timestamp_reads_the_version_current_then(orders, fmt):
    _, table, latest, url = orders
    columns = ["order_id", "customer", "region", "amount"]
    stamps = D.expected_commit_timestamps(table, 0, latest)
    for v in (1, latest - 1):
        at = D.ms_to_iso(stamps[v])
        got = delta_sharing.load_as_pandas(url, timestamp=at, use_delta_format=FORMATS[fmt])
        assert rows_of_pandas(got, columns) == rows_of_table(D.deltalake_snapshot(table, v), columns), at
        # /version?startingTimestamp: the first version committed at or after the time (the spec's rule).
        assert delta_sharing.get_table_version(url, starting_timestamp=at) == v


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_changes_equal_deltalake_load_cdf(orders, fmt):
    _, table, latest, url = orders
    columns = ["order_id", "customer", "region", "amount", "_change_type", "_commit_version"]
    stamps = D.expected_commit_timestamps(table, 0, latest)
    for start, end in [(0, latest), (1, 3), (2, 2), (3, latest)]:
        got = delta_sharing.load_table_changes_as_pandas(url, starting_version=start, ending_version=end,
                                                         use_delta_format=FORMATS[fmt])
        expected = D.deltalake_cdf(table, start, end)
        assert rows_of_pandas(got, columns) == rows_of_table(expected, columns), f"[{start}, {end}]"
        # _commit_timestamp: lakesync's commit time per version; ms in parquet mode, seconds in delta mode.
        for version, ts in zip(got["_commit_version"], got["_commit_timestamp"]):
            want = stamps[int(version)]
            if fmt == "parquet":
                assert int(ts) == want
            else:
                assert int(ts.timestamp()) == want // 1000


def test_changes_by_timestamp_range(orders):
    _, table, latest, url = orders
    stamps = D.expected_commit_timestamps(table, 0, latest)
    got = delta_sharing.load_table_changes_as_pandas(url, starting_timestamp=D.ms_to_iso(stamps[1]),
                                                     ending_timestamp=D.ms_to_iso(stamps[3]))
    assert sorted(set(int(v) for v in got["_commit_version"])) == [1, 2, 3]


def test_metadata_and_protocol(orders):
    _, _, _, url = orders
    md = delta_sharing.get_table_metadata(url)
    assert md.partition_columns == ["region"]
    assert "order_id" in md.schema_string


# ---- Deletion vectors and column mapping (tables from the shared corpus) ----


def _serve_corpus(serve, corpus, tmp_path, names):
    return serve(shares_config({n.replace("-", "_"): corpus[n] for n in names}), root=tmp_path / "srv")


@pytest.mark.parametrize("name", ["table-with-dv-small", "dv-partitioned-with-checkpoint", "dv-with-columnmapping",
                                  "cdf-table-with-cdc-and-dvs", "cdf-column-mapping-name-mode"])
def test_snapshots_of_dv_and_column_mapping_tables_in_delta_format(serve, corpus, tmp_path, name):
    server = _serve_corpus(serve, corpus, tmp_path, [name])
    url = f"{server.profile()}#share1.default.{name.replace('-', '_')}"
    expected = D.deltalake_snapshot(corpus[name])
    columns = expected.column_names
    latest = delta_sharing.get_table_version(url)
    got = delta_sharing.load_as_pandas(url, use_delta_format=True)
    assert rows_of_pandas(got, columns) == rows_of_table(expected, columns)
    # The auto-resolved format is delta too: these tables cannot go out as parquet.
    got = delta_sharing.load_as_pandas(url)
    assert rows_of_pandas(got, columns) == rows_of_table(expected, columns)
    first = 1 if name.startswith("cdf-column-mapping") else 0
    for v in range(first, latest):
        got = delta_sharing.load_as_pandas(url, version=v, use_delta_format=True)
        assert rows_of_pandas(got, columns) == rows_of_table(D.deltalake_snapshot(corpus[name], v), columns), v


@pytest.mark.parametrize("name", ["table-with-dv-small", "dv-with-columnmapping"])
def test_parquet_format_is_refused_for_dv_and_column_mapping_tables(serve, corpus, tmp_path, name):
    server = _serve_corpus(serve, corpus, tmp_path, [name])
    url = f"{server.profile()}#share1.default.{name.replace('-', '_')}"
    with pytest.raises(Exception) as failure:
        delta_sharing.load_as_pandas(url, use_delta_format=False)
    assert "400" in str(failure.value)


@pytest.mark.parametrize("name,start", [("cdf-table-with-cdc-and-dvs", 0), ("cdf-table-with-dv", 0),
                                        ("cdf-column-mapping-name-mode", 1)])
def test_changes_of_dv_and_column_mapping_tables_in_delta_format(serve, corpus, tmp_path, name, start):
    server = _serve_corpus(serve, corpus, tmp_path, [name])
    url = f"{server.profile()}#share1.default.{name.replace('-', '_')}"
    if "column-mapping" in name:
        # deltalake 1.6.6 has no change data feed under column mapping ("Column mapping is not supported
        # for read operation 'CHANGE DATA FEED scans'"): chDB (delta-kernel-rs inside) is the oracle here.
        latest = delta_sharing.get_table_version(url)
        expected = D.chdb_cdf(corpus[name], start, latest)
        columns = [c for c in expected.column_names if c != "_commit_timestamp"]
        got = delta_sharing.load_table_changes_as_pandas(url, starting_version=start, use_delta_format=True)
        assert rows_of_pandas(got, columns) == rows_of_table(expected, columns)
        return
    expected = D.deltalake_cdf(corpus[name], start, None, scratch=tmp_path)
    columns = [c for c in expected.column_names if c != "_commit_timestamp"]
    got = delta_sharing.load_table_changes_as_pandas(url, starting_version=start, use_delta_format=True)
    assert rows_of_pandas(got, columns) == rows_of_table(expected, columns)
