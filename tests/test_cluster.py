"""Jobs of many ranks: ``profscope ingest`` on a real Dask LocalCluster (worker processes, TCP on 127.0.0.1) and on
the parser pool, packs read by servers with an empty cache, and the cross-rank answers against what the generator put
in (bench/jobgen.py). Faults: a worker killed in the middle of a task, a trace changed after ingest, damaged packs,
files that are no trace, packs on S3 (moto's server)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, wait_for

distributed_module = pytest.importorskip("dask.distributed", reason="the cluster tests need the cluster extra")
pytest.importorskip("pyarrow", reason="the cluster tests need the cluster extra")

from profscope.tb_plugin.reports import cli  # noqa: E402
from profscope.tb_plugin.store import ingest, packs  # noqa: E402

RANKS = 64
RUN = "job"


def _jobgen() -> Any:
    spec = importlib.util.spec_from_file_location("jobgen", REPO / "bench" / "jobgen.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules["jobgen"] = module
    spec.loader.exec_module(module)
    return module


def _settled(paths: list[Path]) -> None:
    """Files older than discovery's settle time (a server takes them at once)."""
    old = time.time() - 60
    for path in paths:
        os.utime(path, (old, old))


def _job(tmp_path: Path, ranks: int = RANKS, **kwargs: Any) -> tuple[Any, Path]:
    jobgen = _jobgen()
    job = jobgen.Job(ranks=ranks, **kwargs)
    logdir = tmp_path / "logdir"
    _settled(jobgen.write_job(job, logdir / RUN, gzip=True))
    return job, logdir


def _copy_without_packs(logdir: Path, dest: Path) -> Path:
    shutil.copytree(logdir, dest, ignore=shutil.ignore_patterns(packs.PACK_FOLDER), copy_function=shutil.copy2)
    return dest


def _manifests(logdir: Path) -> list[Path]:
    return sorted(logdir.rglob(f"{packs.PACK_FOLDER}/*/{packs.MANIFEST}"))


def _check_packs(logdir: Path) -> int:
    """Every manifest names files that are there and match it (no half-written pack is visible)."""
    count = 0
    for manifest_path in _manifests(logdir):
        manifest = json.loads(manifest_path.read_text())
        folder = manifest_path.parent / manifest["key"]
        for name, expected in manifest["files"].items():
            assert packs.file_entry(str(folder / name)) == expected, (manifest_path, name)
        count += 1
    return count


@pytest.fixture(scope="module")
def cluster() -> Any:
    """A LocalCluster of 2 worker processes on 127.0.0.1, each declaring its memory as the MEMORY resource."""
    local = ingest.local_cluster(workers=2, memory_bytes=4 << 30)
    try:
        yield local
    finally:
        local.close()


def _get(client: Any, route: str, **params: Any) -> tuple[int, Any]:
    """A route's answer once its span is loaded (a damaged pack noticed by a view is parsed meanwhile: 202)."""
    return wait_for(lambda: (lambda answer: answer if answer[0] != 202 else None)(client.get(route, **params)), 120,
                    f"{route} {params}", interval=0.1)


def _routes_of_rank(client: Any, worker: str) -> dict[str, Any]:
    span = None
    out = {}
    for route, params in [("overview", {}), ("operators", {}), ("operators", {"group_by": "input_shape"}),
                          ("kernels", {}), ("kernels", {"group_by": "op_and_name"}), ("memory", {}),
                          ("flamegraph", {}), ("steptrace", {}), ("critical_path", {}), ("trace/tracks", {}),
                          ("analyses/idle", {}), ("analyses/launches", {}), ("summary", {})]:
        status, body = _get(client, route, run=RUN, worker=worker, **params)
        assert status == 200, (route, worker, body)
        out[route + json.dumps(params)] = body
    status, body = _get(client, "trace/slices", run=RUN, worker=worker, start=0, end=10 ** 12, width=500)
    assert status == 200
    out["trace/slices"] = body
    del span
    return out


def _run_routes(client: Any) -> dict[str, Any]:
    out = {}
    for route in ("distributed", "distributed/matrix", "distributed/collectives"):
        status, body = _get(client, route, run=RUN)
        assert status == 200, (route, body)
        out[route] = body
    return out


