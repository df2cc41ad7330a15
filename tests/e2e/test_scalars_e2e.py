"""A writer run as TensorBoard itself sees it: its run list, its plugin listing, its Scalars dashboard.

A tiny model is trained under torch.profiler with Profscope's writer (three spans), into a
staging folder. The TensorBoard logdir first receives only the run's event file, so the
only evidence of a Profscope run is what TensorBoard's data provider read from it: the run
must be in TensorBoard's ``/data/runs`` and the PROFSCOPE tab enabled in
``/data/plugins_listing`` while Profscope's own scan finds no trace. Then the traces
arrive, and the Scalars dashboard's route must give three ``profscope/step_time_ms``
points equal to the mean step time that Profscope's ``overview`` route computes for each
span (and the same for samples per second).
"""

from __future__ import annotations

import shutil
import time
import urllib.parse
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from .conftest import running_tensorboard
from .harness import TensorBoardServer

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

RUN = "train/mlp"  # nested: TensorBoard and Profscope must name it alike
WORKER = "trainer"
BATCH_SIZE = 8
SPANS = 3
ROUTES = "/data/plugin/profscope"
WAIT_S = 120.0
POLL_S = 0.25


@dataclass(frozen=True)
class ScalarsSetup:
    server: TensorBoardServer
    staging_run: Path  # the writer's run folder, traces included
    step_ends: list[int]  # each span's last profiled step, in time order
    spans: list[str]


def _profile_three_spans(logdir: Path) -> list[Any]:
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
    from profscope.writer import trace_handler

    writer = trace_handler(logdir, run=RUN, worker=WORKER, batch_size=BATCH_SIZE)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*Profiler clears events at the end of each cycle.*")
        with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU],
            schedule=torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=SPANS),
            on_trace_ready=writer, record_shapes=True, profile_memory=True,
        ) as prof:
            for _ in range(4 * SPANS):
                loss = model(torch.randn(BATCH_SIZE, 32)).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                prof.step()
    assert writer.close(timeout=WAIT_S), "the writer did not finish its scalars"
    return list(writer.spans)


@pytest.fixture(scope="module")
def scalars_setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScalarsSetup]:
    staging = tmp_path_factory.mktemp("scalars-staging")
    spans = _profile_three_spans(staging)
    assert len(spans) == SPANS
    staging_run = staging / RUN
    event_files = sorted(staging_run.glob("events.out.tfevents.*"))
    assert len(event_files) == 1

    logdir = tmp_path_factory.mktemp("scalars-logdir")
    (logdir / RUN).mkdir(parents=True)
    shutil.copy2(event_files[0], logdir / RUN / event_files[0].name)  # the event file only, for now

    with running_tensorboard(logdir, tmp_path_factory.mktemp("scalars-tensorboard"),
                             ["--profscope_refresh_seconds", "1", "--reload_interval", "1"]) as server:
        yield ScalarsSetup(
            server=server,
            staging_run=staging_run,
            step_ends=[span.manifest.step_range[1] for span in spans],
            spans=[span.span for span in spans],
        )


def _eventually(read: Callable[[], Any], done: Callable[[Any], bool], what: str) -> Any:
    deadline = time.monotonic() + WAIT_S
    while True:
        value = read()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} after {WAIT_S:.0f} s: {value!r}")
        time.sleep(POLL_S)


def _query(route: str, **params: Any) -> str:
    return f"{route}?{urllib.parse.urlencode(params)}"


def test_a_writer_run_is_a_tensorboard_run_with_profscope_scalars(scalars_setup: ScalarsSetup) -> None:
    server = scalars_setup.server

    # 1. Only the event file is in the logdir: TensorBoard's own data provider knows the run...
    _eventually(lambda: server.get_json("/data/runs"), lambda runs: RUN in runs, f"{RUN} not in /data/runs")
    listing = server.get_json("/data/plugins_listing")
    assert isinstance(listing, dict)
    assert listing["profscope"]["enabled"] is True
    assert listing["profscope"]["tab_name"] == "PROFSCOPE"
    # ...while Profscope's scan of the same logdir finds no trace at all: the tab is active
    # from the provider's answer alone.
    scanned = _eventually(lambda: server.get_json(f"{ROUTES}/runs"), lambda a: a["scanned"], "no scan")
    assert scanned["runs"] == [] and scanned["pending_files"] == 0

    # 2. The traces arrive (as a live job's spans would, manifests included).
    shutil.copytree(scalars_setup.staging_run / "plugins", server.logdir / RUN / "plugins", dirs_exist_ok=True)
    runs = _eventually(
        lambda: server.get_json(f"{ROUTES}/runs")["runs"],
        lambda runs: [r["status"] for r in runs] == ["ready"],
        f"{RUN} not loaded by Profscope",
    )
    assert runs[0]["name"] == RUN
    assert [(w["name"], w["spans"]) for w in runs[0]["workers"]] == [(WORKER, scalars_setup.spans)]

    # 3. The Scalars dashboard's route: one point per span, at the span's last step, equal
    # to the overview's mean step time of that span.
    overviews = [
        _eventually(
            lambda span=span: server.get_json(_query(f"{ROUTES}/overview", run=RUN, worker=WORKER, span=span)),
            lambda answer: "mean_step_time" in answer,
            f"no overview of span {span}",
        )
        for span in scalars_setup.spans
    ]
    step_time = server.get_json(_query("/data/plugin/scalars/scalars", run=RUN, tag="profscope/step_time_ms"))
    assert isinstance(step_time, list) and len(step_time) == SPANS
    assert [step for _wall, step, _value in step_time] == scalars_setup.step_ends == [3, 7, 11]
    assert [value for _wall, _step, value in step_time] == [
        pytest.approx(o["mean_step_time"] / 1000.0, rel=1e-6) for o in overviews
    ]
    throughput = server.get_json(_query("/data/plugin/scalars/scalars", run=RUN, tag="profscope/samples_per_second"))
    assert [value for _wall, _step, value in throughput] == [
        pytest.approx(o["benchmark"]["samples_per_second"], rel=1e-6) for o in overviews
    ]
    tags = server.get_json("/data/plugin/scalars/tags")
    assert isinstance(tags, dict)
    assert {"profscope/step_time_ms", "profscope/samples_per_second", "profscope/peak_memory_bytes/cpu"} <= set(
        tags[RUN]
    )
