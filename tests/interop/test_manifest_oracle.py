"""Iceberg manifests and manifest lists, held against independent Avro and Iceberg implementations.

lakesync's codecs (src/lakesync/iceberg/manifest over src/lakesync/formats/avro) are driven through
the `manifest_probe` program (tests/tools/manifest_probe.cc), found in LAKESYNC_BUILD_DIR. Oracles:

- fastavro for the bytes we write: the writer schema (every field-id, element-id and map record the
  spec assigns, checked against tables transcribed here from format/spec.md "Manifests", "Manifest
  Lists" and Appendix A), the file metadata, and the records themselves.
- pyiceberg 0.12 reading what we write (manifest lists and manifests, with its own inheritance).
- pyiceberg writing what we read: tables created with its SqlCatalog (v1 and v2, appends and a
  copy-on-write delete), and manifests written with its manifest writer for every transform.

Values cross the probe boundary in their storage form ("raw"): see manifest_probe.cc.
"""

from __future__ import annotations

import copy
import datetime
import decimal
import json
import math
import os
import subprocess
import uuid
from pathlib import Path

import pytest

fastavro = pytest.importorskip("fastavro")

BUILD_DIR = Path(os.environ.get("LAKESYNC_BUILD_DIR", "/work/main/build"))
PROBE = BUILD_DIR / "manifest_probe"

pytestmark = pytest.mark.skipif(
    not PROBE.exists(),
    reason=f"{PROBE} is not built (build the manifest_probe target; set LAKESYNC_BUILD_DIR to the build dir)",
)


# ---------------------------------------------------------------------------------------------
# The spec's tables (format/spec.md), as (name, Avro type kind, required).

ENTRY_FIELDS = {
    0: ("status", "int", True),
    1: ("snapshot_id", "long", False),
    3: ("sequence_number", "long", False),
    4: ("file_sequence_number", "long", False),
    2: ("data_file", "record", True),
}
DATA_FILE_FIELDS_V2 = {
    134: ("content", "int", True),
    100: ("file_path", "string", True),
    101: ("file_format", "string", True),
    102: ("partition", "record", True),
    103: ("record_count", "long", True),
    104: ("file_size_in_bytes", "long", True),
    108: ("column_sizes", "map", False),
    109: ("value_counts", "map", False),
    110: ("null_value_counts", "map", False),
    137: ("nan_value_counts", "map", False),
    125: ("lower_bounds", "map", False),
    128: ("upper_bounds", "map", False),
    131: ("key_metadata", "bytes", False),
    132: ("split_offsets", "array", False),
    135: ("equality_ids", "array", False),
    140: ("sort_order_id", "int", False),
    143: ("referenced_data_file", "string", False),
}
DATA_FILE_FIELDS_V3 = {
    **DATA_FILE_FIELDS_V2,
    142: ("first_row_id", "long", False),
    144: ("content_offset", "long", False),
    145: ("content_size_in_bytes", "long", False),
}
# map field id -> (key id, value id, value type); list field id -> (element id, element type)
INT_KEYED_MAPS = {108: (117, 118, "long"), 109: (119, 120, "long"), 110: (121, 122, "long"),
                  137: (138, 139, "long"), 125: (126, 127, "bytes"), 128: (129, 130, "bytes")}
LISTS = {132: (133, "long"), 135: (136, "int")}
MANIFEST_FILE_FIELDS_V2 = {
    500: ("manifest_path", "string", True),
    501: ("manifest_length", "long", True),
    502: ("partition_spec_id", "int", True),
    517: ("content", "int", True),
    515: ("sequence_number", "long", True),
    516: ("min_sequence_number", "long", True),
    503: ("added_snapshot_id", "long", True),
    504: ("added_files_count", "int", True),
    505: ("existing_files_count", "int", True),
    506: ("deleted_files_count", "int", True),
    512: ("added_rows_count", "long", True),
    513: ("existing_rows_count", "long", True),
    514: ("deleted_rows_count", "long", True),
    507: ("partitions", "array", False),
    519: ("key_metadata", "bytes", False),
}
MANIFEST_FILE_FIELDS_V3 = {**MANIFEST_FILE_FIELDS_V2, 520: ("first_row_id", "long", False)}
FIELD_SUMMARY_FIELDS = {
    509: ("contains_null", "boolean", True),
    518: ("contains_nan", "boolean", False),
    510: ("lower_bound", "bytes", False),
    511: ("upper_bound", "bytes", False),
}
DEPRECATED_IDS = {105, 106, 107, 111, 141}


def decimal_bytes(precision: int) -> int:
    """Appendix A: the fewest bytes whose signed range holds 10^precision - 1."""
    n = 1
    while 2 ** (8 * n - 1) < 10**precision:
        n += 1
    return n