def test_dask_ingest_of_64_ranks_gives_the_answers_of_a_parse(tmp_path: Path, cluster: Any, make_client) -> None:
    job, logdir = _job(tmp_path)
    reference_logdir = _copy_without_packs(logdir, tmp_path / "parsed")
    tasks = ingest.plan(str(logdir))
    assert len(tasks) == RANKS
    results = ingest.run_dask(tasks, lambda r: None, cluster=cluster)
    assert sorted(r.status for r in results) == ["ingested"] * RANKS, [r for r in results if r.status != "ingested"]
    assert _check_packs(logdir) == RANKS
    # A rerun ingests nothing.
    again = ingest.run_dask(ingest.plan(str(logdir)), lambda r: None, cluster=cluster)
    assert {r.status for r in again} == {"current"}

    packed = make_client(logdir)  # an empty cache of its own
    parsed = make_client(reference_logdir)
    packed.settle(120)
    parsed.settle(300)
    manager = packed.plugin.manager
    assert manager.pack_loads == RANKS and manager._pool is None  # no trace parsed: no parser process started
    assert parsed.plugin.manager.pack_loads == 0

    assert _run_routes(packed) == _run_routes(parsed)
    for rank in range(RANKS):
        assert _routes_of_rank(packed, f"rank{rank}") == _routes_of_rank(parsed, f"rank{rank}"), rank

    # The generator's straggler and bus bandwidths.
    truth = job.truth()
    answer = _run_routes(packed)["distributed/collectives"]
    stragglers = answer["stragglers"]
    assert stragglers[0]["rank"] == truth["straggler"]
    assert stragglers[0]["arrived_last"] == len(truth["collectives"])
    assert all(row["arrived_last"] == 0 for row in stragglers[1:])
    kinds = {(k["name"][:9], k["group_size"]): k for k in answer["kinds"]}
    for kind, expected in truth["kinds"].items():
        got = kinds[(kind[:9], RANKS)]
        assert got["busbw"] == pytest.approx(expected["busbw"], rel=1e-9)
        assert got["algbw"] == pytest.approx(expected["algbw"], rel=1e-9)
    collectives = answer["collectives"]
    matched = {(g, s): i for i, (g, s) in enumerate(zip(collectives["process_group"], collectives["seq"]))}
    assert len(matched) == len(truth["collectives"])
    for expected in truth["collectives"]:
        i = matched[(expected["process_group"], expected["seq"])]
        assert collectives["ranks"][i] == RANKS and collectives["group_size"][i] == RANKS
        assert collectives["bytes"][i] == expected["bytes"]
        assert collectives["latency"][i] * 1000 == pytest.approx(expected["latency_ns"], abs=1e-6)
        assert collectives["skew"][i] * 1000 == pytest.approx(expected["skew_ns"], abs=1e-6)
        assert collectives["last_rank"][i] == expected["last_rank"] == truth["straggler"]
        assert collectives["busbw"][i] == pytest.approx(expected["busbw"], rel=1e-9)
    status, csv = packed.get("distributed/collectives", run=RUN, format="csv", table="stragglers")
    assert status == 200 and csv.decode().splitlines()[1].startswith(f"{truth['straggler']},")


def _wait_for_processing(client: Any, timeout: float) -> str:
    def processing() -> Any:
        busy = [worker for worker, keys in client.processing().items() if keys]
        return busy[0] if busy else None

    return wait_for(processing, timeout, "a task in processing", interval=0.01)


def test_a_worker_killed_mid_task_is_retried_and_no_half_pack_shows(tmp_path: Path, cluster: Any) -> None:
    jobgen = _jobgen()
    job = jobgen.Job(ranks=4, steps=60, collectives=40, compute_kernels=40)  # big enough to be killed mid-parse
    logdir = tmp_path / "logdir"
    _settled(jobgen.write_job(job, logdir / RUN))
    tasks = ingest.plan(str(logdir))
    results: list[Any] = []
    runner = threading.Thread(target=lambda: results.extend(ingest.run_dask(tasks, lambda r: None, cluster=cluster)))
    observer = distributed_module.Client(cluster)
    try:
        runner.start()
        address = _wait_for_processing(observer, 60)
        pid = observer.run(os.getpid, workers=[address])[address]
        os.kill(pid, signal.SIGKILL)
        assert _check_packs(logdir) <= len(tasks)  # whatever is visible is whole
        runner.join(180)
        assert not runner.is_alive()
    finally:
        observer.close()
    assert sorted(r.status for r in results) == ["ingested"] * len(tasks), results
    assert _check_packs(logdir) == len(tasks)
    again = ingest.run_dask(ingest.plan(str(logdir)), lambda r: None, cluster=cluster)
    assert {r.status for r in again} == {"current"}


