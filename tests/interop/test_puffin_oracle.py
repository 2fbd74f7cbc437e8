"""Deletion vectors, portable Roaring64 bitmaps and Puffin files, held against independent readers.

lakesync's codecs (src/lakesync/formats/puffin) are driven through the `dv_probe` program
(tests/tools/dv_probe.cc), found in LAKESYNC_BUILD_DIR (default /work/main/build). The oracles are:

- pyroaring (CRoaring's Python binding) for each 32-bit Roaring bitmap. The 64-bit "portable"
  framing around them (uint64 LE bucket count; per bucket a uint32 LE key and a 32-bit bitmap) and
  the deletion-vector-v1 framing (big-endian length, magic D1 D3 39 64, big-endian CRC-32 over magic
  and vector) are parsed here by hand from the Puffin spec and RoaringFormatSpec; the 32-bit bitmap's
  length is computed here from its headers, not taken from either library.
- zlib.crc32 for the checksum, zstandard for compressed Puffin blobs.
- pyiceberg's Puffin reader and deletion-vector decoder (PuffinFile, deletion_vectors_from_puffin_file)
  for whole Puffin files written by lakesync.

The expected positions of the corpus files (../shared/corpora/iceberg-vectors, written by Iceberg
Java) come only from these oracles; nothing is copied from upstream tests.
"""

from __future__ import annotations

import json
import os
import random
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

pyroaring = pytest.importorskip("pyroaring")
BitMap = pyroaring.BitMap

BUILD_DIR = Path(os.environ.get("LAKESYNC_BUILD_DIR", "/work/main/build"))
PROBE = BUILD_DIR / "dv_probe"
REPO = Path(__file__).resolve().parents[2]
SHARED_DIR = Path(os.environ.get("LAKESYNC_SHARED_DIR", REPO.parent / "shared"))
CORPUS = SHARED_DIR / "corpora" / "iceberg-vectors"

pytestmark = [
    pytest.mark.skipif(
        not PROBE.exists(),
        reason=f"{PROBE} is not built (build the dv_probe target; set LAKESYNC_BUILD_DIR to the build dir)",
    ),
    pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus {CORPUS} not found (set LAKESYNC_SHARED_DIR)"),
]

DV_MAGIC = bytes([0xD1, 0xD3, 0x39, 0x64])
CORPUS_DVS = [
    "empty-position-index.bin",
    "small-alternating-values-position-index.bin",
    "small-and-large-values-position-index.bin",
    "all-container-types-position-index.bin",
]
CORPUS_ROARING64 = ["64mapempty.bin", "64map32bitvals.bin", "64mapspreadvals.bin"]


# ---------------------------------------------------------------------------------------------
# The oracle: framing parsed by hand, 32-bit bitmaps by pyroaring.


class OracleError(ValueError):
    pass


