"""Ranks side by side: the rank × step matrix and the alignment of one step of every rank on one time axis."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import numpy as np
import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.views.distributed.ranks import distributed, rank_of
from profscope.tb_plugin.views.distributed.rank_steps import RankSteps, rank_alignment, rank_steps, step_matrix

from conftest import copy_trace, real_trace
from handmade import rank_job_trace, write

GLOO = "torch213/ddp_gloo_2ranks"
NCCL = "hta/sampled_ws128_trace_filter"
BASE_NS = 1_700_000_000_000_000_000  # beyond a double's integer precision: alignment must stay in integers


# rank → (steps, how late its clock starts, ns). Rank 2 is the straggler of step 1; rank 3 has steps 1 and 2 only.
HANDMADE = {
    0: ([(0, 500, 200, 300), (1, 500, 200, 300)], 0),
    1: ([(0, 500, 250, 250), (1, 500, 250, 250)], 50_000),
    2: ([(0, 500, 400, 100), (1, 800, 700, 100)], 100_000),
    3: ([(1, 500, 300, 200), (2, 500, 300, 200)], 150_000),
}


def _handmade(tmp_path: Path) -> list[tuple[str, object]]:
    return [(f"rank{r}", load_trace(str(write(tmp_path / f"rank{r}.json", rank_job_trace(r, 4, steps, BASE_NS + late)))))
            for r, (steps, late) in HANDMADE.items()]


def _rank_steps_of(ranks: list[tuple[str, object]]) -> list[RankSteps]:
    return [rank_steps(worker, rank_of(model, worker, i), "span", model) for i, (worker, model) in enumerate(ranks)]


def test_handmade_matrix_shows_the_straggler(tmp_path: Path) -> None:
    matrix = step_matrix(_rank_steps_of(_handmade(tmp_path)))
    assert [r["rank"] for r in matrix["ranks"]] == [0, 1, 2, 3]
    assert matrix["steps"] == ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"]
    assert matrix["step_time"] == [[500, 500, None], [500, 500, None], [500, 800, None], [None, 500, 500]]
    assert matrix["communication"] == [[300, 300, None], [250, 250, None], [100, 100, None], [None, 200, 200]]
    # Host-only ranks: the aten::mm of each step ends before its rank's all-reduce starts, so all of it is exposed.
    assert matrix["exposed_communication"] == matrix["communication"]
    assert matrix["step_start"] == [[0, 1000, None], [0, 1000, None], [0, 1000, None], [None, 1000, 2000]]
    assert matrix["slowest_rank"] == [0, 2, 3]  # ties go to the first row
    assert matrix["step_median"] == [500, 500, 500]


def test_handmade_rows_average_to_the_distributed_view(tmp_path: Path) -> None:
    ranks = _handmade(tmp_path)
    matrix = step_matrix(_rank_steps_of(ranks))
    for i, row in enumerate(distributed(ranks)["ranks"]):
        assert row["rank"] == matrix["ranks"][i]["rank"]
        cells = [v for v in matrix["step_time"][i] if v is not None]
        assert np.mean(cells) == pytest.approx(row["step_time"])


def test_handmade_alignment_by_step_and_by_time(tmp_path: Path) -> None:
    ranks = _handmade(tmp_path)
    placed = list(zip(_rank_steps_of(ranks), [m for _, m in ranks]))
    by_step = rank_alignment(placed, "step", None)
    assert by_step["step"] == "ProfilerStep#1"  # the first step every rank has
    assert by_step["common_steps"] == ["ProfilerStep#1"] and by_step["missing"] == []
    assert [w["shift"] for w in by_step["workers"]] == [-1000, -1000, -1000, -1000]
    assert [(w["step_start"], w["step_end"]) for w in by_step["workers"]][2] == (1000, 1800)
    by_time = rank_alignment(placed, "time", "ProfilerStep#1")
    # Each clock starts 50 µs after the previous rank's: on one axis the step starts 50 µs later per rank.
    assert [w["late"] for w in by_time["workers"]] == [0, 50, 100, 150]
    assert [w["shift"] for w in by_time["workers"]] == [-1000, -950, -900, -850]
    # The straggler's all_reduce (at 700 µs into its step, 1700 in its own time) on the common axis: 100 + 700.
    straggler = by_time["workers"][2]
    assert 1700 + straggler["shift"] == 800
    only_first = rank_alignment(placed, "step", "ProfilerStep#0")
    assert only_first["missing"] == ["rank3"] and len(only_first["workers"]) == 3
    with pytest.raises(ValueError):
        rank_alignment(placed, "step", "ProfilerStep#9")
    with pytest.raises(ValueError):
        rank_alignment(placed, "sideways", None)


def _ranks(folder: str, pattern: str = "*.json.gz") -> list:
    files = sorted(real_trace(folder).glob(pattern))
    return [(f.name.split(".")[0], load_trace(str(f))) for f in files]


@pytest.mark.parametrize("folder,pattern", [(GLOO, "rank*.pt.trace.json.gz"), (NCCL, "*.json.gz")])
def test_real_ranks_agree_with_the_distributed_view(folder: str, pattern: str) -> None:
    ranks = _ranks(folder, pattern)
    rows = distributed(ranks)["ranks"]
    steps = sorted(_rank_steps_of(ranks), key=lambda r: (r.rank, r.worker))
    matrix = step_matrix(steps)
    assert len(matrix["ranks"]) == len(rows) >= 2
    for i, row in enumerate(rows):
        assert (matrix["ranks"][i]["worker"], matrix["ranks"][i]["rank"]) == (row["worker"], row["rank"])
        assert sum(v is not None for v in matrix["step_time"][i]) == row["steps"]

        def mean(field: str) -> float:
            return float(np.mean([v for v in matrix[field][i] if v is not None]))

        # One definition: the row's mean is the Distributed view's per-rank figure.
        assert mean("step_time") == pytest.approx(row["step_time"], rel=1e-12)
        assert mean("communication") == pytest.approx(row["communication"], rel=1e-12)
        assert mean("exposed_communication") == pytest.approx(row["communication"] - row["overlap"], rel=1e-12, abs=1e-9)


def test_thousand_ranks_aggregate() -> None:
    rng = np.random.default_rng(17)
    n_ranks, n_steps = 1000, 8
    straggler, slow_step = 637, 5
    ranks = []
    for r in range(n_ranks):
        duration = rng.integers(90_000_000, 100_000_000, n_steps)
        if r == straggler:
            duration[slow_step] = 150_000_000
        communication = duration // 3
        start = np.concatenate([[0], np.cumsum(duration)[:-1]]) + 5_000_000_000
        ranks.append(RankSteps(worker=f"rank{r}", rank=r, span="s", names=[f"ProfilerStep#{i + 40}" for i in range(n_steps)],
                               start=start, duration=duration, communication=communication,
                               exposed_communication=communication // 2))
    matrix = step_matrix(ranks)
    assert len(matrix["step_time"]) == n_ranks and {len(row) for row in matrix["step_time"]} == {n_steps}
    assert matrix["steps"][0] == "ProfilerStep#40"
    assert matrix["slowest_rank"][slow_step] == straggler
    assert matrix["step_time"][straggler][slow_step] == 150_000
    assert matrix["step_time"][4] == (ranks[4].duration / 1000).tolist()
    assert matrix["exposed_communication"][999] == (ranks[999].exposed_communication / 1000).tolist()
    assert matrix["step_median"][0] == pytest.approx(np.median([r.duration[0] for r in ranks]) / 1000, rel=1e-12)


def test_routes_matrix_csv_and_alignment(tmp_path: Path, make_client) -> None:
    from test_routes import check

    logdir = tmp_path / "logdir"
    for f in real_trace(GLOO).glob("rank*.pt.trace.json.gz"):
        copy_trace(f, logdir / "ddp")
    for f in (logdir / "ddp").iterdir():
        os.utime(f, (1, 1))
    client = make_client(logdir)
    client.settle()
    status, body = client.get("distributed/matrix", run="ddp")
    assert status == 200, body
    check(body, "DistributedMatrix")
    status, dist = client.get("distributed", run="ddp")
    assert [r["worker"] for r in body["ranks"]] == [r["worker"] for r in dist["ranks"]]
    for i, row in enumerate(dist["ranks"]):
        assert np.mean(body["step_time"][i]) == pytest.approx(row["step_time"])
    status, text = client.get("distributed/matrix", run="ddp", format="csv")
    assert status == 200
    lines = list(csv.reader(io.StringIO(text if isinstance(text, str) else text.decode())))
    assert lines[0][:3] == ["Rank", "Worker", "Step"]
    assert len(lines) == 1 + sum(len(row) for row in body["step_time"])
    status, placed = client.get("trace/ranks", run="ddp", align="time")
    assert status == 200, placed
    check(placed, "TraceRanks")
    assert [w["worker"] for w in placed["workers"]] == ["rank0", "rank1"]
    assert min(w["late"] for w in placed["workers"]) == 0
    status, error = client.get("trace/ranks", run="ddp", align="diagonal")
    assert status == 400
    status, error = client.get("trace/ranks", run="ddp", step="nope")
    assert status == 400