def test_changed_trace_is_ingested_again_and_damaged_packs_are_parsed(tmp_path: Path, make_client) -> None:
    job, logdir = _job(tmp_path, ranks=4)
    assert cli.main(["ingest", str(logdir), "--json"]) == 0
    first = {m: m.read_bytes() for m in _manifests(logdir)}
    # A trace rewritten after ingest: only it is ingested again (its old key's folder removed).
    changed = sorted((logdir / RUN).glob("rank2.*"))[0]
    changed.write_bytes(_jobgen().trace_bytes(_jobgen().Job(ranks=4, seed=99), 2))
    _settled([changed])
    rerun = ingest.run_local(ingest.plan(str(logdir)), lambda r: None)
    assert sorted((r.relative.split("/")[-1].split(".")[0], r.status) for r in rerun) == [
        ("rank0", "current"), ("rank1", "current"), ("rank2", "ingested"), ("rank3", "current")]
    after = {m: m.read_bytes() for m in _manifests(logdir)}
    assert [m for m in after if after[m] != first[m]] == [m for m in after if "rank2." in str(m)]
    assert len(list((logdir / RUN / packs.PACK_FOLDER / changed.name).iterdir())) == 2  # manifest + one key

    reference = make_client(_copy_without_packs(logdir, tmp_path / "parsed"))
    reference.settle(120)
    # Damage: rank0's model bytes (an array's CRC-32 fails when read), rank1's manifest, rank3's model header.
    def folder(rank: int) -> Path:
        manifest = next(m for m in _manifests(logdir) if f"rank{rank}." in str(m))
        return manifest.parent / json.loads(manifest.read_text())["key"]

    model0 = folder(0) / packs.MODEL
    data = bytearray(model0.read_bytes())
    data[64:len(data) // 2] = bytes(len(data) // 2 - 64)  # the arrays (the header is at the end)
    model0.write_bytes(bytes(data))
    manifest1 = next(m for m in _manifests(logdir) if "rank1." in str(m))
    manifest1.write_text("{not json")
    model3 = folder(3) / packs.MODEL
    data = bytearray(model3.read_bytes())
    data[-10:] = b"x" * 10  # the header (at the end)
    model3.write_bytes(bytes(data))
    before = {p: p.read_bytes() for p in logdir.rglob("*") if p.is_file()}
    packed = make_client(logdir)
    packed.settle(120)
    for rank in range(4):
        assert _routes_of_rank(packed, f"rank{rank}") == _routes_of_rank(reference, f"rank{rank}"), rank
    packed.settle(120)
    assert _run_routes(packed) == _run_routes(reference)
    # Rank 2's pack was used; the three damaged ones were noticed and their traces parsed.
    models = {key[1]: state.model for key, state in packed.plugin.manager._spans.items()}
    assert [models[f"rank{r}"].writable for r in range(4)] == [True, True, False, True]
    # Readers never repair or remove anyone's pack: the logdir is as it was.
    assert {p: p.read_bytes() for p in logdir.rglob("*") if p.is_file()} == before


def test_bad_files_fail_alone_with_their_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, logdir = _job(tmp_path, ranks=2)
    bad = logdir / RUN / "rank7.1790000000007.pt.trace.json"
    bad.write_text('{"traceEvents": [ {"ph": "X", "name": "a", "ts": 1, ')  # cut short
    _settled([bad])
    status = cli.main(["ingest", str(logdir), "--json"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert status == 1
    summary = lines[-1]["summary"]
    assert summary["ingested"] == 2 and summary["failed"] == 1
    (failure,) = summary["failures"]
    assert failure["file"].endswith(bad.name) and failure["error"]
    assert len(_manifests(logdir)) == 2
    assert not (logdir / RUN / packs.PACK_FOLDER / bad.name / packs.MANIFEST).exists()


def test_packs_on_s3_are_read_by_a_second_server_with_an_empty_cache(tmp_path: Path, monkeypatch, make_client,
                                                                         request) -> None:
    pytest.importorskip("s3fs")
    s3 = request.getfixturevalue("s3")
    job, logdir = _job(tmp_path, ranks=4)
    s3.create_bucket(Bucket="jobs")
    for path in sorted((logdir / RUN).iterdir()):
        s3.upload_file(str(path), "jobs", f"logs/{RUN}/{path.name}")
    url = "s3://jobs/logs"
    assert cli.main(["ingest", url]) == 0
    keys = [item["Key"] for item in s3.list_objects_v2(Bucket="jobs")["Contents"]]
    assert sum(k.endswith(packs.MANIFEST) for k in keys) == 4
    assert cli.main(["ingest", url, "--json"]) == 0  # nothing to do
    reference = make_client(logdir)  # the same traces, local, parsed
    reference.settle(120)
    server = make_client(url)
    server.settle(120)
    manager = server.plugin.manager
    assert manager.pack_loads == 4 and manager._pool is None
    assert _run_routes(server) == _run_routes(reference)
    for rank in range(4):
        assert _routes_of_rank(server, f"rank{rank}") == _routes_of_rank(reference, f"rank{rank}")


from test_remote_logdir import s3, s3_endpoint  # noqa: E402,F401 - the moto server fixtures


def test_the_writer_packs_each_span_in_its_child_process(tmp_path: Path, make_client) -> None:
    from test_writer import FakeProfiler

    from profscope.writer import trace_handler

    job = _jobgen().Job(ranks=2)
    logdir = tmp_path / "logdir"
    writers = [trace_handler(logdir, run=RUN, worker=f"rank{rank}", cpu_sample_interval=None, pack=True)
               for rank in range(2)]
    for rank, writer in enumerate(writers):
        writer(FakeProfiler(_jobgen().trace_bytes(job, rank)))
    for writer in writers:
        assert writer.close(timeout=120)
    assert _check_packs(logdir) == 2  # written by the analysis children, beside each span
    with pytest.raises(ValueError, match="event_file"):
        trace_handler(logdir, run=RUN, event_file=False, pack=True)
    reference = make_client(_copy_without_packs(logdir, tmp_path / "parsed"))
    reference.settle(120)
    server = make_client(logdir)
    server.settle(120)
    assert server.plugin.manager.pack_loads == 2 and server.plugin.manager._pool is None
    assert _run_routes(server) == _run_routes(reference)


def test_summary_and_report_read_the_pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    _, logdir = _job(tmp_path, ranks=2)
    assert cli.main(["ingest", str(logdir)]) == 0
    capsys.readouterr()
    monkeypatch.setenv("PROFSCOPE_CACHE_DIR", str(tmp_path / "empty-cache"))
    import profscope.tb_plugin.store.cache as cache_module

    def no_parse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a trace was parsed")

    monkeypatch.setattr(cache_module, "load_trace", no_parse)
    trace = sorted((logdir / RUN).glob("rank1.*"))[0]
    assert cli.main(["summary", str(trace), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["overview"]["steps"]
    assert cli.main(["report", RUN, "--logdir", str(logdir), "--worker", "rank0", "-o", str(tmp_path / "r.html")]) == 0
    assert (tmp_path / "r.html").stat().st_size > 1000


def test_cross_rank_matrix_and_general_reductions_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The [ranks, collectives] reductions (every rank ran the same collectives) and the per-cell ones give the same
    answers; a collective one rank did not record is matched among the others."""
    import dataclasses

    import numpy as np

    from profscope.tb_plugin.ingest.load import load_trace
    from profscope.tb_plugin.views.distributed import cross_rank
    from profscope.tb_plugin.views.distributed.rank_summary import Table, coded
    from profscope.tb_plugin.views.distributed.ranks import summary_of

    jobgen = _jobgen()
    job = jobgen.Job(ranks=6, steps=2, collectives=6)
    paths = jobgen.write_job(job, tmp_path / RUN)
    summaries = [summary_of(p.name.split(".")[0], "", load_trace(str(p))) for p in paths]
    ranks = list(range(len(summaries)))
    monkeypatch.setattr(cross_rank, "MATRIX", True)
    matrix = cross_rank.cross_rank(summaries, ranks)
    monkeypatch.setattr(cross_rank, "MATRIX", False)
    assert cross_rank.cross_rank(summaries, ranks) == matrix
    truth = job.truth()
    assert matrix["stragglers"][0]["rank"] == truth["straggler"]
    # Rank 3 without its third collective: that one is matched among the 5 others, the rest among all 6.
    table = summaries[3].collectives
    keep = np.arange(len(table)) != 2
    names, groups = table.texts["name"].tolist(), table.texts["process_group"].tolist()
    cut = Table({"name": coded([n for n, k in zip(names, keep) if k]),
                 "process_group": coded([g for g, k in zip(groups, keep) if k])},
                {key: value[keep] for key, value in table.numbers.items()})
    summaries[3] = dataclasses.replace(summaries[3], collectives=cut)
    answer = cross_rank.cross_rank(summaries, ranks)
    collectives = answer["collectives"]
    dropped = (groups[2], int(table.numbers["seq"][2]))
    for g, s, count in zip(collectives["process_group"], collectives["seq"], collectives["ranks"]):
        assert count == (5 if (g, s) == dropped else 6)
    assert answer["stragglers"][0]["rank"] == truth["straggler"]


def _folder_slices(summaries: list[Any]) -> list[Any]:
    """The summaries as a folder's summary gives them: every rank's columns slices of one array, its texts codes into
    one shared list of values, in another order than any rank met them (and holding values a rank may not use)."""
    import dataclasses

    import numpy as np

    from profscope.tb_plugin.views.distributed.rank_summary import Coded, Table

    tables = [s.collectives for s in summaries]
    starts = np.concatenate([[0], np.cumsum([len(t) for t in tables])]).tolist()
    texts: dict[str, Any] = {}
    for key in tables[0].texts:
        values = sorted({v for t in tables for v in t.texts[key]}, reverse=True) + ["unused"]
        codes = np.asarray([values.index(v) for t in tables for v in t.texts[key]], dtype=np.int32)
        texts[key] = Coded(codes, values)
    numbers = {key: np.concatenate([t.numbers[key] for t in tables]) for key in tables[0].numbers}
    out = []
    for i, summary in enumerate(summaries):
        a, b = starts[i], starts[i + 1]
        table = Table({k: Coded(v.codes[a:b], v.values) for k, v in texts.items()},
                      {k: v[a:b] for k, v in numbers.items()})
        out.append(dataclasses.replace(summary, collectives=table))
    return out


def test_slices_of_a_folder_summary_give_the_answers_of_each_rank_s_own_tables(tmp_path: Path) -> None:
    """Ranks whose columns are slices of one folder's columns (and whose texts are codes into the folder's values)
    give the cross-rank answers and the Distributed view of ranks read one by one; their columns join without a
    copy."""
    import dataclasses

    import numpy as np

    from profscope.tb_plugin.ingest.load import load_trace
    from profscope.tb_plugin.views import answers
    from profscope.tb_plugin.views.distributed.rank_summary import Table, coded, joined
    from profscope.tb_plugin.views.distributed.ranks import summary_of

    jobgen = _jobgen()
    paths = jobgen.write_job(jobgen.Job(ranks=6, steps=2, collectives=6), tmp_path / RUN)
    own = [summary_of(p.name.split(".")[0], "", load_trace(str(p))) for p in paths]
    # Rank 3 without its third collective: the ranks are no [ranks, collectives] matrix then.
    for cut in (False, True):
        if cut:
            table = own[3].collectives
            keep = np.arange(len(table)) != 2
            own[3] = dataclasses.replace(own[3], collectives=Table(
                {key: coded([v for v, k in zip(values.tolist(), keep) if k]) for key, values in table.texts.items()},
                {key: value[keep] for key, value in table.numbers.items()}))
        sliced = _folder_slices(own)
        assert answers.cross_rank(sliced) == answers.cross_rank(own)
        assert answers.distributed_from_summaries(sliced) == answers.distributed_from_summaries(own)
    starts = [s.collectives.numbers["start"] for s in sliced]
    whole = joined(starts)
    assert np.shares_memory(whole, starts[0]) and whole.tolist() == np.concatenate(starts).tolist()
    apart = joined([starts[0], starts[2]])  # not end to end: a copy
    assert not np.shares_memory(apart, starts[0]) and apart.tolist() == np.concatenate([starts[0], starts[2]]).tolist()


def _counting(calls: list[Any], function: Any) -> Any:
    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return function(*args, **kwargs)

    return counted


def test_a_packed_run_is_listed_from_its_manifests_and_answered_from_its_folder_summary(
        tmp_path: Path, make_client, monkeypatch: pytest.MonkeyPatch) -> None:
    from profscope.tb_plugin.server import plugin as plugin_module
    from profscope.tb_plugin.store import runs as runs_module

    _, logdir = _job(tmp_path, ranks=8)
    results = ingest.run_local(ingest.plan(str(logdir)), lambda r: None)
    assert {r.status for r in results} == {"ingested"}
    summary = logdir / RUN / packs.PACK_FOLDER / packs.FOLDER_SUMMARY / packs.FOLDER_MANIFEST
    manifest = json.loads(summary.read_text())
    assert [m["name"] for m in manifest["members"]] == sorted(p.name for p in (logdir / RUN).glob("rank*"))
    written = summary.read_bytes()
    assert {r.status for r in ingest.run_local(ingest.plan(str(logdir)), lambda r: None)} == {"current"}
    assert summary.read_bytes() == written  # a rerun writes nothing
    reference = make_client(_copy_without_packs(logdir, tmp_path / "parsed"))
    reference.settle(120)
    listed, expected = reference.get("runs")[1]["runs"], _run_routes(reference)

    opened: list[Any] = []
    own: list[Any] = []
    monkeypatch.setattr(runs_module, "load_model", _counting(opened, runs_module.load_model))
    monkeypatch.setattr(plugin_module, "summary_of_rank", _counting(own, plugin_module.summary_of_rank))
    packed = make_client(logdir)
    packed.settle(120)
    assert packed.get("runs")[1]["runs"] == listed  # facts and ranks as a parse lists them
    assert opened == []  # listed from the packs' manifests: no model read
    assert _run_routes(packed) == expected
    # The run's answers read one model (the first rank's, for its links' peak) and no rank's own summary.
    assert len(opened) == 1 and own == []
    assert packed.plugin.manager.pack_loads == 8 and packed.plugin.manager._pool is None
    assert _routes_of_rank(packed, "rank5") == _routes_of_rank(reference, "rank5")


def test_a_folder_summary_serves_only_the_packs_it_holds(tmp_path: Path, make_client,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from profscope.tb_plugin.server import plugin as plugin_module

    _, logdir = _job(tmp_path, ranks=4)
    ingest.run_local(ingest.plan(str(logdir)), lambda r: None)
    # Rank 2 changed and packed again alone (no reduce step): the folder's summary holds its old pack.
    changed = sorted((logdir / RUN).glob("rank2.*"))[0]
    changed.write_bytes(_jobgen().trace_bytes(_jobgen().Job(ranks=4, seed=99), 2))
    _settled([changed])
    (task,) = [t for t in ingest.plan(str(logdir)) if t.relative.endswith(changed.name)]
    assert ingest.ingest_task(task, forks=False).status == "ingested"
    reference = make_client(_copy_without_packs(logdir, tmp_path / "parsed"))
    reference.settle(120)
    expected = _run_routes(reference)
    own: list[Any] = []
    monkeypatch.setattr(plugin_module, "summary_of_rank", _counting(own, plugin_module.summary_of_rank))
    packed = make_client(logdir)
    packed.settle(120)
    assert _run_routes(packed) == expected
    assert [args[0] for args in own] == ["rank2"]  # the others from the folder's summary
    # A damaged folder summary (a byte of its collectives file) is ignored: every rank is read from its own pack.
    folder = logdir / RUN / packs.PACK_FOLDER / packs.FOLDER_SUMMARY
    key = json.loads((folder / packs.FOLDER_MANIFEST).read_text())["key"]
    data = folder / key / packs.folder_summary_name("collectives")
    damaged = bytearray(data.read_bytes())
    damaged[len(damaged) // 2] ^= 0xFF
    data.write_bytes(bytes(damaged))
    own.clear()
    again = make_client(logdir)
    again.settle(120)
    assert _run_routes(again) == expected
    assert sorted(args[0] for args in own) == [f"rank{r}" for r in range(4)]


def test_packs_made_by_other_views_list_and_answer_from_their_models(tmp_path: Path, make_client,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A pack made before the views changed (another VIEWS_VERSION) keeps its model, but its listing, its summary
    tables and its folder's summary are made again from the model: never shown as they were."""
    from profscope.tb_plugin.server import plugin as plugin_module

    _, logdir = _job(tmp_path, ranks=4)
    ingest.run_local(ingest.plan(str(logdir)), lambda r: None)
    reference = make_client(_copy_without_packs(logdir, tmp_path / "parsed"))
    reference.settle(120)
    listed, expected = reference.get("runs")[1]["runs"], _run_routes(reference)
    # Every pack and the folder's summary as an older version wrote them: other views, a listing that is now wrong.
    summary = logdir / RUN / packs.PACK_FOLDER / packs.FOLDER_SUMMARY / packs.FOLDER_MANIFEST
    for manifest_path in [*_manifests(logdir), summary]:
        manifest = json.loads(manifest_path.read_text())
        assert manifest["views_version"] == packs.VIEWS_VERSION
        manifest["views_version"] -= 1
        if "listing" in manifest:  # wrong, and of another shape (other views' facts): never read
            manifest["listing"]["rank"] = 7
            manifest["listing"]["facts"]["duration"] = 1.0
            manifest["listing"]["facts"]["moved"] = manifest["listing"]["facts"].pop("device")
        manifest_path.write_text(json.dumps(manifest))
    root = packs.PackRoot(str(logdir))
    assert root.find_folder_summary(RUN) is None
    own: list[Any] = []
    monkeypatch.setattr(plugin_module, "summary_of_rank", _counting(own, plugin_module.summary_of_rank))
    packed = make_client(logdir)
    packed.settle(120)
    assert packed.get("runs")[1]["runs"] == listed
    assert _run_routes(packed) == expected
    assert packed.plugin.manager.pack_loads == 4 and packed.plugin.manager._pool is None  # the models: no parse
    assert sorted(args[0] for args in own) == [f"rank{r}" for r in range(4)]
    assert all(args[3] is False for args in own)  # made from the models, not read from the packs' tables
    # Ingest keeps the packs (their models are current) and writes the folder's summary anew, of the current packs
    # only: none here.
    assert {r.status for r in ingest.run_local(ingest.plan(str(logdir)), lambda r: None)} == {"current"}
    assert root.find_folder_summary(RUN) is None


def test_packs_of_another_format_are_ignored_and_ingested_again(tmp_path: Path) -> None:
    _, logdir = _job(tmp_path, ranks=1)
    ingest.run_local(ingest.plan(str(logdir)), lambda r: None)
    (manifest_path,) = _manifests(logdir)
    manifest = json.loads(manifest_path.read_text())
    assert manifest["format"] == packs.PACK_FORMAT and manifest["listing"]["rank"] == 0
    (task,) = ingest.plan(str(logdir))
    root = packs.PackRoot(str(logdir))
    assert root.find(task.relative, task.size, task.mtime_ns, None) is not None
    # A pack of format 1 (no listing): never misread, ingested again.
    older = {key: value for key, value in manifest.items() if key != "listing"}
    manifest_path.write_text(json.dumps({**older, "format": 1}))
    assert root.find(task.relative, task.size, task.mtime_ns, None) is None
    # A listing that is not what this version writes is no pack either.
    manifest_path.write_text(json.dumps({**manifest, "listing": {**manifest["listing"], "rank": "0"}}))
    assert root.find(task.relative, task.size, task.mtime_ns, None) is None
    assert [r.status for r in ingest.run_local(ingest.plan(str(logdir)), lambda r: None)] == ["ingested"]
    assert json.loads(manifest_path.read_text()) != manifest  # written anew (another time, same key)
    assert root.find(task.relative, task.size, task.mtime_ns, None) is not None
