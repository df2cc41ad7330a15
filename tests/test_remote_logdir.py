"""Remote logdirs: the plugin reads ``s3://bucket/logs`` from a real S3-compatible server.

The server is moto's, started on 127.0.0.1 by the fixture (no other address is ever reached); the
plugin reaches it through s3fs with the endpoint and dummy credentials from the environment, as a
user would configure it (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID...). Traces are copies of
tests/data in both layouts: torch-handler files nested in run folders, and the writer's output
made by ``profscope import`` in a local folder and then uploaded.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import real_trace, wait_for

pytest.importorskip("s3fs", reason="the s3 test needs the test extra (s3fs, boto3, moto[server])")
boto3 = pytest.importorskip("boto3")
moto_server = pytest.importorskip("moto.server")

from profscope.tb_plugin.reports import cli  # noqa: E402
from profscope.tb_plugin.store.discovery import scan_logdir  # noqa: E402
from profscope.tb_plugin.store.storage import FsspecStorage, LogdirUnreadable, _remote_stat, open_storage  # noqa: E402

MLP = "torch213/mlp_train_sched"
DDP = "torch213/ddp_gloo_2ranks"
MLP_SPANS = ["1795303442092317655", "1795303442737309847"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    """A moto S3 server on 127.0.0.1 for this module's tests, stopped at teardown."""
    port = _free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


