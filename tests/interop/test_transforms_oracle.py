"""Partition transforms, single-value codecs and schema JSON, held against pyiceberg 0.12.

lakesync's iceberg_model module (src/lakesync/iceberg/model) is driven through the `model_probe`
program (tests/tools/model_probe.cc), found in LAKESYNC_BUILD_DIR (default /work/main/build). It reads
one JSON request per line ({"type": "decimal(9, 2)", "transform": "bucket[16]", "value": "14.20"}, values
in the spec's Appendix C JSON form) and answers one JSON line each.

The oracle is pyiceberg, used only through its public functions:
- `pyiceberg.transforms` (BucketTransform, TruncateTransform, Year/Month/Day/HourTransform) for the
  transform results and the raw 32-bit bucket hash (`transform(type, bucket=False)`);
- `pyiceberg.conversions.to_bytes` / `from_bytes` for Appendix D binary values, and `to_json` for
  Appendix C text where pyiceberg has it;
- `pyiceberg.schema.Schema` for schema JSON.

Values are generated here: random values from a fixed seed plus edge values (pre-1970 dates and
times, negative and minimal-length decimals, multi-byte UTF-8, extreme integers). Nothing is copied
from another project's tests.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import random
import struct
import subprocess
import uuid
from decimal import Decimal
from pathlib import Path

import pytest

pyiceberg = pytest.importorskip("pyiceberg")

from pyiceberg import conversions  # noqa: E402
from pyiceberg import transforms as tr  # noqa: E402
from pyiceberg import types as it  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402

BUILD_DIR = Path(os.environ.get("LAKESYNC_BUILD_DIR", "/work/main/build"))
PROBE = BUILD_DIR / "model_probe"

pytestmark = pytest.mark.skipif(
    not PROBE.exists(),
    reason=f"{PROBE} is not built (build the model_probe target; set LAKESYNC_BUILD_DIR to the build dir)",
)

SEED = 20260915
N_RANDOM = 400  # random values per type (edge values come on top)

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
EPOCH = dt.datetime(1970, 1, 1)
EPOCH_DATE = dt.date(1970, 1, 1)
# Python's datetime covers years 1..9999, which bounds what pyiceberg's date-based transforms accept.
MIN_DAYS = (dt.date(1, 1, 1) - EPOCH_DATE).days
MAX_DAYS = (dt.date(9999, 12, 31) - EPOCH_DATE).days
MIN_MICROS = MIN_DAYS * 86_400_000_000
MAX_MICROS = (MAX_DAYS + 1) * 86_400_000_000 - 1
DECIMAL_TYPES = [(1, 0), (5, 5), (9, 2), (10, 3), (18, 0), (18, 6), (38, 0), (38, 10), (38, 38)]


# ---------------------------------------------------------------------------------------------
# The probe


def run_probe(requests: list[dict]) -> list[dict]:
    """Sends the requests to model_probe in one run and returns its answers, in order."""
    text = "\n".join(json.dumps(r, ensure_ascii=False) for r in requests) + "\n"
    proc = subprocess.run([str(PROBE)], input=text.encode("utf-8"), capture_output=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    answers = [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines()]
    assert len(answers) == len(requests)
    return answers


def probe_ok(requests: list[dict]) -> list[dict]:
    answers = run_probe(requests)
    for request, answer in zip(requests, answers):
        assert answer["ok"], f"{request} -> {answer}"
    return answers


# ---------------------------------------------------------------------------------------------
# Appendix C text for values, written here (pyiceberg's to_json is used where it exists, and this
# module's own formatting where it does not: nanosecond timestamps, plain-notation decimals).


def decimal_text(unscaled: int, scale: int) -> str:
    sign = "-" if unscaled < 0 else ""
    digits = str(abs(unscaled)).rjust(scale + 1, "0")
    return sign + (digits[:-scale] + "." + digits[-scale:] if scale else digits)


def decimal_value(unscaled: int, scale: int) -> Decimal:
    sign = 1 if unscaled < 0 else 0
    return Decimal((sign, tuple(int(c) for c in str(abs(unscaled))), -scale))


def unscaled_of(value: Decimal, scale: int) -> int:
    """The unscaled integer at `scale`, exactly (Decimal arithmetic would round to 28 digits)."""
    sign, digits, exponent = value.as_tuple()
    unscaled = int("".join(map(str, digits)) or "0") * 10 ** (exponent + scale)
    return -unscaled if sign else unscaled


def nanos_text(nanos: int, utc: bool) -> str:
    seconds, fraction = divmod(nanos, 1_000_000_000)
    stamp = (EPOCH + dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{fraction:09d}" + ("+00:00" if utc else "")


def nanos_from_text(text: str) -> int:
    """Nanoseconds since 1970 of an Appendix C timestamp_ns text (pyiceberg has no JSON codec for it)."""
    stamp, _, fraction = text.removesuffix("+00:00").partition(".")
    seconds = (dt.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S") - EPOCH) // dt.timedelta(seconds=1)
    return seconds * 1_000_000_000 + int(fraction.ljust(9, "0") or "0")


def json_value(type_: it.PrimitiveType, value) -> object:
    """The Appendix C JSON of a pyiceberg-side value."""
    if isinstance(type_, (it.TimestampNanoType, it.TimestamptzNanoType)):
        return nanos_text(value, isinstance(type_, it.TimestamptzNanoType))
    if isinstance(type_, it.DecimalType):
        return decimal_text(unscaled_of(value, type_.scale), type_.scale)
    if isinstance(type_, it.UUIDType):
        return str(value)
    if isinstance(type_, (it.FloatType, it.DoubleType)):
        return value
    return conversions.to_json(type_, value)


def type_name(type_: it.PrimitiveType) -> str:
    return str(type_)


# ---------------------------------------------------------------------------------------------
# Value generators: (pyiceberg-side value) lists per type, edge values first.


def int_values(rng: random.Random, lo: int, hi: int, edges: list[int]) -> list[int]:
    values = [v for v in edges if lo <= v <= hi]
    values += [rng.randint(lo, hi) for _ in range(N_RANDOM)]
    # Small magnitudes, where truncation and bucketing are easiest to get wrong around zero.
    values += [rng.randint(-1000, 1000) for _ in range(N_RANDOM // 4)]
    return values


INT_EDGES = [0, 1, -1, 2, -2, 9, 10, 11, -9, -10, -11, 34, 127, 128, -128, -129, 255, 256, INT32_MIN, INT32_MAX,
             INT32_MIN + 1, INT32_MAX - 1]
LONG_EDGES = INT_EDGES + [INT32_MAX + 1, INT32_MIN - 1, INT64_MIN, INT64_MAX, INT64_MIN + 1, INT64_MAX - 1,
                          2**53, -(2**53) - 1]


def decimal_unscaled_values(rng: random.Random, precision: int) -> list[int]:
    limit = 10**precision - 1
    edges = [0, 1, -1, 127, 128, -128, -129, 255, 256, -256, -257, 32767, 32768, -32768, -32769, limit, -limit]
    # Values at every byte-length boundary of the minimal two's complement encoding.
    for k in range(1, 17):
        edges += [2 ** (8 * k - 1) - 1, 2 ** (8 * k - 1), -(2 ** (8 * k - 1)), -(2 ** (8 * k - 1)) - 1]
    values = [v for v in edges if -limit <= v <= limit]
    values += [rng.randint(-limit, limit) for _ in range(N_RANDOM)]
    # Random magnitudes (uniform over digit counts, not over values).
    for _ in range(N_RANDOM // 2):
        digits = rng.randint(1, precision)
        values.append(rng.choice([-1, 1]) * rng.randint(0, 10**digits - 1))
    return values


def date_values(rng: random.Random) -> list[int]:
    edges = [0, -1, 1, -365, -366, -31, -32, 59, 60, -25508, MIN_DAYS, MAX_DAYS, 11016, 17486,
             (dt.date(1582, 10, 4) - EPOCH_DATE).days, (dt.date(1900, 2, 28) - EPOCH_DATE).days,
             (dt.date(2000, 2, 29) - EPOCH_DATE).days]
    return edges + [rng.randint(MIN_DAYS, MAX_DAYS) for _ in range(N_RANDOM)] + [
        rng.randint(-800, 800) for _ in range(N_RANDOM // 4)
    ]


def time_values(rng: random.Random) -> list[int]:
    edges = [0, 1, 999_999, 1_000_000, 81_068_000_000, 86_399_999_999, 3_600_000_000 - 1]
    return edges + [rng.randint(0, 86_399_999_999) for _ in range(N_RANDOM)]


def micros_values(rng: random.Random) -> list[int]:
    day, hour = 86_400_000_000, 3_600_000_000
    edges = [0, 1, -1, hour, -hour, -hour - 1, day, -day, -day - 1, 1_510_871_468_000_000, 1_510_871_468_000_001,
             -2_208_988_800_000_000, MIN_MICROS, MAX_MICROS]
    return edges + [rng.randint(MIN_MICROS, MAX_MICROS) for _ in range(N_RANDOM)] + [
        rng.randint(-3 * day, 3 * day) for _ in range(N_RANDOM // 4)
    ]


def nanos_values(rng: random.Random) -> list[int]:
    day, hour = 86_400_000_000_000, 3_600_000_000_000
    edges = [0, 1, -1, 999, -999, 1000, -1000, -1001, hour, -hour, -hour - 1, day, -day, -day - 1,
             1_510_871_468_000_001_001, INT64_MIN, INT64_MAX]
    return edges + [rng.randint(INT64_MIN, INT64_MAX) for _ in range(N_RANDOM)] + [
        rng.randint(-3 * day, 3 * day) for _ in range(N_RANDOM // 4)
    ]


# Code points from several UTF-8 lengths: ASCII, Latin-1 and Greek (2 bytes), CJK and symbols (3),
# emoji and other astral planes (4); combining marks count as code points of their own.
ALPHABET = (
    [chr(c) for c in range(0x20, 0x7F)]
    + list("éüßøñçΩλж\u0301\u0308")
    + list("日本語中文한국어€₹")
    + ["\U0001F600", "\U0001F680", "\U0001D11E", "\U00020000"]
)


def string_values(rng: random.Random) -> list[str]:
    edges = ["", "a", "iceberg", "é", "été", "日本語", "\U0001F600\U0001F601", "a\u0301b", "abc\U0001F600def"]
    return edges + ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 20))) for _ in range(N_RANDOM)]


def bytes_values(rng: random.Random, length: int | None) -> list[bytes]:
    values = [] if length else [b"", b"\x00", b"\xff", bytes([0, 1, 2, 3])]
    for _ in range(N_RANDOM):
        n = length if length is not None else rng.randint(0, 40)
        values.append(bytes(rng.getrandbits(8) for _ in range(n)))
    return values


def uuid_values(rng: random.Random) -> list[uuid.UUID]:
    edges = [uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"), uuid.UUID(int=0), uuid.UUID(int=2**128 - 1)]
    return edges + [uuid.UUID(int=rng.getrandbits(128)) for _ in range(N_RANDOM)]


def typed_values() -> list[tuple[it.PrimitiveType, list]]:
    """Every primitive type a transform applies to, with its values."""
    rng = random.Random(SEED)
    out: list[tuple[it.PrimitiveType, list]] = [
        (it.IntegerType(), int_values(rng, INT32_MIN, INT32_MAX, INT_EDGES)),
        (it.LongType(), int_values(rng, INT64_MIN, INT64_MAX, LONG_EDGES)),
    ]
    for precision, scale in DECIMAL_TYPES:
        out.append((it.DecimalType(precision, scale),
                    [decimal_value(v, scale) for v in decimal_unscaled_values(rng, precision)]))
    out += [
        (it.DateType(), date_values(rng)),
        (it.TimeType(), time_values(rng)),
        (it.TimestampType(), micros_values(rng)),
        (it.TimestamptzType(), micros_values(rng)),
        (it.TimestampNanoType(), nanos_values(rng)),
        (it.TimestamptzNanoType(), nanos_values(rng)),
        (it.StringType(), string_values(rng)),
        (it.UUIDType(), uuid_values(rng)),
        (it.FixedType(1), bytes_values(rng, 1)),
        (it.FixedType(16), bytes_values(rng, 16)),
        (it.BinaryType(), bytes_values(rng, None)),
    ]
    return out


TYPED_VALUES = typed_values()


def ids(cases) -> list[str]:
    return [str(t) for t, _ in cases]


# ---------------------------------------------------------------------------------------------
# Comparing a probe result (Appendix C JSON in the transform's result type) with pyiceberg's value


def result_from_json(result_type: str, result, source: it.PrimitiveType):
    if result is None:
        return None
    if result_type == "date":
        return (dt.date.fromisoformat(result) - EPOCH_DATE).days
    if result_type in ("int", "long"):
        return result
    if isinstance(source, it.DecimalType):
        return Decimal(result)
    if isinstance(source, it.BinaryType):
        return bytes.fromhex(result)
    return result


def check_transform(transform, transform_text: str, type_: it.PrimitiveType, values: list) -> None:
    # Every (transform, type) pair listed here is one pyiceberg 0.12 applies: a pair it refuses is a
    # mistake in the list, not a skip.
    assert transform.can_transform(type_), f"pyiceberg does not apply {transform_text} to {type_}"
    func = transform.transform(type_)
    requests = [{"type": type_name(type_), "transform": transform_text, "value": json_value(type_, v)} for v in values]
    answers = probe_ok(requests)
    mismatches = []
    for value, request, answer in zip(values, requests, answers):
        expected = func(value)
        got = result_from_json(answer["result_type"], answer["result"], type_)
        if got != expected:
            mismatches.append((request["value"], expected, answer["result"]))
        elif isinstance(type_, it.DecimalType) and answer["result_type"].startswith("decimal"):
            # The result keeps the column's scale: exactly `scale` digits after the point.
            fraction = answer["result"].partition(".")[2]
            if len(fraction) != type_.scale:
                mismatches.append((request["value"], expected, answer["result"]))
    assert not mismatches, f"{len(mismatches)} of {len(values)} differ from pyiceberg, first: {mismatches[:5]}"


# ---------------------------------------------------------------------------------------------
# Transforms

BUCKETABLE = [(t, v) for t, v in TYPED_VALUES if tr.BucketTransform(2).can_transform(t)]
TRUNCATABLE = [(t, v) for t, v in TYPED_VALUES if tr.TruncateTransform(2).can_transform(t)]
TEMPORAL = [(t, v) for t, v in TYPED_VALUES if tr.DayTransform().can_transform(t)]


def test_every_transformable_type_is_covered():
    names = {str(t) for t, _ in TYPED_VALUES}
    for t in ["int", "long", "date", "time", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns", "string",
              "uuid", "fixed[16]", "binary", "decimal(9, 2)"]:
        assert t in names
    # pyiceberg 0.12 buckets and truncates the types the spec lists, nanosecond timestamps included.
    assert {str(t) for t, _ in BUCKETABLE} == names
    assert {str(t) for t, _ in TRUNCATABLE} == {n for n in names if n in ("int", "long", "string", "binary")
                                                or n.startswith("decimal")}
    assert {str(t) for t, _ in TEMPORAL} == {"date", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"}


@pytest.mark.parametrize("num_buckets", [1, 2, 16, 100, 1024, INT32_MAX])
@pytest.mark.parametrize("type_,values", BUCKETABLE, ids=ids(BUCKETABLE))
def test_bucket_matches_pyiceberg(type_, values, num_buckets):
    check_transform(tr.BucketTransform(num_buckets), f"bucket[{num_buckets}]", type_, values)


@pytest.mark.parametrize("type_,values", BUCKETABLE, ids=ids(BUCKETABLE))
def test_bucket_hash_matches_pyiceberg(type_, values):
    func = tr.BucketTransform(2).transform(type_, bucket=False)
    requests = [{"op": "hash", "type": type_name(type_), "value": json_value(type_, v)} for v in values]
    answers = probe_ok(requests)
    mismatches = [(r["value"], func(v), a["hash"])
                  for v, r, a in zip(values, requests, answers) if func(v) != a["hash"]]
    assert not mismatches, f"{len(mismatches)} of {len(values)} hashes differ, first: {mismatches[:5]}"


@pytest.mark.parametrize("width", [1, 2, 3, 4, 10, 50, 100, 1000, 65536])
@pytest.mark.parametrize("type_,values", TRUNCATABLE, ids=ids(TRUNCATABLE))
def test_truncate_matches_pyiceberg(type_, values, width):
    if isinstance(type_, it.DecimalType):
        # pyiceberg truncates the unscaled value with Python's unbounded ints; a result below
        # -(10^P - 1) has no decimal(P, S) representation, so keep inputs whose result fits.
        limit = 10**type_.precision - 1
        fits = tr.TruncateTransform(width).transform(type_)
        values = [v for v in values if abs(unscaled_of(fits(v), type_.scale)) <= limit]
    if isinstance(type_, (it.IntegerType, it.LongType)):
        # Likewise for integers: the result must fit the column's type (Java wraps, Python does not).
        lo = INT32_MIN if isinstance(type_, it.IntegerType) else INT64_MIN
        values = [v for v in values if v - (v % width) >= lo]
    check_transform(tr.TruncateTransform(width), f"truncate[{width}]", type_, values)


TIME_TRANSFORMS = [(tr.YearTransform(), "year"), (tr.MonthTransform(), "month"), (tr.DayTransform(), "day"),
                   (tr.HourTransform(), "hour")]
TIME_CASES = [(transform, text, t, v) for transform, text in TIME_TRANSFORMS for t, v in TEMPORAL
              if transform.can_transform(t)]


@pytest.mark.parametrize("transform,text,type_,values", TIME_CASES,
                         ids=[f"{text}-{t}" for _, text, t, _ in TIME_CASES])
def test_time_transforms_match_pyiceberg(transform, text, type_, values):
    # Pre-1970 values are among them: every unit floors (one microsecond before 1970 is year, month,
    # day and hour -1). Nanosecond values cover the whole int64 range (years 1677..2262).
    check_transform(transform, text, type_, values)


def test_time_cases_cover_every_temporal_type():
    assert len(TIME_CASES) == 3 * 5 + 4  # year/month/day on date and 4 timestamps; hour on timestamps


def test_identity_and_void():
    answers = probe_ok([
        {"type": "decimal(9, 2)", "transform": "identity", "value": "-0.05"},
        {"type": "string", "transform": "void", "value": "x"},
        {"type": "long", "transform": "bucket[4]", "value": None},
    ])
    assert answers[0]["result"] == "-0.05"
    assert answers[1]["result"] is None
    assert answers[2]["result"] is None


# ---------------------------------------------------------------------------------------------
# Single-value binary (Appendix D) and JSON (Appendix C) serialization


def float32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def serializable_values() -> list[tuple[it.PrimitiveType, list]]:
    rng = random.Random(SEED + 1)
    floats = [0.0, -0.0, 1.0, -2.5, float32(1e-30), float32(3.4e38), float32(0.1)] + [
        float32(rng.uniform(-1e6, 1e6)) for _ in range(N_RANDOM)
    ]
    doubles = [0.0, -0.0, 1.0, -2.5, 5e-324, 1.7976931348623157e308, 0.1] + [
        rng.uniform(-1e300, 1e300) for _ in range(N_RANDOM)
    ]
    return [(it.BooleanType(), [True, False]), (it.FloatType(), floats), (it.DoubleType(), doubles)] + TYPED_VALUES


SERIALIZABLE = serializable_values()


@pytest.mark.parametrize("type_,values", SERIALIZABLE, ids=ids(SERIALIZABLE))
def test_binary_single_values_match_pyiceberg(type_, values):
    requests = [{"op": "to_bytes", "type": type_name(type_), "value": json_value(type_, v)} for v in values]
    answers = probe_ok(requests)
    mismatches = []
    for value, request, answer in zip(values, requests, answers):
        expected = conversions.to_bytes(type_, value).hex()
        if answer["hex"] != expected:
            mismatches.append((request["value"], expected, answer["hex"]))
    assert not mismatches, f"{len(mismatches)} of {len(values)} differ, first: {mismatches[:5]}"


@pytest.mark.parametrize("type_,values", SERIALIZABLE, ids=ids(SERIALIZABLE))
def test_binary_single_values_from_pyiceberg_decode(type_, values):
    encoded = [conversions.to_bytes(type_, v) for v in values]
    answers = probe_ok([{"op": "from_bytes", "type": type_name(type_), "hex": b.hex()} for b in encoded])
    mismatches = []
    for value, raw, answer in zip(values, encoded, answers):
        # Decode our JSON back to pyiceberg's value through pyiceberg where it can, else directly.
        got = answer["value"]
        if isinstance(type_, it.DecimalType):
            same = Decimal(got) == value and len(got.partition(".")[2]) == type_.scale
        elif isinstance(type_, (it.FloatType, it.DoubleType)):
            same = got == value and math.copysign(1, got) == math.copysign(1, value)
        elif isinstance(type_, it.UUIDType):
            same = uuid.UUID(got) == value and got == got.lower()
        elif isinstance(type_, (it.TimestampNanoType, it.TimestamptzNanoType)):
            same = nanos_from_text(got) == value and got.endswith("+00:00") == isinstance(type_, it.TimestamptzNanoType)
        else:
            same = got == json_value(type_, value) or conversions.from_json(type_, got) == conversions.from_json(
                type_, json_value(type_, value))
        if not same:
            mismatches.append((raw.hex(), json_value(type_, value), got))
    assert not mismatches, f"{len(mismatches)} of {len(values)} differ, first: {mismatches[:5]}"


def test_decimal_binary_lengths_are_minimal():
    # The spec asks for the minimum number of bytes; -128 fits one byte, 128 needs two.
    cases = {0: "00", -1: "ff", 127: "7f", 128: "0080", -128: "80", -129: "ff7f", 32767: "7fff", -32768: "8000"}
    answers = probe_ok([{"op": "to_bytes", "type": "decimal(9, 0)", "value": str(v)} for v in cases])
    assert [a["hex"] for a in answers] == list(cases.values())
    for v, hex_ in cases.items():
        assert conversions.to_bytes(it.DecimalType(9, 0), Decimal(v)).hex() == hex_


JSON_TYPES = [
    (t, v) for t, v in SERIALIZABLE
    if not isinstance(t, (it.TimestampNanoType, it.TimestamptzNanoType, it.FloatType, it.DoubleType))
]


@pytest.mark.parametrize("type_,values", JSON_TYPES, ids=ids(JSON_TYPES))
def test_json_single_values_agree_with_pyiceberg(type_, values):
    """pyiceberg's to_json text parses in lakesync, and lakesync's text parses in pyiceberg to the same value."""
    texts = [conversions.to_json(type_, v) for v in values]
    answers = probe_ok([{"op": "json", "type": type_name(type_), "value": t} for t in texts])
    mismatches = []
    for value, text, answer in zip(values, texts, answers):
        ours = answer["value"]
        if isinstance(type_, it.DecimalType):
            # pyiceberg writes str(Decimal), which uses scientific notation for small values ("1E-10");
            # lakesync writes plain notation with exactly `scale` digits, as the spec asks.
            same = Decimal(ours) == value and len(ours.partition(".")[2]) == type_.scale and "E" not in ours
        elif isinstance(type_, it.UUIDType):
            same = ours == str(value)
        else:
            same = conversions.from_json(type_, ours) == conversions.from_json(type_, text)
        if not same:
            mismatches.append((text, ours))
    assert not mismatches, f"{len(mismatches)} of {len(values)} differ, first: {mismatches[:5]}"


def test_nanosecond_json_round_trips():
    rng = random.Random(SEED + 2)
    values = nanos_values(rng)
    for type_ in ("timestamp_ns", "timestamptz_ns"):
        utc = type_ == "timestamptz_ns"
        answers = probe_ok([{"op": "json", "type": type_, "value": nanos_text(v, utc)} for v in values])
        for v, a in zip(values, answers):
            # Same instant: our text may drop trailing zeros of the fraction.
            assert nanos_from_text(a["value"]) == v, (v, a["value"])
            assert a["value"].endswith("+00:00") == utc


# ---------------------------------------------------------------------------------------------
# Type names and schema JSON


def test_type_names_written_by_pyiceberg_parse():
    types = [it.BooleanType(), it.IntegerType(), it.LongType(), it.FloatType(), it.DoubleType(), it.DateType(),
             it.TimeType(), it.TimestampType(), it.TimestamptzType(), it.TimestampNanoType(),
             it.TimestamptzNanoType(), it.StringType(), it.UUIDType(), it.BinaryType(), it.UnknownType(),
             it.FixedType(1), it.FixedType(16), it.DecimalType(1, 0), it.DecimalType(10, 2), it.DecimalType(38, 38),
             it.GeometryType(), it.GeographyType()]
    answers = probe_ok([{"op": "parse_type", "type": str(t)} for t in types])
    assert [a["type"] for a in answers] == [str(t) for t in types]
    # Forms other writers use (Java lower-cases; the spec allows whitespace around parameters).
    variants = {"decimal(10,2)": "decimal(10, 2)", "decimal( 10 , 2 )": "decimal(10, 2)",
                "DECIMAL(10, 2)": "decimal(10, 2)", "fixed[ 16 ]": "fixed[16]", "Long": "long",
                "TIMESTAMPTZ_NS": "timestamptz_ns"}
    answers = probe_ok([{"op": "parse_type", "type": k} for k in variants])
    assert [a["type"] for a in answers] == list(variants.values())
    # And what we print, pyiceberg reads back as the same type.
    for t, a in zip(types, probe_ok([{"op": "parse_type", "type": str(t)} for t in types])):
        schema = Schema.model_validate_json(json.dumps(
            {"type": "struct", "fields": [{"id": 1, "name": "c", "type": a["type"], "required": False}]}))
        assert schema.find_field(1).field_type == t


def nested_schemas() -> list[Schema]:
    NF = it.NestedField
    point = it.StructType(NF(10, "x", it.LongType(), required=True), NF(11, "y", it.DoubleType(), required=False))
    return [
        Schema(NF(1, "id", it.LongType(), required=True), NF(2, "data", it.StringType(), required=False),
               schema_id=0, identifier_field_ids=[1]),
        Schema(
            NF(1, "id", it.LongType(), required=True),
            NF(2, "amount", it.DecimalType(38, 10), required=False, doc="in euros"),
            NF(3, "location", point, required=True),
            NF(4, "tags", it.ListType(5, it.StringType(), element_required=True), required=False),
            NF(6, "attrs", it.MapType(7, it.StringType(), 8, it.FixedType(16), value_required=False), required=False),
            NF(9, "when", it.TimestamptzNanoType(), required=False),
            NF(12, "points", it.ListType(13, it.StructType(NF(14, "p", it.UUIDType(), required=True),
                                                             NF(15, "q", it.BinaryType(), required=False)),
                                         element_required=False), required=False),
            NF(16, "nested", it.MapType(17, it.IntegerType(), 18,
                                        it.MapType(19, it.DateType(), 20, it.ListType(21, it.TimeType())),
                                        value_required=True), required=True),
            schema_id=7, identifier_field_ids=[1, 10],
        ),
        Schema(
            NF(1, "u", it.UnknownType(), required=False),
            NF(2, "flag", it.BooleanType(), required=False, initial_default=True, write_default=False),
            NF(3, "n", it.IntegerType(), required=False, initial_default=34, write_default=35),
            schema_id=3,
        ),
    ]


@pytest.mark.parametrize("index", range(3))
def test_schema_json_round_trips_through_pyiceberg(index):
    original = nested_schemas()[index]
    ours = probe_ok([{"op": "schema", "schema": json.loads(original.model_dump_json())}])[0]["schema"]
    back = Schema.model_validate_json(json.dumps(ours))
    assert back.schema_id == original.schema_id
    assert list(back.identifier_field_ids) == list(original.identifier_field_ids)
    assert len(back.fields) == len(original.fields)
    for a, b in zip(original.fields, back.fields):
        assert a == b, f"{a} != {b}"
    # Field by field at every depth, including ids and requiredness of list elements and map values.
    for field_id in range(1, 22):
        try:
            expected = original.find_field(field_id)
        except ValueError:
            continue
        got = back.find_field(field_id)
        assert (got.name, got.field_type, got.required, got.doc) == (
            expected.name, expected.field_type, expected.required, expected.doc)
        assert original.find_column_name(field_id) == back.find_column_name(field_id)
    assert back == original