def bitmap32_size(buf: bytes, pos: int) -> int:
    """Byte length of the portable 32-bit Roaring bitmap at buf[pos:], from RoaringFormatSpec."""
    start = pos

    def u16(at: int) -> int:
        if at + 2 > len(buf):
            raise OracleError("truncated 32-bit bitmap")
        return struct.unpack_from("<H", buf, at)[0]

    def u32(at: int) -> int:
        if at + 4 > len(buf):
            raise OracleError("truncated 32-bit bitmap")
        return struct.unpack_from("<I", buf, at)[0]

    cookie = u32(pos)
    pos += 4
    if cookie == 12346:
        count = u32(pos)
        pos += 4
        run_flags = None
        has_offsets = True
    elif cookie & 0xFFFF == 12347:
        count = (cookie >> 16) + 1
        run_flags = buf[pos : pos + (count + 7) // 8]
        pos += (count + 7) // 8
        has_offsets = count >= 4
    else:
        raise OracleError(f"bad cookie {cookie}")
    cards = [u16(pos + 4 * i + 2) + 1 for i in range(count)]
    pos += 4 * count
    if has_offsets:
        pos += 4 * count
    for i, card in enumerate(cards):
        if run_flags is not None and run_flags[i // 8] >> (i % 8) & 1:
            pos += 2 + 4 * u16(pos)
        elif card > 4096:
            pos += 8192
        else:
            pos += 2 * card
    if pos > len(buf):
        raise OracleError("truncated 32-bit bitmap")
    return pos - start


def oracle_decode_roaring64(data: bytes) -> tuple[list[int], list[int]]:
    """Positions (sorted) and the bucket keys in file order."""
    if len(data) < 8:
        raise OracleError("no bucket count")
    (count,) = struct.unpack_from("<Q", data, 0)
    pos = 8
    positions: list[int] = []
    keys: list[int] = []
    for _ in range(count):
        if pos + 4 > len(data):
            raise OracleError("truncated key")
        (key,) = struct.unpack_from("<I", data, pos)
        pos += 4
        if key & 0x80000000:
            raise OracleError(f"key {key:#x} has the most significant bit set")
        if keys and key <= keys[-1]:
            raise OracleError("keys not ascending")
        keys.append(key)
        size = bitmap32_size(data, pos)
        bitmap = BitMap.deserialize(data[pos : pos + size])
        pos += size
        positions.extend((key << 32) | low for low in bitmap)
    if pos != len(data):
        raise OracleError(f"{len(data) - pos} trailing bytes")
    return positions, keys


def oracle_decode_dv(blob: bytes) -> tuple[list[int], list[int]]:
    if len(blob) < 20:
        raise OracleError("blob too short")
    (length,) = struct.unpack_from(">I", blob, 0)
    if length != len(blob) - 8:
        raise OracleError(f"length field {length} != blob size {len(blob)} - 8")
    if blob[4:8] != DV_MAGIC:
        raise OracleError("bad magic")
    (crc,) = struct.unpack_from(">I", blob, 4 + length)
    if zlib.crc32(blob[4 : 4 + length]) != crc:
        raise OracleError("CRC mismatch")
    return oracle_decode_roaring64(blob[8 : 4 + length])


def oracle_encode_roaring64(positions: list[int], dense: bool, optimize: bool = True) -> bytes:
    by_key: dict[int, BitMap] = {}
    for p in positions:
        by_key.setdefault(p >> 32, BitMap()).add(p & 0xFFFFFFFF)
    keys = sorted(by_key)
    if dense and keys:
        keys = list(range(keys[-1] + 1))
    out = bytearray(struct.pack("<Q", len(keys)))
    for key in keys:
        bitmap = by_key.get(key, BitMap())
        if optimize:
            bitmap.run_optimize()
        out += struct.pack("<I", key) + bitmap.serialize()
    return bytes(out)


def oracle_encode_dv(positions: list[int], dense: bool = True, optimize: bool = True) -> bytes:
    covered = DV_MAGIC + oracle_encode_roaring64(positions, dense, optimize)
    return struct.pack(">I", len(covered)) + covered + struct.pack(">I", zlib.crc32(covered))


# ---------------------------------------------------------------------------------------------
# Driving the probe.


def probe(*args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([str(PROBE), *args], input=stdin, capture_output=True, text=True, timeout=120)
    if check and result.returncode != 0:
        raise AssertionError(f"dv_probe {' '.join(args[:2])} failed: {result.stderr}")
    return result


def probe_positions(command: str, path: Path, *extra: str) -> list[int]:
    return [int(line) for line in probe(command, str(path), *extra).stdout.split()]


def random_positions(rng: random.Random, shape: str) -> list[int]:
    s: set[int] = set()
    if shape == "empty":
        pass
    elif shape == "small":
        s = {rng.randrange(0, 1000) for _ in range(rng.randrange(1, 30))}
    elif shape == "dense":
        start = rng.randrange(0, 1 << 20)
        s = {p for p in range(start, start + rng.randrange(1, 150_000)) if rng.random() < 0.9}
    elif shape == "long-runs":
        for _ in range(5):
            start = rng.randrange(0, 1 << 33)
            s.update(range(start, start + rng.randrange(1, 200_000)))
    elif shape == "sparse":
        s = {rng.randrange(0, 1 << 31) for _ in range(3000)}
    elif shape == "around-2^31":
        s = {(1 << 31) + rng.randrange(-70_000, 70_000) for _ in range(2000)}
    elif shape == "around-2^32":
        s = {(1 << 32) + rng.randrange(-70_000, 70_000) for _ in range(2000)}
    elif shape == "many-keys":
        s = {(rng.randrange(0, 40) << 32) | rng.randrange(0, 1 << 32) for _ in range(500)}
    elif shape == "gaps":
        # Keys 2, 5 and 9 only: Java's layout must still write empty buckets for keys 0-1, 3-4, 6-8.
        s = {(key << 32) | rng.randrange(0, 1 << 32) for key in (2, 5, 9) for _ in range(50)}
    elif shape == "bitset":
        base = rng.randrange(0, 1 << 34) & ~0xFFFF
        s = {base + rng.randrange(0, 1 << 16) for _ in range(20_000)}
    else:
        raise ValueError(shape)
    return sorted(s)


SHAPES = [
    "empty", "small", "dense", "long-runs", "sparse", "around-2^31", "around-2^32", "many-keys", "gaps", "bitset"
]


# ---------------------------------------------------------------------------------------------
# Corpus files written by Iceberg Java.


@pytest.mark.parametrize("name", CORPUS_DVS)
def test_corpus_deletion_vectors_match_oracle(name):
    path = CORPUS / name
    expected, _ = oracle_decode_dv(path.read_bytes())
    assert probe_positions("decode-dv", path) == expected
    # The decoder's cardinality check accepts the oracle's count and refuses any other.
    probe("decode-dv", str(path), str(len(expected)))
    wrong = probe("decode-dv", str(path), str(len(expected) + 1), check=False)
    assert wrong.returncode == 1 and "cardinality mismatch" in wrong.stderr


@pytest.mark.parametrize("name", CORPUS_ROARING64)
def test_corpus_roaring64_files_match_oracle(name):
    path = CORPUS / name
    expected, _ = oracle_decode_roaring64(path.read_bytes())
    assert probe_positions("decode-roaring64", path) == expected


def test_corpus_high_values_file_is_rejected_by_both():
    path = CORPUS / "64maphighvals.bin"
    with pytest.raises(OracleError, match="most significant bit"):
        oracle_decode_roaring64(path.read_bytes())
    result = probe("decode-roaring64", str(path), check=False)
    assert result.returncode == 1
    assert "corrupt data" in result.stderr and "most significant bit set" in result.stderr
    assert "0xEFBDBFEF" in result.stderr  # the message names the offending key


@pytest.mark.parametrize("name", CORPUS_DVS)
def test_reencoded_corpus_deletion_vectors_equal_java_bytes(name, tmp_path):
    blob = (CORPUS / name).read_bytes()
    positions, _ = oracle_decode_dv(blob)
    out = tmp_path / "dv.bin"
    probe("encode-dv", str(out), "-", stdin="\n".join(map(str, positions)))
    assert out.read_bytes() == blob


# ---------------------------------------------------------------------------------------------
# Random sets in both directions.


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", [1, 2])
def test_lakesync_encoded_deletion_vectors_decode_with_oracle(shape, seed, tmp_path):
    positions = random_positions(random.Random(f"{shape}/{seed}"), shape)
    out = tmp_path / "dv.bin"
    probe("encode-dv", str(out), "-", stdin="\n".join(map(str, positions)))
    blob = out.read_bytes()
    decoded, keys = oracle_decode_dv(blob)
    assert decoded == positions
    # Java's layout: every key from 0 up to the largest, empty bitmaps included.
    assert keys == (list(range((positions[-1] >> 32) + 1)) if positions else [])
    # CRoaring (in pyroaring) run-optimizes to the same containers, so the bytes agree too.
    assert blob == oracle_encode_dv(positions)


def test_long_runs_given_as_ranges_become_run_containers(tmp_path):
    ranges = [(0, 1_000_000), ((5 << 32) + 17, (5 << 32) + 400_000), ((1 << 31) - 10, (1 << 31) + 10)]
    out = tmp_path / "dv.bin"
    probe("encode-dv", str(out), *(f"{a}:{b}" for a, b in ranges))
    blob = out.read_bytes()
    decoded, _ = oracle_decode_dv(blob)
    expected = sorted({p for a, b in ranges for p in range(a, b)})
    assert decoded == expected
    assert len(blob) < 1000  # run containers, not 8 KiB bitsets


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("optimize", [True, False])
def test_oracle_encoded_deletion_vectors_decode_with_lakesync(shape, dense, optimize, tmp_path):
    positions = random_positions(random.Random(f"oracle/{shape}"), shape)
    path = tmp_path / "dv.bin"
    path.write_bytes(oracle_encode_dv(positions, dense=dense, optimize=optimize))
    assert probe_positions("decode-dv", path, str(len(positions))) == positions


@pytest.mark.parametrize("shape", ["small", "long-runs", "many-keys", "gaps", "bitset"])
@pytest.mark.parametrize("sparse", [False, True])
def test_bare_roaring64_both_directions(shape, sparse, tmp_path):
    positions = random_positions(random.Random(f"bare/{shape}"), shape)
    ours = tmp_path / "ours.bin"
    probe("encode-roaring64", str(ours), *(["sparse"] if sparse else []), "-", stdin=" ".join(map(str, positions)))
    decoded, keys = oracle_decode_roaring64(ours.read_bytes())
    assert decoded == positions
    if sparse:
        assert keys == sorted({p >> 32 for p in positions})
    theirs = tmp_path / "theirs.bin"
    theirs.write_bytes(oracle_encode_roaring64(positions, dense=not sparse))
    assert probe_positions("decode-roaring64", theirs) == positions


def test_corruptions_are_reported_by_lakesync(tmp_path):
    positions = random_positions(random.Random("corrupt"), "dense")
    good = oracle_encode_dv(positions)
    cases = {
        "crc": good[:-1] + bytes([good[-1] ^ 1]),
        "payload": good[:20] + bytes([good[20] ^ 4]) + good[21:],
        "magic": good[:4] + b"\x00" + good[5:],
        "length": struct.pack(">I", len(good) - 7) + good[4:],
        "truncated": good[:-5],
    }
    expected_fragment = {
        "crc": "CRC-32 mismatch",
        "payload": "CRC-32 mismatch",
        "magic": "magic mismatch",
        "length": "length field says",
        "truncated": "length field says",
    }
    for name, blob in cases.items():
        with pytest.raises(OracleError):
            oracle_decode_dv(blob)
        path = tmp_path / f"{name}.bin"
        path.write_bytes(blob)
        result = probe("decode-dv", str(path), check=False)
        assert result.returncode == 1, name
        assert expected_fragment[name] in result.stderr, (name, result.stderr)


# ---------------------------------------------------------------------------------------------
# Puffin files.


def raw_footer(data: bytes) -> dict:
    """The footer JSON read by hand: magic checks, int32 LE payload size, uncompressed flags."""
    assert data[:4] == b"PFA1" and data[-4:] == b"PFA1"
    (payload_size,) = struct.unpack_from("<i", data, len(data) - 12)
    assert data[-8:-4] == b"\x00\x00\x00\x00"
    footer_start = len(data) - 16 - payload_size
    assert data[footer_start : footer_start + 4] == b"PFA1"
    return json.loads(data[footer_start + 4 : footer_start + 4 + payload_size].decode("utf-8"))


@pytest.mark.parametrize(
    "name", ["empty-puffin-uncompressed.bin", "sample-metric-data-uncompressed.bin", "sample-metric-data-compressed-zstd.bin"]
)
def test_puffin_footer_matches_raw_json(name):
    path = CORPUS / name
    data = path.read_bytes()
    expected = raw_footer(data)
    ours = json.loads(probe("puffin-footer", str(path)).stdout)
    assert ours["file-size"] == len(data)
    assert ours["properties"] == expected.get("properties", {})
    assert len(ours["blobs"]) == len(expected["blobs"])
    for mine, theirs in zip(ours["blobs"], expected["blobs"]):
        for key in ("type", "fields", "snapshot-id", "sequence-number", "offset", "length"):
            assert mine[key] == theirs[key], key
        assert mine.get("compression-codec") == theirs.get("compression-codec")
        assert mine["properties"] == theirs.get("properties", {})


def test_puffin_blobs_decompress_like_zstandard(tmp_path):
    zstandard = pytest.importorskip("zstandard")
    plain_path = CORPUS / "sample-metric-data-uncompressed.bin"
    zstd_path = CORPUS / "sample-metric-data-compressed-zstd.bin"
    plain, packed = plain_path.read_bytes(), zstd_path.read_bytes()
    for index, (p, z) in enumerate(zip(raw_footer(plain)["blobs"], raw_footer(packed)["blobs"])):
        expected = zstandard.ZstdDecompressor().decompress(packed[z["offset"] : z["offset"] + z["length"]])
        assert expected == plain[p["offset"] : p["offset"] + p["length"]]
        for path in (plain_path, zstd_path):
            out = tmp_path / f"{path.stem}-{index}.bin"
            probe("puffin-blob", str(path), str(index), str(out))
            assert out.read_bytes() == expected


def test_lakesync_puffin_with_zstd_blobs_reads_in_pyiceberg(tmp_path):
    puffin = pytest.importorskip("pyiceberg.table.puffin")
    rng = random.Random("blobs")
    datas = [bytes(rng.randrange(0, 4) for _ in range(n)) for n in (0, 1, 5000, 70_000)]
    paths = []
    for i, data in enumerate(datas):
        p = tmp_path / f"blob{i}"
        p.write_bytes(data)
        paths.append(str(p))
    out = tmp_path / "file.puffin"
    summary = json.loads(probe("write-puffin", str(out), "zstd", "some-sketch", *paths).stdout)
    data = out.read_bytes()
    assert summary["file-size"] == len(data)
    # zstandard's one-shot decompress() needs the frame's content size, which the spec requires.
    reader = puffin.PuffinFile(data)
    assert reader.footer.properties == {"created-by": "lakesync probe"}
    assert len(reader.footer.blobs) == len(datas)
    for blob, mine, expected in zip(reader.footer.blobs, summary["blobs"], datas):
        assert blob.compression_codec == "zstd"
        assert (blob.offset, blob.length) == (mine["offset"], mine["length"])
        assert reader.get_blob_payload(blob) == expected


def test_lakesync_deletion_vector_puffin_reads_in_pyiceberg(tmp_path):
    puffin = pytest.importorskip("pyiceberg.table.puffin")
    dvmod = pytest.importorskip("pyiceberg.table.deletion_vector")
    rng = random.Random("dv-file")
    files = {
        f"s3://bucket/db/t/data/{shape}.parquet": random_positions(rng, shape)
        for shape in ["small", "dense", "long-runs", "around-2^32", "many-keys", "bitset"]
    }
    stdin = "".join(f"{path}\t{' '.join(map(str, pos))}\n" for path, pos in files.items())
    out = tmp_path / "dvs.puffin"
    summary = json.loads(probe("write-dv-puffin", str(out), stdin=stdin).stdout)
    data = out.read_bytes()
    assert summary["file-size"] == len(data)

    # Our own hand parser over the manifest coordinates the writer returned.
    for entry in summary["vectors"]:
        blob = data[entry["content-offset"] : entry["content-offset"] + entry["content-size-in-bytes"]]
        decoded, _ = oracle_decode_dv(blob)
        assert decoded == files[entry["referenced-data-file"]]
        assert entry["cardinality"] == len(decoded)

    # The footer as the spec wants it for DVs.
    footer = raw_footer(data)
    assert summary["footer-size"] == len(data) - 4 - sum(e["content-size-in-bytes"] for e in summary["vectors"])
    for blob, entry in zip(footer["blobs"], summary["vectors"]):
        assert blob["type"] == "deletion-vector-v1"
        assert blob["fields"] == [2147483645]
        assert blob["snapshot-id"] == -1 and blob["sequence-number"] == -1
        assert "compression-codec" not in blob
        assert (blob["offset"], blob["length"]) == (entry["content-offset"], entry["content-size-in-bytes"])
        assert blob["properties"] == {
            "referenced-data-file": entry["referenced-data-file"],
            "cardinality": str(entry["cardinality"]),
        }

    # pyiceberg reads the whole file as its table scan would.
    vectors = dvmod.deletion_vectors_from_puffin_file(puffin.PuffinFile(data))
    got = {dv.referenced_data_file: dv.to_vector().to_pylist() for dv in vectors}
    assert got == files
