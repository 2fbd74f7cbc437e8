"""No file under tests/ carries an upstream project's test-resource identifiers.

The project's rule (docs/architecture.md, "Tests"): test inputs and expectations are written here or
produced by independent tools, never adapted from another project's tests. Fixtures once adapted from
Apache Iceberg's test resources (core/src/test/resources/*.json) kept their table uuids, snapshot ids
and timestamps; this test looks for those. It holds only their SHA-256 digests, so this file does not
itself carry them: every uuid and every run of 12 or more digits in every file under tests/ is hashed
and looked up.

The digests: every uuid and every 12+-digit number in apache/iceberg's src/test/resources/**/*.json
(main at 7f879b1136), leaving out round numbers (ending in 00000: midnight timestamps any test may
use). To add a project: hash its identifiers the same way and append them with a comment.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

# sha256 of the identifier text (uuids lower-case).
UPSTREAM_DIGESTS = {
    # apache/iceberg, src/test/resources (TableMetadataV1Valid.json, TableMetadataV2Valid.json,
    # TableMetadataStatisticsFiles.json, view metadata, ...)
    "dc4d5b66c8c674297b70bbb48d38cc3bca986a3ab05c7a69badd2afaa90d1163",
    "bf9eddf5e6c88838489e8e83ce917fc8294c9077777831f80129dfd8a5901f6d",
    "6ba2e71899ecfa2ac7b9bfa8275843cc9ecd560bad921e09d44106e70f7177bd",
    "eae822f2214355e27b01951c663a279a11cf18b8269f992598343f2c65b42ce7",
    "1241a986b460eef612b9ffe3024880c90a7439d92bb752e8810b39b998c734f6",
    "f311f97a87e39bef701fcf61c8347b34e933dcdd7f4690efa7b4f95ad0d4792d",
    "92d74f45d41676508379eea7b18bd50e3c34aad33bc719fefb8bebb9f92e3ecb",
    "0f01010f4af4f8d1e8e6d394edd2b256365a5daf0713284ff4d8cb8aa5941b48",
    "f17bbe96e7f2b78117c41d6cc42a1cf6fbf13a9414cb3896a51132a8ba43c759",
    "301546db31a8ddb6c94b5fa49cf08c49f0a0dfd06c6087cf095a38e3add296d4",
    "1b13a7f26a6cefb60d80509792d2e17328948182076db124f4696d6ecc1e3c71",
    "dc4d5b66c8c674297b70bbb48d38cc3bca986a3ab05c7a69badd2afaa90d1163",
    "bf9eddf5e6c88838489e8e83ce917fc8294c9077777831f80129dfd8a5901f6d",
    "6ba2e71899ecfa2ac7b9bfa8275843cc9ecd560bad921e09d44106e70f7177bd",
    "eae822f2214355e27b01951c663a279a11cf18b8269f992598343f2c65b42ce7",
    "1241a986b460eef612b9ffe3024880c90a7439d92bb752e8810b39b998c734f6",
    "f311f97a87e39bef701fcf61c8347b34e933dcdd7f4690efa7b4f95ad0d4792d",
    "92d74f45d41676508379eea7b18bd50e3c34aad33bc719fefb8bebb9f92e3ecb",
    "0f01010f4af4f8d1e8e6d394edd2b256365a5daf0713284ff4d8cb8aa5941b48",
    "f17bbe96e7f2b78117c41d6cc42a1cf6fbf13a9414cb3896a51132a8ba43c759",
    "301546db31a8ddb6c94b5fa49cf08c49f0a0dfd06c6087cf095a38e3add296d4",
    "1b13a7f26a6cefb60d80509792d2e17328948182076db124f4696d6ecc1e3c71",
}

TOKEN = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|\d{12,}")
SKIP_SUFFIXES = {".parquet", ".avro", ".puffin", ".zip", ".gz", ".zst", ".pyc", ".so", ".bin", ".crc"}


def digest(token: str) -> str:
    return hashlib.sha256(token.lower().encode()).hexdigest()


def test_the_digests_are_well_formed():
    assert len(UPSTREAM_DIGESTS) >= 10 and all(re.fullmatch(r"[0-9a-f]{64}", d) for d in UPSTREAM_DIGESTS)


def test_the_check_finds_what_it_looks_for():
    """The scanner must fail when a file carries one (a planted identifier whose digest is added)."""
    planted = "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"
    text = f'{{"table-uuid": "{planted.upper()}", "snapshot-id": 123}}'
    assert find(text, UPSTREAM_DIGESTS | {digest(planted)}) == [planted.upper()]
    assert find(text, UPSTREAM_DIGESTS) == []


def find(text: str, digests: set[str]) -> list[str]:
    return [t for t in TOKEN.findall(text) if digest(t) in digests]


def test_no_file_under_tests_carries_upstream_test_resource_identifiers():
    offending = []
    for path in sorted(TESTS.rglob("*")):
        if not path.is_file() or path.suffix in SKIP_SUFFIXES or "__pycache__" in path.parts:
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        for line_no, line in enumerate(text.splitlines(), 1):
            for token in find(line, UPSTREAM_DIGESTS):
                offending.append(f"{path.relative_to(TESTS.parent)}:{line_no}: {token}")
    assert not offending, ("identifiers from an upstream project's test resources (write fixtures here, or "
                           "generate them with an independent tool):\n" + "\n".join(offending))
