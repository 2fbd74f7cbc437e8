"""FileIO against object-store stand-ins on loopback: moto_server (S3) and gcp-storage-emulator (GCS).

Every round trip is checked by an independent client: what FileIO writes is read back with boto3 or
the GCS JSON API over plain HTTP, and what those clients write is read with FileIO. FileIO is driven
through the small `fileio_probe` program (tests/tools/fileio_probe.cc), found in LAKESYNC_BUILD_DIR
(default /work/main/build).

Observed behaviour of the stand-ins (moto 5.2.5, gcp-storage-emulator 2026.7.19), recorded here
because other modules may want to rely on it:
- moto accepts any access key and secret (it does not check signatures), so credential errors
  cannot be tested against it. It does honour PutObject with If-None-Match: * (412
  PreconditionFailed on an existing key); FileIO cannot use that, because arrow::fs does not
  expose conditional writes, so FileIO::WriteNew on S3 is check-then-write (best effort).
- gcp-storage-emulator ignores the ifGenerationMatch=0 precondition (a second create with it
  silently overwrites), so it could not prove GCS create-if-absent even if Arrow exposed it.
- gcp-storage-emulator returns "contentType": null for objects uploaded without a Content-Type
  header; google-cloud-cpp (inside Arrow) throws while parsing such a listing. FileIO turns that into
  an I/O error instead of crashing (see test_gcs_listing_of_object_without_content_type).
- gcp-storage-emulator is a single-threaded HTTP server. Arrow's GCS random-access file keeps one
  download open while a ranged read starts another, so random access to objects larger than a
  socket buffer (a few MB) hangs against the emulator until the client times out; FileIO::ReadAll
  therefore reads one sequential stream. Random-access tests on the emulator use small objects.
- Arrow's S3 filesystem writes an empty "dir/" marker object when deleting the last file under a
  prefix; Arrow's GCS filesystem reports subdirectories only when such markers exist, which is why
  FileIO derives GCS directories from the keys.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

import pytest

boto3 = pytest.importorskip("boto3")
requests = pytest.importorskip("requests")

BUILD_DIR = Path(os.environ.get("LAKESYNC_BUILD_DIR", "/work/main/build"))
PROBE = BUILD_DIR / "fileio_probe"
VENV_BIN = Path(sys.executable).parent

S3_BUCKET = "lakesync-io-test"
GCS_BUCKET = "lakesync-io-test"
ACCESS_KEY = "lakesync-test-key"
SECRET_KEY = "lakesync-test-secret"

pytestmark = pytest.mark.skipif(
    not PROBE.exists(),
    reason=f"{PROBE} is not built (build the fileio_probe target; set LAKESYNC_BUILD_DIR to the build dir)",
)


# ---------------------------------------------------------------------------------------------
# Servers


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tool(name: str) -> str:
    candidate = VENV_BIN / name
    if candidate.exists():
        return str(candidate)
    found = shutil.which(name)
    if not found:
        pytest.fail(f"{name} not found next to {sys.executable} or on PATH (pip install moto[server] gcp-storage-emulator)")
    return found


def _start(cmd: list[str], ready_url: str, log_path: Path) -> subprocess.Popen:
    log = open(log_path, "wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"{cmd[0]} exited with {proc.returncode}; log: {log_path.read_text(errors='replace')}")
        try:
            requests.get(ready_url, timeout=1)
            return proc
        except requests.RequestException:
            time.sleep(0.2)
    proc.kill()
    pytest.fail(f"{cmd[0]} did not answer at {ready_url} within 30 s; log: {log_path.read_text(errors='replace')}")


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def moto(tmp_path_factory):
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    proc = _start([_tool("moto_server"), "-H", "127.0.0.1", "-p", str(port)], endpoint + "/", log)
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        region_name="us-east-1",
    )
    client.create_bucket(Bucket=S3_BUCKET)
    yield {"endpoint": endpoint, "client": client}
    _stop(proc)


@pytest.fixture(scope="module")
def gcs(tmp_path_factory):
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    log = tmp_path_factory.mktemp("gcs") / "gcs.log"
    proc = _start(
        [_tool("gcp-storage-emulator"), "start", "--host", "127.0.0.1", "--port", str(port), "--in-memory"],
        endpoint + "/storage/v1/b",
        log,
    )
    r = requests.post(f"{endpoint}/storage/v1/b", params={"project": "lakesync-test"}, json={"name": GCS_BUCKET}, timeout=10)
    assert r.status_code == 200, r.text
    yield {"endpoint": endpoint}
    _stop(proc)


# ---------------------------------------------------------------------------------------------
# The probe


def _probe_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "STORAGE_EMULATOR", "GOOGLE_"))}
    # Nothing in these tests may look for cloud credentials on the network.
    env["AWS_EC2_METADATA_DISABLED"] = "true"
    env.update(extra or {})
    return env


def probe(props: dict[str, str], *args: str, data: bytes | None = None, env: dict[str, str] | None = None):
    cmd = [str(PROBE)]
    for key, value in props.items():
        cmd += ["--prop", f"{key}={value}"]
    cmd += list(args)
    if data is not None:
        cmd.append("-")
    return subprocess.run(cmd, input=data if data is not None else b"", capture_output=True, timeout=120, env=_probe_env(env))


def ok(result) -> bytes:
    assert result.returncode == 0, f"rc={result.returncode} stderr={result.stderr.decode(errors='replace')}"
    return result.stdout


def error_of(result) -> tuple[str, str]:
    """(kind, message) of a failed probe call; a crash (negative rc) fails the test."""
    assert result.returncode == 1, f"expected a clean error, got rc={result.returncode} stderr={result.stderr!r}"
    line = result.stderr.decode(errors="replace").strip().splitlines()[-1]
    tag, kind, message = line.split("\t", 2)
    assert tag == "error"
    return kind, message


def entries(stdout: bytes) -> list[tuple[str, int, int, str]]:
    out = []
    for line in stdout.decode().splitlines():
        location, size, mtime, kind = line.split("\t")
        out.append((location, int(size), int(mtime), kind))
    return out


def all_bytes(n: int) -> bytes:
    return bytes(i % 256 for i in range(n))


# ---------------------------------------------------------------------------------------------
# S3 (moto)


@pytest.fixture
def s3(moto):
    props = {"s3.endpoint": moto["endpoint"], "s3.access-key-id": ACCESS_KEY, "s3.secret-access-key": SECRET_KEY}
    prefix = f"t-{uuid.uuid4().hex[:12]}"
    return {"props": props, "client": moto["client"], "prefix": prefix, "base": f"s3://{S3_BUCKET}/{prefix}"}


def s3_keys(s3, prefix: str) -> list[str]:
    resp = s3["client"].list_objects_v2(Bucket=S3_BUCKET, Prefix=prefix)
    return sorted(o["Key"] for o in resp.get("Contents", []))


def test_s3_fileio_write_is_read_by_boto3(s3):
    data = all_bytes(100_000)
    ok(probe(s3["props"], "write", f"{s3['base']}/metadata/v1.metadata.json", data=data))
    body = s3["client"].get_object(Bucket=S3_BUCKET, Key=f"{s3['prefix']}/metadata/v1.metadata.json")["Body"].read()
    assert body == data


def test_s3_boto3_write_is_read_by_fileio_under_both_schemes(s3):
    data = b"\x00written by boto3\xff" * 1000
    key = f"{s3['prefix']}/data/part-0.parquet"
    s3["client"].put_object(Bucket=S3_BUCKET, Key=key, Body=data)
    for scheme in ("s3", "s3a"):
        assert ok(probe(s3["props"], "read", f"{scheme}://{S3_BUCKET}/{key}")) == data


def test_s3_large_write_uses_multipart_and_round_trips(s3):
    data = os.urandom(12 * 1024 * 1024 + 17)
    ok(probe(s3["props"], "write", f"{s3['base']}/big.bin", data=data))
    obj = s3["client"].get_object(Bucket=S3_BUCKET, Key=f"{s3['prefix']}/big.bin")
    body = obj["Body"].read()
    assert hashlib.sha256(body).hexdigest() == hashlib.sha256(data).hexdigest()
    # Moto reports a multipart upload's ETag as "<md5>-<parts>".
    assert "-" in obj["ETag"], obj["ETag"]
    assert ok(probe(s3["props"], "read", f"{s3['base']}/big.bin")) == data


def test_s3_random_access_reads_ranges(s3):
    data = os.urandom(6 * 1024 * 1024)
    s3["client"].put_object(Bucket=S3_BUCKET, Key=f"{s3['prefix']}/ranges.bin", Body=data)
    location = f"{s3['base']}/ranges.bin"
    for offset, length in ((0, 10), (5_000_000, 1_000_000), (len(data) - 7, 7)):
        assert ok(probe(s3["props"], "readrange", location, str(offset), str(length))) == data[offset : offset + length]


def test_s3_stat_matches_boto3(s3):
    key = f"{s3['prefix']}/stat/file.bin"
    s3["client"].put_object(Bucket=S3_BUCKET, Key=key, Body=b"x" * 4321)
    head = s3["client"].head_object(Bucket=S3_BUCKET, Key=key)
    [(location, size, mtime_ms, kind)] = entries(ok(probe(s3["props"], "stat", f"s3://{S3_BUCKET}/{key}")))
    assert location == f"s3://{S3_BUCKET}/{key}"
    assert size == head["ContentLength"] == 4321
    assert kind == "file"
    assert abs(mtime_ms - head["LastModified"].timestamp() * 1000) < 1000


def test_s3_listing_derives_directories_from_keys(s3):
    p = s3["prefix"]
    for key in ("a.txt", "b/c.txt", "b/d/e.txt", "f/g.txt"):
        s3["client"].put_object(Bucket=S3_BUCKET, Key=f"{p}/{key}", Body=key.encode())
    flat = entries(ok(probe(s3["props"], "list", s3["base"])))
    assert [(loc, kind) for loc, _, _, kind in flat] == [
        (f"{s3['base']}/a.txt", "file"),
        (f"{s3['base']}/b", "dir"),
        (f"{s3['base']}/f", "dir"),
    ]
    assert flat[0][1] == len(b"a.txt")
    deep = entries(ok(probe(s3["props"], "list", "--recursive", s3["base"] + "/")))
    assert [loc for loc, *_ in deep] == [
        f"{s3['base']}/{rel}" for rel in ("a.txt", "b", "b/c.txt", "b/d", "b/d/e.txt", "f", "f/g.txt")
    ]
    assert ok(probe(s3["props"], "list", f"{s3['base']}/missing")) == b""


def test_s3_missing_object_and_bucket_are_not_found(s3):
    location = f"{s3['base']}/no/such/v9.metadata.json"
    kind, message = error_of(probe(s3["props"], "read", location))
    assert kind == "not found"
    assert location in message
    kind, message = error_of(probe(s3["props"], "stat", location))
    assert kind == "not found" and location in message
    assert ok(probe(s3["props"], "exists", location)) == b"false\n"
    kind, message = error_of(probe(s3["props"], "read", "s3://no-such-bucket-lakesync/x"))
    assert kind == "not found" and "s3://no-such-bucket-lakesync/x" in message


def test_s3_writenew_refuses_existing_objects(s3):
    location = f"{s3['base']}/metadata/v1.metadata.json"
    ok(probe(s3["props"], "writenew", location, "first"))
    kind, message = error_of(probe(s3["props"], "writenew", location, "second"))
    assert kind == "already exists" and location in message
    body = s3["client"].get_object(Bucket=S3_BUCKET, Key=f"{s3['prefix']}/metadata/v1.metadata.json")["Body"].read()
    assert body == b"first"
    # An object written by someone else counts as well.
    s3["client"].put_object(Bucket=S3_BUCKET, Key=f"{s3['prefix']}/metadata/v2.metadata.json", Body=b"theirs")
    kind, _ = error_of(probe(s3["props"], "writenew", f"{s3['base']}/metadata/v2.metadata.json", "ours"))
    assert kind == "already exists"


def test_s3_delete_and_deletedir(s3):
    p = s3["prefix"]
    for key in ("d/1", "d/e/2", "dx/3", "keep"):
        s3["client"].put_object(Bucket=S3_BUCKET, Key=f"{p}/{key}", Body=b"x")
    ok(probe(s3["props"], "delete", f"{s3['base']}/keep"))
    with pytest.raises(s3["client"].exceptions.ClientError):
        s3["client"].head_object(Bucket=S3_BUCKET, Key=f"{p}/keep")
    ok(probe(s3["props"], "delete", f"{s3['base']}/keep"))  # already gone: fine
    ok(probe(s3["props"], "deletedir", f"{s3['base']}/d"))
    remaining = [k for k in s3_keys(s3, p + "/") if not k.endswith("/")]  # Arrow may leave a marker
    assert remaining == [f"{p}/dx/3"], "a sibling sharing the name prefix must survive"
    ok(probe(s3["props"], "deletedir", f"{s3['base']}/d"))  # missing: fine
    kind, _ = error_of(probe(s3["props"], "deletedir", f"s3://{S3_BUCKET}"))
    assert kind == "invalid argument"


def test_s3_environment_fallbacks(s3, moto):
    env = {"AWS_ENDPOINT_URL": moto["endpoint"], "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
    ok(probe({}, "write", f"{s3['base']}/env.txt", "via env", env=env))
    body = s3["client"].get_object(Bucket=S3_BUCKET, Key=f"{s3['prefix']}/env.txt")["Body"].read()
    assert body == b"via env"


def test_s3_unreachable_endpoint_is_unavailable(s3):
    props = dict(s3["props"], **{"s3.endpoint": f"http://127.0.0.1:{_free_port()}", "s3.connect-timeout": "1"})
    kind, message = error_of(probe(props, "read", f"{s3['base']}/x"))
    assert kind == "unavailable"
    assert f"{s3['base']}/x" in message


def test_s3_exit_with_live_client_is_clean(s3):
    # The FileIO (and its S3 client) is still alive in a static when main() returns.
    ok(probe(s3["props"], "--hold-at-exit", "write", f"{s3['base']}/held", "x"))
    assert ok(probe(s3["props"], "--hold-at-exit", "exists", f"{s3['base']}/held")) == b"true\n"


# ---------------------------------------------------------------------------------------------
# GCS (gcp-storage-emulator)


@pytest.fixture
def gs(gcs):
    props = {"gcs.endpoint": gcs["endpoint"], "gcs.retry-limit-seconds": "5"}
    prefix = f"t-{uuid.uuid4().hex[:12]}"
    return {"props": props, "endpoint": gcs["endpoint"], "prefix": prefix, "base": f"gs://{GCS_BUCKET}/{prefix}"}


def gcs_upload(gs, name: str, data: bytes, content_type: str | None = "application/octet-stream") -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    r = requests.post(
        f"{gs['endpoint']}/upload/storage/v1/b/{GCS_BUCKET}/o",
        params={"uploadType": "media", "name": name},
        data=data,
        headers=headers,
        timeout=30,
    )
    assert r.status_code == 200, r.text


def gcs_download(gs, name: str) -> requests.Response:
    return requests.get(
        f"{gs['endpoint']}/storage/v1/b/{GCS_BUCKET}/o/{quote(name, safe='')}", params={"alt": "media"}, timeout=30
    )


def gcs_names(gs, prefix: str) -> list[str]:
    r = requests.get(f"{gs['endpoint']}/storage/v1/b/{GCS_BUCKET}/o", params={"prefix": prefix}, timeout=30)
    assert r.status_code == 200, r.text
    return sorted(item["name"] for item in r.json().get("items", []))


def test_gcs_fileio_write_is_read_over_http(gs):
    data = all_bytes(200_000)
    ok(probe(gs["props"], "write", f"{gs['base']}/metadata/v1.metadata.json", data=data))
    r = gcs_download(gs, f"{gs['prefix']}/metadata/v1.metadata.json")
    assert r.status_code == 200
    assert r.content == data


def test_gcs_http_upload_is_read_by_fileio(gs):
    data = b"\xffuploaded over the JSON API\x00" * 500
    gcs_upload(gs, f"{gs['prefix']}/data/part-0.parquet", data)
    assert ok(probe(gs["props"], "read", f"{gs['base']}/data/part-0.parquet")) == data


def test_gcs_large_write_resumable_upload_round_trips(gs):
    # Larger than the GCS client's upload buffer, so the resumable upload takes several requests.
    data = os.urandom(20 * 1024 * 1024 + 5)
    ok(probe(gs["props"], "write", f"{gs['base']}/big.bin", data=data))
    r = gcs_download(gs, f"{gs['prefix']}/big.bin")
    assert hashlib.sha256(r.content).hexdigest() == hashlib.sha256(data).hexdigest()
    assert ok(probe(gs["props"], "read", f"{gs['base']}/big.bin")) == data


def test_gcs_random_access_reads_ranges(gs):
    # Kept well below a socket buffer: Arrow's GCS random-access file keeps one download open
    # while a ranged read starts a second, and the single-threaded emulator serves the second only
    # after the first is fully sent, so larger objects hang there (real GCS serves both at once).
    data = os.urandom(200_000)
    gcs_upload(gs, f"{gs['prefix']}/ranges.bin", data)
    location = f"{gs['base']}/ranges.bin"
    for offset, length in ((0, 10), (150_000, 40_000), (len(data) - 7, 7)):
        assert ok(probe(gs["props"], "readrange", location, str(offset), str(length))) == data[offset : offset + length]


def test_gcs_stat_matches_object_metadata(gs):
    name = f"{gs['prefix']}/stat/file.bin"
    gcs_upload(gs, name, b"y" * 777)
    meta = requests.get(f"{gs['endpoint']}/storage/v1/b/{GCS_BUCKET}/o/{quote(name, safe='')}", timeout=30).json()
    [(location, size, mtime_ms, kind)] = entries(ok(probe(gs["props"], "stat", f"gs://{GCS_BUCKET}/{name}")))
    assert location == f"gs://{GCS_BUCKET}/{name}"
    assert size == int(meta["size"]) == 777
    assert kind == "file"
    updated = datetime.strptime(meta["updated"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    assert abs(mtime_ms - updated.timestamp() * 1000) < 1000


def test_gcs_listing_derives_directories_from_keys(gs):
    p = gs["prefix"]
    for key in ("a.txt", "b/c.txt", "b/d/e.txt", "f/g.txt"):
        gcs_upload(gs, f"{p}/{key}", key.encode())
    flat = entries(ok(probe(gs["props"], "list", gs["base"])))
    assert [(loc, kind) for loc, _, _, kind in flat] == [
        (f"{gs['base']}/a.txt", "file"),
        (f"{gs['base']}/b", "dir"),
        (f"{gs['base']}/f", "dir"),
    ]
    deep = entries(ok(probe(gs["props"], "list", "--recursive", gs["base"])))
    assert [loc for loc, *_ in deep] == [
        f"{gs['base']}/{rel}" for rel in ("a.txt", "b", "b/c.txt", "b/d", "b/d/e.txt", "f", "f/g.txt")
    ]
    assert ok(probe(gs["props"], "list", f"{gs['base']}/missing")) == b""
    assert ok(probe(gs["props"], "exists", f"{gs['base']}/b")) == b"true\n"


def test_gcs_missing_object_and_bucket_are_not_found(gs):
    location = f"{gs['base']}/no/such/v9.metadata.json"
    kind, message = error_of(probe(gs["props"], "read", location))
    assert kind == "not found" and location in message
    kind, message = error_of(probe(gs["props"], "stat", location))
    assert kind == "not found" and location in message
    assert ok(probe(gs["props"], "exists", location)) == b"false\n"
    kind, _ = error_of(probe(gs["props"], "read", "gs://no-such-bucket-lakesync/x"))
    assert kind == "not found"


def test_gcs_writenew_refuses_existing_objects(gs):
    location = f"{gs['base']}/metadata/v1.metadata.json"
    ok(probe(gs["props"], "writenew", location, "first"))
    kind, message = error_of(probe(gs["props"], "writenew", location, "second"))
    assert kind == "already exists" and location in message
    assert gcs_download(gs, f"{gs['prefix']}/metadata/v1.metadata.json").content == b"first"


def test_gcs_delete_and_deletedir(gs):
    p = gs["prefix"]
    for key in ("d/1", "d/e/2", "dx/3", "keep"):
        gcs_upload(gs, f"{p}/{key}", b"x")
    ok(probe(gs["props"], "delete", f"{gs['base']}/keep"))
    assert gcs_download(gs, f"{p}/keep").status_code == 404
    ok(probe(gs["props"], "delete", f"{gs['base']}/keep"))
    ok(probe(gs["props"], "deletedir", f"{gs['base']}/d"))
    assert gcs_names(gs, p + "/") == [f"{p}/dx/3"], "a sibling sharing the name prefix must survive"
    ok(probe(gs["props"], "deletedir", f"{gs['base']}/d"))


def test_gcs_storage_emulator_host_fallback(gs):
    host = gs["endpoint"].removeprefix("http://")  # Google's clients accept it without a scheme
    ok(probe({"gcs.retry-limit-seconds": "5"}, "write", f"{gs['base']}/env.txt", "via env", env={"STORAGE_EMULATOR_HOST": host}))
    assert gcs_download(gs, f"{gs['prefix']}/env.txt").content == b"via env"


def test_gcs_unreachable_endpoint_is_unavailable(gs):
    props = {"gcs.endpoint": f"http://127.0.0.1:{_free_port()}", "gcs.retry-limit-seconds": "1"}
    kind, message = error_of(probe(props, "read", f"{gs['base']}/x"))
    assert kind == "unavailable"
    assert f"{gs['base']}/x" in message


def test_gcs_listing_of_object_without_content_type(gs):
    # Emulator quirk (see the module docstring): the listing carries "contentType": null, which
    # google-cloud-cpp cannot parse. FileIO must report an error naming the location, not crash.
    prefix = f"{gs['prefix']}-quirk"
    gcs_upload(gs, f"{prefix}/x", b"x", content_type=None)
    result = probe(gs["props"], "list", f"gs://{GCS_BUCKET}/{prefix}")
    if result.returncode == 0:  # a fixed emulator or client: then the listing must be right
        assert [loc for loc, *_ in entries(result.stdout)] == [f"gs://{GCS_BUCKET}/{prefix}/x"]
    else:
        kind, message = error_of(result)
        assert kind == "I/O error"
        assert f"gs://{GCS_BUCKET}/{prefix}" in message
    # Reading the object itself works either way.
    assert ok(probe(gs["props"], "read", f"gs://{GCS_BUCKET}/{prefix}/x")) == b"x"


def test_gcs_exit_with_live_client_is_clean(gs):
    ok(probe(gs["props"], "--hold-at-exit", "write", f"{gs['base']}/held", "x"))