def avro_type_for(iceberg_type: str):
    """Appendix A's Avro type of a primitive Iceberg type (names of fixed types left out)."""
    simple = {"boolean": "boolean", "int": "int", "long": "long", "float": "float", "double": "double",
              "string": "string", "binary": "bytes"}
    if iceberg_type in simple:
        return simple[iceberg_type]
    logical = {
        "date": {"type": "int", "logicalType": "date"},
        "time": {"type": "long", "logicalType": "time-micros"},
        "timestamp": {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": False},
        "timestamptz": {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": True},
        "timestamp_ns": {"type": "long", "logicalType": "timestamp-nanos", "adjust-to-utc": False},
        "timestamptz_ns": {"type": "long", "logicalType": "timestamp-nanos", "adjust-to-utc": True},
        "uuid": {"type": "fixed", "size": 16, "logicalType": "uuid"},
    }
    if iceberg_type in logical:
        return logical[iceberg_type]
    if iceberg_type.startswith("fixed["):
        return {"type": "fixed", "size": int(iceberg_type[6:-1])}
    if iceberg_type.startswith("decimal("):
        p, s = (int(x) for x in iceberg_type[8:-1].split(","))
        return {"type": "fixed", "size": decimal_bytes(p), "logicalType": "decimal", "precision": p, "scale": s}
    raise AssertionError(f"no Avro type for {iceberg_type}")


def result_type(transform: str, source: str) -> str:
    """Spec "Partition Transforms": the result type of each transform."""
    if transform in ("identity", "void") or transform.startswith("truncate"):
        return source
    if transform == "day":
        return "date"
    return "int"  # bucket, year, month, hour


# ---------------------------------------------------------------------------------------------
# Probe plumbing.

def run_probe(*args: str) -> dict:
    done = subprocess.run([str(PROBE), *map(str, args)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"manifest_probe {' '.join(map(str, args))} failed: {done.stderr}"
    return json.loads(done.stdout)


def local(path: str) -> str:
    return path[len("file://"):] if path.startswith("file://") else path


def read_avro(path: str, strip_logical: bool = False):
    """(metadata, writer schema as written, records) via fastavro; raw values when strip_logical."""
    with open(local(path), "rb") as f:
        reader = fastavro.reader(f)
        metadata = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in reader.metadata.items()}
    schema = json.loads(metadata["avro.schema"])
    with open(local(path), "rb") as f:
        if strip_logical:
            records = list(fastavro.reader(f, reader_schema=strip_logical_types(schema)))
        else:
            records = list(fastavro.reader(f))
    return metadata, schema, records


def strip_logical_types(node):
    if isinstance(node, dict):
        return {k: strip_logical_types(v) for k, v in node.items() if k != "logicalType"}
    if isinstance(node, list):
        return [strip_logical_types(v) for v in node]
    return node


# ---------------------------------------------------------------------------------------------
# Writer schema checks.

def walk_fields(record: dict, named: dict) -> dict:
    """Field id -> (name, kind, required, field) for a record, resolving named references."""
    out = {}
    for field in record["fields"]:
        assert "field-id" in field, f"field {field['name']} has no field-id"
        ftype = field["type"]
        required = not isinstance(ftype, list)
        if not required:
            assert len(ftype) == 2 and ftype[0] == "null", f"{field['name']}: optional must be ['null', T]"
            assert "default" in field and field["default"] is None, f"{field['name']}: default must be null"
            ftype = ftype[1]
        if isinstance(ftype, str) and ftype in named:
            ftype = named[ftype]
        if isinstance(ftype, dict) and "name" in ftype:
            named.setdefault(ftype["name"], ftype)
        kind = ftype if isinstance(ftype, str) else ftype["type"]
        if kind == "array" and ftype.get("logicalType") == "map":
            kind = "map"
        out[field["field-id"]] = (field["name"], kind, required, ftype)
    return out


def check_fields(actual: dict, expected: dict, what: str):
    assert set(actual) == set(expected), f"{what}: ids {sorted(actual)} != spec {sorted(expected)}"
    for fid, (name, kind, required) in expected.items():
        got = actual[fid]
        assert (got[0], got[1], got[2]) == (name, kind, required), f"{what} field {fid}: {got[:3]}"
    assert not (set(actual) & DEPRECATED_IDS)


def check_entry_schema(schema: dict, version: int, partition_fields: list[tuple[int, str, str]]):
    assert schema["type"] == "record" and schema["name"] == "manifest_entry"
    named: dict = {}
    entry = walk_fields(schema, named)
    check_fields(entry, ENTRY_FIELDS, "manifest_entry")
    data_file = entry[2][3]
    assert data_file["name"] == "r2"
    fields = walk_fields(data_file, named)
    check_fields(fields, DATA_FILE_FIELDS_V3 if version == 3 else DATA_FILE_FIELDS_V2, "data_file")
    for fid, (key_id, value_id, value_type) in INT_KEYED_MAPS.items():
        items = fields[fid][3]["items"]
        assert items["type"] == "record" and items["name"] == f"k{key_id}_v{value_id}"
        assert [(f["name"], f["type"], f["field-id"]) for f in items["fields"]] == [
            ("key", "int", key_id), ("value", value_type, value_id)]
    for fid, (element_id, element_type) in LISTS.items():
        assert fields[fid][3]["element-id"] == element_id
        assert fields[fid][3]["items"] == element_type
    partition = fields[102][3]
    assert partition["name"] == "r102"
    got = walk_fields(partition, named)
    assert list(got) == [fid for fid, _, _ in partition_fields], "partition field ids must be the spec's, in order"
    for (fid, name, iceberg_type), field in zip(partition_fields, partition["fields"]):
        assert field.get("iceberg-field-name", field["name"]) == name
        assert not got[fid][2], "partition fields are optional"
        avro = got[fid][3]
        if isinstance(avro, dict):
            avro = {k: v for k, v in avro.items() if k != "name"}
        assert avro == avro_type_for(iceberg_type), f"partition field {name}: {avro}"


def check_list_schema(schema: dict, version: int):
    assert schema["type"] == "record" and schema["name"] == "manifest_file"
    named: dict = {}
    fields = walk_fields(schema, named)
    check_fields(fields, MANIFEST_FILE_FIELDS_V3 if version == 3 else MANIFEST_FILE_FIELDS_V2, "manifest_file")
    partitions = fields[507][3]
    assert partitions["element-id"] == 508
    assert partitions["items"]["name"] == "r508"
    check_fields(walk_fields(partitions["items"], named), FIELD_SUMMARY_FIELDS, "field_summary")


# ---------------------------------------------------------------------------------------------
# A table schema with every primitive type and a spec with every transform.

TABLE_SCHEMA = {
    "type": "struct", "schema-id": 4, "fields": [
        {"id": 1, "name": "b", "required": False, "type": "boolean"},
        {"id": 2, "name": "i", "required": False, "type": "int"},
        {"id": 3, "name": "l", "required": True, "type": "long"},
        {"id": 4, "name": "f", "required": False, "type": "float"},
        {"id": 5, "name": "d", "required": False, "type": "double"},
        {"id": 6, "name": "dec", "required": False, "type": "decimal(9, 2)"},
        {"id": 7, "name": "dt", "required": False, "type": "date"},
        {"id": 8, "name": "t", "required": False, "type": "time"},
        {"id": 9, "name": "ts", "required": False, "type": "timestamp"},
        {"id": 10, "name": "tstz", "required": False, "type": "timestamptz"},
        {"id": 11, "name": "s", "required": False, "type": "string"},
        {"id": 12, "name": "u", "required": False, "type": "uuid"},
        {"id": 13, "name": "fx", "required": False, "type": "fixed[3]"},
        {"id": 14, "name": "bin", "required": False, "type": "binary"},
        {"id": 15, "name": "big", "required": False, "type": "decimal(38, 10)"},
    ]}
SOURCE_TYPES = {f["id"]: f["type"] for f in TABLE_SCHEMA["fields"]}
SPEC_FIELDS = [  # (source id, field id, name, transform)
    (1, 1000, "b", "identity"), (2, 1001, "i", "identity"), (3, 1002, "l", "identity"),
    (4, 1003, "f", "identity"), (5, 1004, "d", "identity"), (6, 1005, "dec", "identity"),
    (7, 1006, "dt", "identity"), (8, 1007, "t", "identity"), (9, 1008, "ts", "identity"),
    (10, 1009, "tstz", "identity"), (11, 1010, "s", "identity"), (12, 1011, "u", "identity"),
    (13, 1012, "fx", "identity"), (14, 1013, "bin", "identity"), (15, 1014, "big", "identity"),
    (9, 1015, "ts_day", "day"), (9, 1016, "ts_month", "month"), (10, 1017, "tstz_hour", "hour"),
    (7, 1018, "dt_year", "year"), (11, 1019, "s_bucket", "bucket[16]"), (11, 1020, "s-trunc", "truncate[2]"),
    (3, 1021, "l_void", "void"),
]
PARTITION_FIELDS = [(fid, name, result_type(t, SOURCE_TYPES[src])) for src, fid, name, t in SPEC_FIELDS]
SPEC = {"spec-id": 3, "fields": [{"source-id": s, "field-id": f, "name": n, "transform": t} for s, f, n, t in SPEC_FIELDS]}


def partition_raw(i: int) -> list:
    values = [
        i % 2 == 0, i - 3, (1 << 40) + i, "NaN" if i == 2 else i * -0.5, i / 3.0, str(-12345 + i),
        19000 + i, 3_600_000_000 + i, 1_700_000_000_000_000 + i, -1 - i, f"str-{i}",
        "00112233445566778899aabbccddee" + f"{i:02x}", "0102" + f"{i:02x}", f"00{i:02x}ff",
        str(-(1 << 100) + i), 19700 + i, 647 + i, 472222 + i, 52 + i, i % 16, "st", None,
    ]
    if i % 4 == 3:
        values = [None if k % 3 == 0 else v for k, v in enumerate(values)]
    return values


def data_file(i: int, full: bool, content: int = 0, partition=None) -> dict:
    f = {"content": content, "file_path": f"s3://bucket/warehouse/t/data/{i:05d}.parquet", "file_format": "PARQUET",
         "partition": partition if partition is not None else partition_raw(i),
         "record_count": 100 + i, "file_size_in_bytes": 5000 + i}
    if full:
        f.update({
            "column_sizes": {"1": 10 + i, "11": 200}, "value_counts": {"1": 100 + i, "11": 100},
            "null_value_counts": {"1": 0, "11": i}, "nan_value_counts": {"4": 1},
            "lower_bounds": {"2": "fdffffff", "11": "6100" + f"{i:02x}"}, "upper_bounds": {"2": "05000000", "11": "7a7a"},
            "key_metadata": "deadbeef", "split_offsets": [4, 1000 + i], "sort_order_id": 1,
        })
    return f


def build_request(tmp_path: Path, version: int, delete_codec: str = "uncompressed") -> dict:
    """A data manifest (every field set or unset, every status) and a delete manifest (equality deletes
    and a DV in v3, a file-scoped position delete file in v2). fastavro here reads deflate and null
    blocks only (its snappy and zstandard readers need libraries this environment lacks)."""
    entries = []
    for i in range(12):
        status = i % 3  # EXISTING, ADDED, DELETED
        e = {"status": status, "data_file": data_file(i, full=i % 2 == 0)}
        if status != 1:
            e.update({"snapshot_id": 900 + i, "sequence_number": 1 + i % 2, "file_sequence_number": 2})
        if version == 3 and i == 4:
            e["data_file"]["first_row_id"] = 7777
        entries.append(e)
    deletes = [
        {"status": 1, "data_file": {**data_file(50, full=False, content=2), "equality_ids": [2, 11],
                                    "file_path": "s3://bucket/warehouse/t/data/eq-1.parquet"}},
    ]
    if version == 3:
        deletes.append({"status": 1, "data_file": {
            **data_file(51, full=False, content=1), "file_format": "PUFFIN",
            "file_path": "s3://bucket/warehouse/t/data/dv-1.puffin",
            "referenced_data_file": "s3://bucket/warehouse/t/data/00001.parquet",
            "content_offset": 4, "content_size_in_bytes": 48}})
    else:
        deletes.append({"status": 1, "data_file": {
            **data_file(51, full=False, content=1), "file_path": "s3://bucket/warehouse/t/data/pos-1.parquet",
            "referenced_data_file": "s3://bucket/warehouse/t/data/00001.parquet"}})
    return {
        "format_version": version, "schema": TABLE_SCHEMA, "specs": [SPEC],
        "snapshot_id": 4242, "parent_snapshot_id": 4141 if version == 3 else None,
        "sequence_number": 9, "first_row_id": 1000 if version == 3 else None, "codec": "gzip",
        "list_path": str(tmp_path / "snap-4242.avro"),
        "manifests": [
            {"path": f"file://{tmp_path}/m-data.avro", "spec_id": 3, "content": "data", "entries": entries},
            {"path": f"file://{tmp_path}/m-deletes.avro", "spec_id": 3, "content": "deletes", "codec": delete_codec,
             "entries": deletes},
        ],
    }


def write(tmp_path: Path, request: dict) -> dict:
    path = tmp_path / "request.json"
    path.write_text(json.dumps(request))
    return run_probe("write", path)


# ---------------------------------------------------------------------------------------------
# Raw-value normalisation (storage form, as the probe prints it).

def raw(value, iceberg_type: str):
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else value
    if isinstance(value, (bytes, bytearray)):
        if iceberg_type.startswith("decimal"):  # Avro's two's-complement big-endian unscaled value
            return str(int.from_bytes(value, "big", signed=True))
        return bytes(value).hex()
    if isinstance(value, uuid.UUID):
        return value.bytes.hex()
    if isinstance(value, decimal.Decimal):
        scale = int(iceberg_type.split(",")[1].strip(" )"))
        return str(int(value.scaleb(scale, context=decimal.Context(prec=100))))
    if isinstance(value, datetime.datetime):
        epoch = datetime.datetime(1970, 1, 1, tzinfo=value.tzinfo)
        return (value - epoch) // datetime.timedelta(microseconds=1)
    if isinstance(value, datetime.date):
        return (value - datetime.date(1970, 1, 1)).days
    if isinstance(value, datetime.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
    if iceberg_type.startswith("decimal") and isinstance(value, int):
        return str(value)
    return value


def same_float(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return float(a) == float(b) or (a == "NaN" and b == "NaN")
    return a == b


def same_as_pyiceberg(ours, theirs) -> bool:
    """Equality with pyiceberg's values. pyiceberg 0.12's compiled Avro decoder
    (CythonBinaryDecoder.read_double) returns doubles rounded to float precision, so doubles only
    agree to about 7 digits; everything else must match exactly."""
    if isinstance(ours, float) and isinstance(theirs, float):
        return ours == theirs or math.isclose(ours, theirs, rel_tol=1e-7)
    return same_float(ours, theirs)


def normalise_partition(values, types):
    return [raw(v, t) for v, t in zip(values, types)]


def int_map(pairs) -> dict:
    """An Avro key/value array (as fastavro reads it) or a dict, as {"id": value}."""
    if pairs is None:
        return {}
    if hasattr(pairs, "items"):
        return {str(k): (v.hex() if isinstance(v, bytes) else v) for k, v in pairs.items()}
    return {str(p["key"]): (p["value"].hex() if isinstance(p["value"], bytes) else p["value"]) for p in pairs}


# ---------------------------------------------------------------------------------------------
# 1. What we write, read by fastavro.

@pytest.mark.parametrize("version", [2, 3])
def test_written_schemas_and_metadata_follow_the_spec(tmp_path, version):
    request = build_request(tmp_path, version)
    written = write(tmp_path, request)

    for manifest, content in (("m-data.avro", "data"), ("m-deletes.avro", "deletes")):
        metadata, schema, _ = read_avro(str(tmp_path / manifest))
        check_entry_schema(schema, version, PARTITION_FIELDS)
        assert metadata["format-version"] == str(version)
        assert metadata["content"] == content
        assert metadata["partition-spec-id"] == "3"
        assert metadata["schema-id"] == "4"
        assert json.loads(metadata["partition-spec"]) == SPEC["fields"]
        schema_json = json.loads(metadata["schema"])
        assert schema_json["schema-id"] == 4
        assert [(f["id"], f["name"], f["type"], f["required"]) for f in schema_json["fields"]] == [
            (f["id"], f["name"], f["type"], f["required"]) for f in TABLE_SCHEMA["fields"]]
        assert metadata["avro.codec"] == ("deflate" if content == "data" else "null")

    metadata, schema, records = read_avro(request["list_path"])
    check_list_schema(schema, version)
    assert metadata["snapshot-id"] == "4242"
    assert metadata["parent-snapshot-id"] == ("4141" if version == 3 else "null")
    assert metadata["sequence-number"] == "9"
    assert metadata["format-version"] == str(version)
    assert metadata.get("first-row-id") == ("1000" if version == 3 else None)
    assert len(records) == 2 == len(written["manifests"])


@pytest.mark.parametrize("version", [2, 3])
def test_written_records_match_the_request(tmp_path, version):
    request = build_request(tmp_path, version)
    written = write(tmp_path, request)
    types = [t for _, _, t in PARTITION_FIELDS]

    for m, manifest in zip(request["manifests"], written["manifests"]):
        _, _, records = read_avro(m["path"], strip_logical=True)
        assert len(records) == len(m["entries"])
        for expected, record in zip(m["entries"], records):
            assert record["status"] == expected["status"]
            for key in ("snapshot_id", "sequence_number", "file_sequence_number"):
                assert record[key] == expected.get(key), key  # ADDED entries are written null
            f, want = record["data_file"], expected["data_file"]
            assert f["content"] == want["content"]
            assert f["file_path"] == want["file_path"]
            assert f["file_format"] == want["file_format"]
            got_partition = [raw(v, t) for v, t in zip(f["partition"].values(), types)]
            assert all(same_float(a, b) for a, b in zip(got_partition, want["partition"])), got_partition
            assert f["record_count"] == want["record_count"]
            assert f["file_size_in_bytes"] == want["file_size_in_bytes"]
            for key in ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts", "lower_bounds",
                        "upper_bounds"):
                assert int_map(f[key]) == want.get(key, {}), key
            assert (f["key_metadata"].hex() if f["key_metadata"] else None) == want.get("key_metadata")
            assert (f["split_offsets"] or []) == want.get("split_offsets", [])
            assert (f["equality_ids"] or []) == want.get("equality_ids", [])
            assert f["sort_order_id"] == want.get("sort_order_id")
            assert f["referenced_data_file"] == want.get("referenced_data_file")
            if version == 3:
                for key in ("first_row_id", "content_offset", "content_size_in_bytes"):
                    assert f[key] == want.get(key), key
            else:
                assert "first_row_id" not in f

        # The manifest list entry: counts and partition summaries computed from the entries.
        statuses = [e["status"] for e in m["entries"]]
        rows = [e["data_file"]["record_count"] for e in m["entries"]]
        assert manifest["added_files_count"] == statuses.count(1)
        assert manifest["existing_files_count"] == statuses.count(0)
        assert manifest["deleted_files_count"] == statuses.count(2)
        assert manifest["added_rows_count"] == sum(r for s, r in zip(statuses, rows) if s == 1)
        assert manifest["existing_rows_count"] == sum(r for s, r in zip(statuses, rows) if s == 0)
        assert manifest["deleted_rows_count"] == sum(r for s, r in zip(statuses, rows) if s == 2)
        explicit = [e["sequence_number"] for e in m["entries"] if e["status"] != 2 and e.get("sequence_number")]
        assert manifest["min_sequence_number"] == (min(explicit) if explicit else 9)
        assert manifest["sequence_number"] == 9
        assert manifest["added_snapshot_id"] == 4242
        for k, (summary, t) in enumerate(zip(manifest["partitions"], types)):
            values = [e["data_file"]["partition"][k] for e in m["entries"]]
            assert summary["contains_null"] == any(v is None for v in values)
            assert summary["contains_nan"] == any(v == "NaN" for v in values)
            present = [v for v in values if v is not None and v != "NaN"]
            if not present:
                assert summary["lower_bound"] is None and summary["upper_bound"] is None
                continue
            keyed = present_key(present, t)
            assert bytes.fromhex(summary["lower_bound"]) == min(keyed)[1], (t, summary)
            assert bytes.fromhex(summary["upper_bound"]) == max(keyed)[1], (t, summary)

    _, _, list_records = read_avro(request["list_path"], strip_logical=True)
    for record, manifest in zip(list_records, written["manifests"]):
        for key in ("manifest_path", "manifest_length", "partition_spec_id", "content", "sequence_number",
                    "min_sequence_number", "added_snapshot_id", "added_files_count", "existing_files_count",
                    "deleted_files_count", "added_rows_count", "existing_rows_count", "deleted_rows_count"):
            assert record[key] == manifest[key], key
        assert [{k: (v.hex() if isinstance(v, bytes) else v) for k, v in s.items()} for s in record["partitions"]] \
            == manifest["partitions"]
        if version == 3:
            assert record["first_row_id"] == manifest["first_row_id"]
    if version == 3:
        data_rows = sum(e["data_file"]["record_count"] for e in request["manifests"][0]["entries"] if e["status"] != 2)
        assert written["manifests"][0]["first_row_id"] == 1000
        assert written["manifests"][1]["first_row_id"] is None  # delete manifest
        assert written["added_rows"] == data_rows


def single_value(v, t: str) -> bytes:
    """Appendix D single-value serialisation of a raw value (for bound checks)."""
    import struct

    if t == "boolean":
        return b"\x01" if v else b"\x00"
    if t in ("int", "date"):
        return struct.pack("<i", v)
    if t in ("long", "time", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"):
        return struct.pack("<q", v)
    if t == "float":
        return struct.pack("<f", v)
    if t == "double":
        return struct.pack("<d", v)
    if t == "string":
        return v.encode()
    if t.startswith("decimal"):
        n = int(v)
        length = max(1, (n.bit_length() + 8) // 8)
        return n.to_bytes(length, "big", signed=True)
    return bytes.fromhex(v)  # uuid, fixed, binary


def present_key(values, t: str):
    """(sort key, Appendix D bytes) pairs in the type's order (spec "Sorting")."""
    keys = []
    for v in values:
        if t.startswith("decimal"):
            k = int(v)
        elif t in ("uuid", "binary") or t.startswith("fixed"):
            k = bytes.fromhex(v)
        elif t == "string":
            k = v.encode()
        elif t in ("float", "double"):
            k = (v, math.copysign(1.0, v))  # -0.0 sorts before +0.0
        else:
            k = v
        keys.append((k, single_value(v, t)))
    return keys


# ---------------------------------------------------------------------------------------------
# 2. What we write, read by pyiceberg.

@pytest.mark.parametrize("version", [2, 3])
def test_pyiceberg_reads_what_we_write(tmp_path, version):
    pytest.importorskip("pyiceberg")
    from pyiceberg.io.pyarrow import PyArrowFileIO
    from pyiceberg.manifest import read_manifest_list

    request = build_request(tmp_path, version, delete_codec="zstd")  # pyiceberg reads zstandard itself
    written = write(tmp_path, request)
    io = PyArrowFileIO()
    manifests = list(read_manifest_list(io.new_input(request["list_path"])))
    assert len(manifests) == 2
    types = [t for _, _, t in PARTITION_FIELDS]
    for m, ours, req in zip(manifests, written["manifests"], request["manifests"]):
        assert m.manifest_path == ours["manifest_path"]
        assert m.manifest_length == ours["manifest_length"] == os.path.getsize(local(ours["manifest_path"]))
        assert int(m.content) == ours["content"]
        assert m.sequence_number == ours["sequence_number"]
        assert m.min_sequence_number == ours["min_sequence_number"]
        assert m.added_snapshot_id == ours["added_snapshot_id"]
        assert (m.added_files_count, m.existing_files_count, m.deleted_files_count) == (
            ours["added_files_count"], ours["existing_files_count"], ours["deleted_files_count"])
        assert (m.added_rows_count, m.existing_rows_count, m.deleted_rows_count) == (
            ours["added_rows_count"], ours["existing_rows_count"], ours["deleted_rows_count"])
        assert [(s.contains_null, s.contains_nan, s.lower_bound.hex() if s.lower_bound else None,
                 s.upper_bound.hex() if s.upper_bound else None) for s in m.partitions] == [
            (s["contains_null"], s["contains_nan"], s["lower_bound"], s["upper_bound"]) for s in ours["partitions"]]

        entries = m.fetch_manifest_entry(io, discard_deleted=False)
        assert len(entries) == len(req["entries"])
        for e, want in zip(entries, req["entries"]):
            assert int(e.status) == want["status"]
            if want["status"] == 1:  # pyiceberg inherits as the spec says
                assert (e.snapshot_id, e.sequence_number, e.file_sequence_number) == (4242, 9, 9)
            else:
                assert (e.snapshot_id, e.sequence_number, e.file_sequence_number) == (
                    want["snapshot_id"], want["sequence_number"], want["file_sequence_number"])
            f, w = e.data_file, want["data_file"]
            assert int(f.content) == w["content"]
            assert f.file_path == w["file_path"]
            assert f.file_format.name == w["file_format"]
            assert f.spec_id == 3
            got = [raw(f.partition[k], t) for k, t in enumerate(types)]
            assert all(same_as_pyiceberg(b, a) for a, b in zip(got, w["partition"])), got
            assert f.record_count == w["record_count"]
            assert int_map(f.column_sizes) == w.get("column_sizes", {})
            assert int_map(f.lower_bounds) == w.get("lower_bounds", {})
            assert int_map(f.upper_bounds) == w.get("upper_bounds", {})
            assert (f.split_offsets or []) == w.get("split_offsets", [])
            assert (f.equality_ids or []) == w.get("equality_ids", [])
            assert f.sort_order_id == w.get("sort_order_id")


# ---------------------------------------------------------------------------------------------
# 3. What pyiceberg writes, read by us.

def compare_with_pyiceberg(io, manifest_list_path: str, ours: dict, types_by_manifest=None):
    """Holds the probe's reading of a manifest list (and its manifests) against pyiceberg's."""
    from pyiceberg.manifest import read_manifest_list

    theirs = list(read_manifest_list(io.new_input(manifest_list_path)))
    assert len(theirs) == len(ours["manifests"])
    for m, read in zip(theirs, ours["manifests"]):
        mine = read["manifest"]
        assert mine["manifest_path"] == m.manifest_path
        assert mine["manifest_length"] == m.manifest_length
        assert mine["partition_spec_id"] == m.partition_spec_id
        assert mine["content"] == int(m.content)
        assert mine["sequence_number"] == (m.sequence_number or 0)
        assert mine["min_sequence_number"] == (m.min_sequence_number or 0)
        assert mine["added_snapshot_id"] == m.added_snapshot_id
        for key in ("added_files_count", "existing_files_count", "deleted_files_count", "added_rows_count",
                    "existing_rows_count", "deleted_rows_count"):
            assert mine[key] == getattr(m, key), key
        assert [(s["contains_null"], s["contains_nan"], s["lower_bound"], s["upper_bound"]) for s in mine["partitions"]] \
            == [(s.contains_null, s.contains_nan, s.lower_bound.hex() if s.lower_bound is not None else None,
                 s.upper_bound.hex() if s.upper_bound is not None else None) for s in (m.partitions or [])]

        types = [p["type"] for p in read["partition_type"]]
        entries = m.fetch_manifest_entry(io, discard_deleted=False)
        assert len(entries) == len(read["entries"])
        for e, got in zip(entries, read["entries"]):
            assert got["status"] == int(e.status)
            assert (got["snapshot_id"], got["sequence_number"], got["file_sequence_number"]) == (
                e.snapshot_id, e.sequence_number, e.file_sequence_number)
            f, d = e.data_file, got["data_file"]
            assert d["content"] == int(f.content)
            assert d["file_path"] == f.file_path
            assert d["file_format"] == f.file_format.name
            assert d["spec_id"] == f.spec_id
            theirs_partition = [raw(f.partition[k], t) for k, t in enumerate(types)]
            assert all(same_as_pyiceberg(a, b) for a, b in zip(d["partition"], theirs_partition)), (
                d["partition"], theirs_partition)
            assert len(d["partition"]) == len(f.partition)
            assert d["record_count"] == f.record_count
            assert d["file_size_in_bytes"] == f.file_size_in_bytes
            for key in ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts", "lower_bounds",
                        "upper_bounds"):
                assert d[key] == int_map(getattr(f, key)), key
            assert d["key_metadata"] == (f.key_metadata.hex() if f.key_metadata else None)
            assert d["split_offsets"] == (f.split_offsets or [])
            assert d["equality_ids"] == (f.equality_ids or [])
            assert d["sort_order_id"] == f.sort_order_id


@pytest.mark.parametrize("version", [1, 2])
def test_we_read_tables_pyiceberg_writes(tmp_path, version):
    pa = pytest.importorskip("pyarrow")
    pytest.importorskip("pyiceberg")
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.io.pyarrow import PyArrowFileIO
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import (BooleanType, DateType, DecimalType, IntegerType, LongType, NestedField, StringType,
                                 TimestampType, TimestamptzType)

    catalog = SqlCatalog("oracle", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh")
    catalog.create_namespace("ns")
    schema = Schema(
        NestedField(1, "i", IntegerType(), required=False), NestedField(2, "l", LongType(), required=False),
        NestedField(3, "s", StringType(), required=False), NestedField(4, "dt", DateType(), required=False),
        NestedField(5, "ts", TimestampType(), required=False), NestedField(6, "tz", TimestamptzType(), required=False),
        NestedField(7, "dec", DecimalType(9, 2), required=False), NestedField(8, "b", BooleanType(), required=False),
        NestedField(9, "v", LongType(), required=False))
    spec = PartitionSpec(*[PartitionField(source_id=k, field_id=1000 + k, transform=IdentityTransform(), name=f"p_{k}")
                           for k in range(1, 9)])
    table = catalog.create_table("ns.t", schema=schema, partition_spec=spec,
                                 properties={"format-version": str(version)})
    arrow_schema = table.schema().as_arrow()

    def batch(start: int, n: int):
        rows = range(start, start + n)
        return pa.table({
            "i": [k % 3 if k % 5 else None for k in rows],
            "l": [k % 2 * 10_000_000_000 for k in rows],
            "s": [f"s{k % 2}" if k % 7 else None for k in rows],
            "dt": [datetime.date(2024, 1, 1 + k % 2) for k in rows],
            "ts": [datetime.datetime(2024, 5, 5, k % 2) for k in rows],
            "tz": [datetime.datetime(2024, 5, 5, tzinfo=datetime.timezone.utc) for _ in rows],
            "dec": [decimal.Decimal("1.50") if k % 2 else decimal.Decimal("-3.25") for k in rows],
            "b": [k % 2 == 0 for k in rows],
            "v": list(rows),
        }, schema=arrow_schema)

    table.append(batch(0, 12))
    table.append(batch(100, 6))
    table.delete("i == 1")  # copy-on-write: DELETED entries, rewritten files, EXISTING entries
    table = catalog.load_table("ns.t")
    io = PyArrowFileIO()
    metadata_path = local(table.metadata_location)
    assert len(table.metadata.snapshots) >= 3
    for snapshot in table.metadata.snapshots:
        for extra in ([], ["--metadata", metadata_path]):
            ours = run_probe("read", local(snapshot.manifest_list), *extra)
            assert ours["list"]["format_version"] == version
            assert ours["list"]["snapshot_id"] == snapshot.snapshot_id
            assert ours["list"]["parent_snapshot_id"] == snapshot.parent_snapshot_id
            if version >= 2:
                assert ours["list"]["sequence_number"] == snapshot.sequence_number
            for read in ours["manifests"]:
                assert read["format_version"] == version
                # pyiceberg assigns fresh partition field ids when it creates the table.
                assert [p["id"] for p in read["partition_type"]] == [f.field_id for f in table.spec().fields]
                assert [p["name"] for p in read["partition_type"]] == [f"p_{k}" for k in range(1, 9)]
            compare_with_pyiceberg(io, snapshot.manifest_list, ours)
    last = run_probe("read", local(table.metadata.snapshots[-1].manifest_list))
    statuses = {e["status"] for m in last["manifests"] for e in m["entries"]}
    assert 2 in statuses, "the delete should have left DELETED entries"


@pytest.mark.parametrize("version", [1, 2])
def test_we_read_manifests_pyiceberg_writes_for_every_transform(tmp_path, version):
    pytest.importorskip("pyiceberg")
    from pyiceberg.io.pyarrow import PyArrowFileIO
    from pyiceberg.manifest import (DataFile, DataFileContent, FileFormat, ManifestEntry, ManifestEntryStatus,
                                    write_manifest, write_manifest_list)
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import (BucketTransform, DayTransform, HourTransform, IdentityTransform,
                                      MonthTransform, TruncateTransform, VoidTransform, YearTransform)
    from pyiceberg.typedef import Record
    from pyiceberg.types import (DateType, DecimalType, FixedType, IntegerType, LongType, NestedField, StringType,
                                 TimestampType, TimestamptzType, UUIDType, BinaryType, DoubleType)

    schema = Schema(
        NestedField(1, "i", IntegerType(), required=False), NestedField(2, "l", LongType(), required=False),
        NestedField(3, "s", StringType(), required=False), NestedField(4, "dt", DateType(), required=False),
        NestedField(5, "ts", TimestampType(), required=False), NestedField(6, "tz", TimestamptzType(), required=False),
        NestedField(7, "dec", DecimalType(20, 4), required=False), NestedField(8, "u", UUIDType(), required=False),
        NestedField(9, "fx", FixedType(5), required=False), NestedField(10, "bin", BinaryType(), required=False),
        NestedField(11, "dbl", DoubleType(), required=False))
    fields = [
        (2, "l_bucket", BucketTransform(8)), (3, "s_trunc", TruncateTransform(3)), (4, "dt_year", YearTransform()),
        (5, "ts_month", MonthTransform()), (5, "ts_day", DayTransform()), (6, "tz_hour", HourTransform()),
        (7, "dec", IdentityTransform()), (8, "u", IdentityTransform()), (9, "fx", IdentityTransform()),
        (10, "bin", IdentityTransform()), (11, "dbl", IdentityTransform()), (1, "i_void", VoidTransform()),
        (1, "i-trunc", TruncateTransform(10)),
    ]
    spec = PartitionSpec(*[PartitionField(source_id=s, field_id=1000 + k, transform=t, name=n)
                           for k, (s, n, t) in enumerate(fields)], spec_id=5)
    io = PyArrowFileIO()

    def partition(k: int):
        if k == 2:
            return Record(*([None] * len(fields)))
        return Record(k % 8, f"ab{k}", 54 + k, 650 + k, 19725 + k,
                      473000 + k, decimal.Decimal(f"{k}.1234"), uuid.UUID(int=k * 12345), bytes([k] * 5),
                      bytes([0, k, 255]), float("nan") if k == 3 else -k / 4, None, k * 10)

    manifest_path = f"file://{tmp_path}/pyiceberg-m.avro"
    with write_manifest(format_version=version, spec=spec, schema=schema, output_file=io.new_output(manifest_path),
                        snapshot_id=31, avro_compression="bzip2" if version == 1 else "zstandard") as writer:
        for k in range(6):
            df = DataFile.from_args(
                content=DataFileContent.DATA, file_path=f"s3://b/t/{k}.parquet", file_format=FileFormat.PARQUET,
                partition=partition(k), record_count=10 + k, file_size_in_bytes=1000 + k,
                column_sizes={1: 5 + k}, value_counts={1: 10 + k}, null_value_counts={1: k}, nan_value_counts={11: 1},
                lower_bounds={3: b"ab"}, upper_bounds={3: b"zz"}, split_offsets=[4], sort_order_id=0)
            df.spec_id = 5
            status = [ManifestEntryStatus.ADDED, ManifestEntryStatus.EXISTING, ManifestEntryStatus.DELETED][k % 3]
            entry = ManifestEntry.from_args(status=status, snapshot_id=31 if status != ManifestEntryStatus.EXISTING else 7,
                                            sequence_number=None if status == ManifestEntryStatus.ADDED else 2,
                                            file_sequence_number=None if status == ManifestEntryStatus.ADDED else 2,
                                            data_file=df)
            writer.add_entry(entry)
        manifest = writer.to_manifest_file()
    list_path = f"{tmp_path}/pyiceberg-list.avro"
    with write_manifest_list(format_version=version, output_file=io.new_output(f"file://{list_path}"), snapshot_id=31,
                             parent_snapshot_id=None, sequence_number=4 if version == 2 else None,
                             avro_compression="deflate") as list_writer:
        list_writer.add_manifests([manifest])

    ours = run_probe("read", list_path)
    assert ours["list"]["format_version"] == version
    assert ours["list"]["parent_snapshot_id"] is None
    read = ours["manifests"][0]
    assert read["format_version"] == version
    expected_types = [{"l_bucket": "int", "s_trunc": "string", "dt_year": "int", "ts_month": "int", "ts_day": "date",
                       "tz_hour": "int", "dec": "decimal(20, 4)", "u": "uuid", "fx": "fixed[5]", "bin": "binary",
                       "dbl": "double", "i_void": "int", "i-trunc": "int"}[n] for _, n, _ in fields]
    assert [p["type"] for p in read["partition_type"]] == expected_types
    assert [p["name"] for p in read["partition_type"]] == [n for _, n, _ in fields]
    compare_with_pyiceberg(io, list_path, ours)
    if version == 1:
        for e in read["entries"]:
            assert (e["sequence_number"], e["file_sequence_number"]) == (0, 0)


# ---------------------------------------------------------------------------------------------
# 4. Damaged files: the probe reports a Corrupt error, it does not crash.

def test_damaged_manifests_give_corrupt_errors(tmp_path):
    request = build_request(tmp_path, 2)
    write(tmp_path, request)
    manifest = local(request["manifests"][0]["path"])
    original = Path(manifest).read_bytes()
    for cut in (0, 3, 40, len(original) // 2, len(original) - 1):
        Path(manifest).write_bytes(original[:cut])
        done = subprocess.run([str(PROBE), "read", request["list_path"]], capture_output=True, text=True, timeout=60)
        assert done.returncode == 1, done.stdout
        kind, message = done.stderr.split("\t")[1:3]
        assert kind == "corrupt data", done.stderr
        assert "m-data.avro" in message


# ---------------------------------------------------------------------------------------------
# 5. A whole table whose manifests and manifest lists we wrote, scanned by DuckDB and pyiceberg.

def duckdb_connection():
    duckdb = pytest.importorskip("duckdb")
    ext_iceberg = pytest.importorskip("duckdb_extension_iceberg")
    ext_avro = pytest.importorskip("duckdb_extension_avro")

    def extension(module, name: str) -> str:
        found = sorted(Path(module.__file__).parent.glob(f"extensions/*/{name}.duckdb_extension"))
        if not found:
            pytest.skip(f"the {name} DuckDB extension file is not installed")
        return str(found[-1])

    # The extension packages ship the binaries; DuckDB must not try to download anything.
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    con.execute(f"LOAD '{extension(ext_avro, 'avro')}'")
    con.execute(f"LOAD '{extension(ext_iceberg, 'iceberg')}'")
    return con


def parquet_field(name, type_, field_id):
    pa = pytest.importorskip("pyarrow")
    return pa.field(name, type_, metadata={b"PARQUET:field_id": str(field_id).encode()})


TABLE_E2E_SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": False, "type": "int"},
    {"id": 2, "name": "name", "required": False, "type": "string"},
    {"id": 3, "name": "part", "required": False, "type": "int"}]}
TABLE_E2E_SPEC = {"spec-id": 0, "fields": [{"source-id": 3, "field-id": 1000, "name": "part", "transform": "identity"}]}


def write_data_files(tmp_path: Path) -> dict:
    """part-1 holds ids 1..5, part-2 ids 6..8; returns part -> (location, rows, size)."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    data_schema = pa.schema([parquet_field("id", pa.int32(), 1), parquet_field("name", pa.string(), 2),
                             parquet_field("part", pa.int32(), 3)])
    (tmp_path / "data").mkdir()
    (tmp_path / "metadata").mkdir()
    files = {}
    for part, ids in ((1, [1, 2, 3, 4, 5]), (2, [6, 7, 8])):
        path = tmp_path / "data" / f"part-{part}.parquet"
        pq.write_table(pa.table({"id": ids, "name": [f"n{i}" for i in ids], "part": [part] * len(ids)},
                                schema=data_schema), path)
        files[part] = (f"file://{path}", len(ids), path.stat().st_size)
    return files


def data_entry(files: dict, part: int) -> dict:
    path, rows, size = files[part]
    return {"status": 1, "data_file": {"file_path": path, "file_format": "PARQUET", "partition": [part],
                                       "record_count": rows, "file_size_in_bytes": size,
                                       "value_counts": {"1": rows}, "null_value_counts": {"1": 0}}}


def table_metadata(tmp_path: Path, version: int, snapshots: list, current: int, extra: dict | None = None) -> Path:
    snapshot = snapshots[current]
    doc = {"format-version": version, "table-uuid": "5d2b8e47-13fa-4c69-a0e5-8b71c4f9d326",
           "location": f"file://{tmp_path}", "last-sequence-number": snapshot["sequence-number"],
           "last-updated-ms": snapshot["timestamp-ms"], "last-column-id": 3, "current-schema-id": 0,
           "schemas": [TABLE_E2E_SCHEMA], "default-spec-id": 0, "partition-specs": [TABLE_E2E_SPEC],
           "last-partition-id": 1000, "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}],
           "properties": {}, "current-snapshot-id": snapshot["snapshot-id"],
           "refs": {"main": {"snapshot-id": snapshot["snapshot-id"], "type": "branch"}},
           "snapshots": snapshots[:current + 1],
           "snapshot-log": [{"snapshot-id": s["snapshot-id"], "timestamp-ms": s["timestamp-ms"]}
                            for s in snapshots[:current + 1]],
           "metadata-log": [], **(extra or {})}
    path = tmp_path / "metadata" / f"v{current + 1}.metadata.json"
    path.write_text(json.dumps(doc))
    return path


def test_duckdb_and_pyiceberg_scan_a_table_built_from_our_manifests(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pytest.importorskip("pyiceberg")
    field = parquet_field
    files = write_data_files(tmp_path)
    # Position deletes for rows 0 and 3 of part-1 (ids 1 and 4), scoped to that file.
    pos_path = tmp_path / "data" / "pos-1.parquet"
    pq.write_table(pa.table({"file_path": [files[1][0]] * 2, "pos": [0, 3]},
                            schema=pa.schema([field("file_path", pa.string(), 2147483546),
                                              field("pos", pa.int64(), 2147483545)])), pos_path)
    # An equality delete of id 7 in partition 2, committed one snapshot later.
    eq_path = tmp_path / "data" / "eq-2.parquet"
    pq.write_table(pa.table({"id": [7]}, schema=pa.schema([field("id", pa.int32(), 1)])), eq_path)

    schema, spec = TABLE_E2E_SCHEMA, TABLE_E2E_SPEC

    snap1 = write(tmp_path, {
        "format_version": 2, "schema": schema, "specs": [spec], "snapshot_id": 101, "sequence_number": 1,
        "list_path": str(tmp_path / "metadata" / "snap-101.avro"),
        "manifests": [
            {"path": f"file://{tmp_path}/metadata/m1-data.avro", "spec_id": 0, "entries": [data_entry(files, 1), data_entry(files, 2)]},
            {"path": f"file://{tmp_path}/metadata/m1-deletes.avro", "spec_id": 0, "content": "deletes", "entries": [
                {"status": 1, "data_file": {"content": 1, "file_path": f"file://{pos_path}", "partition": [1],
                                            "record_count": 2, "file_size_in_bytes": pos_path.stat().st_size,
                                            "referenced_data_file": files[1][0]}}]},
        ]})
    write(tmp_path, {
        "format_version": 2, "schema": schema, "specs": [spec], "snapshot_id": 102, "parent_snapshot_id": 101,
        "sequence_number": 2, "list_path": str(tmp_path / "metadata" / "snap-102.avro"),
        "existing_manifests": snap1["manifests"],
        "manifests": [
            {"path": f"file://{tmp_path}/metadata/m2-deletes.avro", "spec_id": 0, "content": "deletes", "entries": [
                {"status": 1, "data_file": {"content": 2, "file_path": f"file://{eq_path}", "partition": [2],
                                            "record_count": 1, "file_size_in_bytes": eq_path.stat().st_size,
                                            "equality_ids": [1]}}]}]})

    snapshots = [
        {"snapshot-id": 101, "sequence-number": 1, "timestamp-ms": 1_700_000_000_000,
         "manifest-list": f"file://{tmp_path}/metadata/snap-101.avro", "summary": {"operation": "overwrite"},
         "schema-id": 0},
        {"snapshot-id": 102, "parent-snapshot-id": 101, "sequence-number": 2, "timestamp-ms": 1_700_000_001_000,
         "manifest-list": f"file://{tmp_path}/metadata/snap-102.avro", "summary": {"operation": "delete"},
         "schema-id": 0},
    ]

    v1, v2 = table_metadata(tmp_path, 2, snapshots, 0), table_metadata(tmp_path, 2, snapshots, 1)
    con = duckdb_connection()
    ids = lambda md: sorted(r[0] for r in con.execute(f"SELECT id FROM iceberg_scan('{md}')").fetchall())
    assert ids(v1) == [2, 3, 5, 6, 7, 8]
    assert ids(v2) == [2, 3, 5, 6, 8]

    # pyiceberg applies the position deletes; it cannot read equality deletes, so only snapshot 101.
    from pyiceberg.table import StaticTable

    table = StaticTable.from_metadata(f"file://{v1}")
    assert sorted(table.scan().to_arrow()["id"].to_pylist()) == [2, 3, 5, 6, 7, 8]


def deletion_vector_puffin(path: Path, referenced: str, positions: list[int]) -> tuple[int, int]:
    """A Puffin file with one deletion-vector-v1 blob, framed here from the Puffin spec (pyroaring
    serialises the 32-bit bitmap). Returns the blob's (offset, length)."""
    import struct
    import zlib

    pyroaring = pytest.importorskip("pyroaring")
    vector = struct.pack("<Q", 1) + struct.pack("<I", 0) + pyroaring.BitMap(positions).serialize()
    magic = bytes([0xD1, 0xD3, 0x39, 0x64])
    blob = struct.pack(">I", 4 + len(vector)) + magic + vector + struct.pack(">I", zlib.crc32(magic + vector))
    payload = json.dumps({"blobs": [{
        "type": "deletion-vector-v1", "fields": [2147483645], "snapshot-id": -1, "sequence-number": -1,
        "offset": 4, "length": len(blob),
        "properties": {"referenced-data-file": referenced, "cardinality": str(len(positions))}}],
        "properties": {"created-by": "lakesync tests"}}).encode()
    path.write_bytes(b"PFA1" + blob + b"PFA1" + payload + struct.pack("<i", len(payload)) + bytes(4) + b"PFA1")
    return 4, len(blob)


def test_v3_deletion_vectors_in_our_manifests_are_applied_by_duckdb_and_pyiceberg(tmp_path):
    pytest.importorskip("pyiceberg")
    files = write_data_files(tmp_path)
    dv_path = tmp_path / "data" / "dv-1.puffin"
    offset, length = deletion_vector_puffin(dv_path, files[1][0], [0, 3])
    written = write(tmp_path, {
        "format_version": 3, "schema": TABLE_E2E_SCHEMA, "specs": [TABLE_E2E_SPEC], "snapshot_id": 201,
        "sequence_number": 1, "first_row_id": 0, "list_path": str(tmp_path / "metadata" / "snap-201.avro"),
        "manifests": [
            {"path": f"file://{tmp_path}/metadata/m-data.avro", "spec_id": 0,
             "entries": [data_entry(files, 1), data_entry(files, 2)]},
            {"path": f"file://{tmp_path}/metadata/m-dv.avro", "spec_id": 0, "content": "deletes", "entries": [
                {"status": 1, "data_file": {"content": 1, "file_format": "PUFFIN", "file_path": f"file://{dv_path}",
                                            "partition": [1], "record_count": 2,
                                            "file_size_in_bytes": dv_path.stat().st_size,
                                            "referenced_data_file": files[1][0], "content_offset": offset,
                                            "content_size_in_bytes": length}}]},
        ]})
    assert written["added_rows"] == 8
    snapshots = [{"snapshot-id": 201, "sequence-number": 1, "timestamp-ms": 1_700_000_000_000,
                  "manifest-list": f"file://{tmp_path}/metadata/snap-201.avro",
                  "summary": {"operation": "overwrite"}, "schema-id": 0, "first-row-id": 0, "added-rows": 8}]
    metadata = table_metadata(tmp_path, 3, snapshots, 0, {"next-row-id": 8})

    # Row lineage as our reader inherits it: part-1 gets ids 0..4, part-2 5..7.
    ours = run_probe("read", str(tmp_path / "metadata" / "snap-201.avro"))
    assert [e["data_file"]["first_row_id"] for e in ours["manifests"][0]["entries"]] == [0, 5]

    con = duckdb_connection()
    rows = sorted(r[0] for r in con.execute(f"SELECT id FROM iceberg_scan('{metadata}')").fetchall())
    assert rows == [2, 3, 5, 6, 7, 8]

    from pyiceberg.table import StaticTable

    table = StaticTable.from_metadata(f"file://{metadata}")
    assert sorted(table.scan().to_arrow()["id"].to_pylist()) == [2, 3, 5, 6, 7, 8]


# ---------------------------------------------------------------------------------------------
# 6. Manifests DuckDB writes, read by us. DuckDB writes Iceberg only through a REST catalog, so a
# minimal one (Flask over pyiceberg's SqlCatalog, just the endpoints DuckDB calls) runs on loopback.

def rest_catalog_over(catalog):
    """Starts a loopback REST catalog over a pyiceberg catalog; returns (url, stop)."""
    flask = pytest.importorskip("flask")
    from werkzeug.serving import make_server
    from pyiceberg.catalog.rest import CreateTableRequest
    from pyiceberg.exceptions import CommitFailedException, NoSuchNamespaceError, NoSuchTableError
    from pyiceberg.table import CommitTableRequest

    app = flask.Flask("rest-oracle")

    class Named:  # what SqlCatalog.commit_table needs of a table: its name (it may not exist yet)
        def __init__(self, identifier):
            self.identifier = identifier

        def name(self):
            return self.identifier

    def error(code, kind, message):
        return flask.Response(json.dumps({"error": {"message": message, "type": kind, "code": code}}), status=code,
                              mimetype="application/json")

    def table_json(metadata_location, metadata):
        return flask.Response(json.dumps({"metadata-location": metadata_location, "config": {},
                                          "metadata": json.loads(metadata.model_dump_json(by_alias=True,
                                                                                          exclude_none=True))}),
                              mimetype="application/json")

    def commit(identifier, body):
        request = CommitTableRequest.model_validate({"identifier": {"namespace": list(identifier[:-1]),
                                                                    "name": identifier[-1]}, **body})
        return catalog.commit_table(Named(identifier), request.requirements, request.updates)

    @app.get("/v1/config")
    def config():
        return flask.jsonify({"defaults": {}, "overrides": {}})

    @app.post("/v1/namespaces")
    def create_namespace():
        body = flask.request.get_json()
        catalog.create_namespace(tuple(body["namespace"]), body.get("properties", {}))
        return flask.jsonify({"namespace": body["namespace"], "properties": body.get("properties", {})})

    @app.route("/v1/namespaces/<ns>", methods=["GET", "HEAD"])
    def load_namespace(ns):
        try:
            return flask.jsonify({"namespace": [ns], "properties": catalog.load_namespace_properties(ns)})
        except NoSuchNamespaceError:
            return error(404, "NoSuchNamespaceException", ns)

    @app.post("/v1/namespaces/<ns>/tables")
    def create_table(ns):
        body = {"location": None, **json.loads(flask.request.data)}
        request = CreateTableRequest.model_validate(body)
        args = {k: v for k, v in dict(schema=request.table_schema, partition_spec=request.partition_spec,
                                      sort_order=request.write_order, properties=request.properties,
                                      location=request.location).items() if v is not None}
        if request.stage_create:  # DuckDB stages, then commits the creation with its first change
            table = catalog._create_staged_table((ns, request.name), **args)
        else:
            table = catalog.create_table((ns, request.name), **args)
        return table_json(table.metadata_location, table.metadata)

    @app.route("/v1/namespaces/<ns>/tables/<name>", methods=["GET", "HEAD"])
    def load_table(ns, name):
        try:
            table = catalog.load_table((ns, name))
        except NoSuchTableError:
            return error(404, "NoSuchTableException", name)
        return table_json(table.metadata_location, table.metadata)

    @app.post("/v1/namespaces/<ns>/tables/<name>")
    def commit_table(ns, name):
        try:
            response = commit((ns, name), json.loads(flask.request.data))
        except CommitFailedException as e:
            return error(409, "CommitFailedException", str(e))
        return table_json(response.metadata_location, response.metadata)

    @app.post("/v1/transactions/commit")
    def commit_transaction():
        for change in json.loads(flask.request.data)["table-changes"]:
            identifier = tuple(change["identifier"]["namespace"]) + (change["identifier"]["name"],)
            try:
                commit(identifier, {k: v for k, v in change.items() if k != "identifier"})
            except CommitFailedException as e:
                return error(409, "CommitFailedException", str(e))
        return flask.Response(status=204)

    server = make_server("127.0.0.1", 0, app)
    import threading

    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_port}", server.shutdown


def test_we_read_manifests_duckdb_writes(tmp_path):
    pytest.importorskip("pyiceberg")
    ext_httpfs = pytest.importorskip("duckdb_extension_httpfs")  # DuckDB's REST client needs httpfs
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.io.pyarrow import PyArrowFileIO

    catalog = SqlCatalog("duck", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh")
    url, stop = rest_catalog_over(catalog)
    try:
        con = duckdb_connection()
        httpfs = sorted(Path(ext_httpfs.__file__).parent.glob("extensions/*/httpfs.duckdb_extension"))
        con.execute(f"LOAD '{httpfs[-1]}'")
        con.execute(f"ATTACH 'wh' AS ice (TYPE iceberg, ENDPOINT '{url}', AUTHORIZATION_TYPE 'none')")
        con.execute("CREATE SCHEMA ice.ns")
        con.execute("CREATE TABLE ice.ns.t (id INTEGER, s VARCHAR, d DATE, amount DECIMAL(9, 2)) "
                    "PARTITIONED BY (year(d), id)")
        con.execute("INSERT INTO ice.ns.t VALUES (1, 'a', '2024-01-01', 1.50), (2, 'b', NULL, NULL), "
                    "(3, NULL, '2023-02-02', -3.25), (1, 'c', '2024-06-01', 0)")
        con.execute("INSERT INTO ice.ns.t VALUES (4, 'd', '2022-01-01', 10)")
        con.execute("DELETE FROM ice.ns.t WHERE s = 'c'")  # merge-on-read: a position delete file
        remaining = sorted(r[0] for r in con.execute("SELECT id FROM ice.ns.t").fetchall())
    finally:
        stop()
    assert remaining == [1, 2, 3, 4]

    table = catalog.load_table(("ns", "t"))
    io = PyArrowFileIO()
    assert len(table.metadata.snapshots) == 3
    saw_deletes = False
    for snapshot in table.metadata.snapshots:
        for extra in ([], ["--metadata", local(table.metadata_location)]):
            ours = run_probe("read", local(snapshot.manifest_list), *extra)
            for read in ours["manifests"]:
                assert [p["type"] for p in read["partition_type"]] == ["int", "int"]
                saw_deletes |= read["manifest"]["content"] == 1
            compare_with_pyiceberg(io, snapshot.manifest_list, ours)
    assert saw_deletes