@pytest.fixture
def s3(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """The environment a user sets for an S3-compatible service (inherited by the parser processes),
    and a boto3 client to fill buckets with."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3", "FSSPEC_S3"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "profscope-test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "profscope-test")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    # No user's ~/.aws files: only the variables above count.
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    return boto3.client("s3", endpoint_url=s3_endpoint)


def _keys(client: Any, bucket: str) -> dict[str, str]:
    listing = client.list_objects_v2(Bucket=bucket)
    return {item["Key"]: item["ETag"] for item in listing.get("Contents", [])}


def _upload_tree(client: Any, bucket: str, local: Path, prefix: str) -> None:
    for path in sorted(p for p in local.rglob("*") if p.is_file()):
        client.upload_file(str(path), bucket, f"{prefix}/{path.relative_to(local).as_posix()}")


def _fill_bucket(client: Any, bucket: str, tmp_path: Path) -> None:
    """Both layouts under logs/, and one object that is not a trace although its name says so."""
    client.create_bucket(Bucket=bucket)
    first_mlp = sorted(real_trace(MLP).glob("*.pt.trace.json.gz"))[0]
    client.upload_file(str(first_mlp), bucket, f"logs/group/mlp/{first_mlp.name}")
    writer_logdir = tmp_path / "imported"
    ddp = [str(p) for p in sorted(real_trace(DDP).glob("rank*.pt.trace.json.gz"))]
    status = cli.main(["import", *ddp, "--logdir", str(writer_logdir), "--run", "ddp", "--batch-size", "8",
                       "--no-event-file"])
    assert status == 0
    _upload_tree(client, bucket, writer_logdir, "logs/imported")
    client.put_object(Bucket=bucket, Key="logs/broken/worker0.1.pt.trace.json.gz", Body=b"this is not a trace")
    client.put_object(Bucket=bucket, Key="logs/group/mlp/notes.txt", Body=b"not a trace either")
    client.put_object(Bucket=bucket, Key="elsewhere/w.2.pt.trace.json", Body=b"{}")  # outside the logdir


def _wait_for(predicate: Any, timeout: float, what: str) -> Any:
    return wait_for(predicate, timeout, what, interval=0.2)


def test_s3_logdir_lists_loads_downloads_and_follows_new_spans(s3: Any, tmp_path: Path, make_client) -> None:
    bucket = "team-runs"
    _fill_bucket(s3, bucket, tmp_path)
    before = _keys(s3, bucket)
    client = make_client(f"s3://{bucket}/logs")
    assert client.plugin.is_active()
    client.settle(60)

    status, body = client.get("runs")
    assert status == 200 and body["scanned"] is True and "logdir_error" not in body
    runs = {run["name"]: run for run in body["runs"]}
    assert sorted(runs) == ["broken", "group/mlp", "imported/ddp"]
    assert [w["name"] for w in runs["imported/ddp"]["workers"]] == ["rank0", "rank1"]
    assert runs["group/mlp"]["workers"][0]["spans"] == MLP_SPANS[:1]
    assert runs["group/mlp"]["status"] == "ready" and runs["imported/ddp"]["status"] == "ready"
    info = runs["group/mlp"]["workers"][0]["span_info"][0]
    assert info["file"] == f"group/mlp/worker0.{MLP_SPANS[0]}.pt.trace.json.gz"
    writer_info = runs["imported/ddp"]["workers"][0]["span_info"][0]
    assert writer_info["manifest"]["batch_size"] == 8  # the manifest was read from the bucket

    # The broken object fails its own run only, with the reason.
    assert runs["broken"]["status"] == "error"
    assert "worker0.1.pt.trace.json.gz" in runs["broken"]["error"]
    status, err = client.get("summary", run="broken", worker="worker0", span="1")
    assert status >= 400 and err["error"]

    # Spans of both layouts load and answer.
    status, summary = client.get("summary", run="group/mlp", worker="worker0")
    assert status == 200 and summary["events"] > 0
    rank1_span = runs["imported/ddp"]["workers"][1]["spans"][0]
    status, overview = client.get("overview", run="imported/ddp", worker="rank1", span=rank1_span)
    assert status == 200 and overview["steps"]

    # The download route streams the original object's bytes.
    original = sorted(real_trace(MLP).glob("*.pt.trace.json.gz"))[0].read_bytes()
    response = client.client.get("/data/plugin/profscope/trace/download",
                                 query_string={"run": "group/mlp", "worker": "worker0", "span": MLP_SPANS[0]})
    assert response.status_code == 200
    assert response.headers["Content-Length"] == str(len(original))
    assert response.get_data() == original

    # The job uploads its next span: the plugin's own refresh thread finds it and loads it.
    second = sorted(real_trace(MLP).glob("*.pt.trace.json.gz"))[1]
    s3.upload_file(str(second), bucket, f"logs/group/mlp/{second.name}")

    def mlp_spans() -> list[str]:
        _, listing = client.get("runs")
        run = next(r for r in listing["runs"] if r["name"] == "group/mlp")
        return run["workers"][0]["spans"] if len(run["workers"][0]["spans"]) == 2 else []

    assert _wait_for(mlp_spans, 15, "the new span") == MLP_SPANS
    status, summary = _wait_for(
        lambda: (lambda answer: answer if answer[0] == 200 else None)(
            client.get("summary", run="group/mlp", worker="worker0", span=MLP_SPANS[1])),
        30, "the new span to load")
    assert summary["events"] > 0

    # Read-only: the plugin wrote nothing into the bucket, and changed nothing in it.
    after = _keys(s3, bucket)
    assert set(after) - set(before) == {f"logs/group/mlp/{second.name}"}
    assert {key: after[key] for key in before} == before


def test_cache_entries_name_the_url_and_endpoint(s3: Any, s3_endpoint: str, tmp_path: Path) -> None:
    from profscope.tb_plugin.store.runs import RunManager

    bucket = "cache-keys"
    s3.create_bucket(Bucket=bucket)
    trace = sorted(real_trace(MLP).glob("*.pt.trace.json.gz"))[0]
    s3.upload_file(str(trace), bucket, f"logs/run/{trace.name}")
    cache_dir = tmp_path / "cache"

    manager = RunManager(f"s3://{bucket}/logs", cache_dir=str(cache_dir), max_workers=1)
    try:
        assert manager.wait_until_settled(30)
        source = manager.sources()[0]
        identity = manager._identity(source)
        assert source.path == f"s3://{bucket}/logs/run/{trace.name}"
        assert identity.location == f"{source.path}#endpoint_url={s3_endpoint}"
        assert identity.etag and identity.size == trace.stat().st_size
        entries = sorted(p.name for p in cache_dir.glob("*.model"))
        assert entries == [identity.cache_key() + ".model"]
    finally:
        manager.stop()

    # A second server reached under another name is another namespace: another key, whatever the bucket.
    other = FsspecStorage(f"s3://{bucket}/logs", {"endpoint_url": "http://127.0.0.1:1"})
    assert other.identity_location(source.path) != identity.location
    # Opened again with the same cache: served from it, nothing parsed.
    again = RunManager(f"s3://{bucket}/logs", cache_dir=str(cache_dir), max_workers=1)
    try:
        assert again.wait_until_settled(30)
        assert again.runs()[0]["status"] == "ready"
        assert again._pool is None  # no parser process was needed
    finally:
        again.stop()


def test_unlistable_bucket_is_reported_not_fatal(s3: Any, make_client) -> None:
    client = make_client("s3://no-such-bucket/logs")
    assert client.plugin.is_active() is False
    status, body = client.get("runs")
    assert status == 200 and body["scanned"] is True and body["runs"] == []
    assert "no-such-bucket" in body["logdir_error"]


def test_logdir_without_an_implementation_names_what_to_install() -> None:
    with pytest.raises(LogdirUnreadable, match="no fsspec implementation for nosuchstore://"):
        scan_logdir("nosuchstore://bucket/logs")


def test_object_store_stats_identify_content(tmp_path: Path) -> None:
    """Each implementation names size, time and tag differently; all give the same FileStat fields."""
    import datetime

    when = datetime.datetime(2024, 5, 1, 12, 0, 0, 250000, tzinfo=datetime.timezone.utc)
    ns = 1714564800_250000000
    s3_info = {"Size": 10, "size": 10, "LastModified": when, "ETag": '"abc"', "type": "file"}
    gcs_info = {"size": 10, "updated": "2024-05-01T12:00:00.250Z", "md5Hash": "q1w2", "generation": "7"}
    azure_info = {"size": 10, "last_modified": when, "etag": "0x8DC"}
    hdfs_info = {"size": 10, "mtime": 1714564800.25}
    assert [(s.size, s.mtime_ns, s.etag) for s in map(_remote_stat, (s3_info, gcs_info, azure_info, hdfs_info))] == [
        (10, ns, "abc"), (10, ns, "q1w2"), (10, ns, "0x8DC"), (10, ns, None)]
    local = open_storage(f"file://{tmp_path}")
    assert local.identity_location(str(tmp_path / "a")) == str(tmp_path / "a") and not local.atomic_writes
    assert open_storage("gs://b/logs").atomic_writes and not open_storage("hdfs://nn/logs").atomic_writes


def test_s3_json_without_a_layout_is_sniffed_once(s3: Any) -> None:
    """A bucket's ``trace.json`` is found by its first bytes (one ranged read), the verdicts are kept by ETag:
    a rescan of an unchanged prefix reads no object."""
    from profscope.tb_plugin.store.discovery import Discovery

    bucket = "sniffed-runs"
    s3.create_bucket(Bucket=bucket)
    first_mlp = sorted(real_trace(MLP).glob("*.pt.trace.json.gz"))[0]
    s3.upload_file(str(first_mlp), bucket, "logs/exp/trace.json.gz")
    s3.put_object(Bucket=bucket, Key="logs/exp/config.json", Body=b'{"lr": 0.1}')
    storage = FsspecStorage(f"s3://{bucket}/logs")
    reads: list[str] = []
    read_head = storage.read_head

    def counting(location: str, limit: int) -> Any:
        reads.append(location)
        return read_head(location, limit)

    storage.read_head = counting  # type: ignore[method-assign]
    discovery = Discovery(f"s3://{bucket}/logs", storage=storage)
    found, _ = discovery.complete_sources()
    assert [(s.run, s.worker, s.span, s.layout) for s in found] == [("exp", "trace", "trace.json.gz", "chrome")]
    assert sorted(reads) == [f"s3://{bucket}/logs/exp/config.json", f"s3://{bucket}/logs/exp/trace.json.gz"]
    assert discovery.skipped.counts == {"not_a_chrome_trace": 1}
    reads.clear()
    discovery.complete_sources()
    assert reads == []


def test_s3_json_with_a_long_header_is_sniffed_in_ranges(s3: Any) -> None:
    """An object whose events come after a 300 KB header: read in ranged requests as far as its events' key
    (``FsspecStorage.read_range``), found, and the verdict kept by ETag."""
    from profscope.tb_plugin.store.discovery import Discovery

    bucket = "long-headers"
    s3.create_bucket(Bucket=bucket)
    header = b'{"metadata": {"config": "' + b"c" * (300 << 10) + b'"}, '
    s3.put_object(Bucket=bucket, Key="logs/exp/harness.json",
                  Body=header + b'"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2}]}')
    s3.put_object(Bucket=bucket, Key="logs/exp/settings.json", Body=header[:-2] + b"}")
    storage = FsspecStorage(f"s3://{bucket}/logs")
    ranges: list[tuple[str, int]] = []
    read_range = storage.read_range

    def counting(location: str, start: int, limit: int) -> Any:
        ranges.append((location.rsplit("/", 1)[-1], start))
        return read_range(location, start, limit)

    storage.read_range = counting  # type: ignore[method-assign]
    discovery = Discovery(f"s3://{bucket}/logs", storage=storage)
    found, _ = discovery.complete_sources()
    assert [(s.worker, s.layout) for s in found] == [("harness", "chrome")]
    assert discovery.skipped.counts == {"not_a_chrome_trace": 1}
    for name in ("harness.json", "settings.json"):  # a first read of 64 KB, then the rest (at the end: no request)
        assert sorted(start for key, start in ranges if key == name)[:2] == [0, 65536], ranges
    ranges.clear()
    discovery.complete_sources()
    assert ranges == []
