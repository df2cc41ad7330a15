"""Profscope's device time figures agree with Holistic Trace Analysis (HTA 0.5.0) on the real GPU traces.

HTA runs here as its users run it (``TraceAnalysis`` over a folder of rank traces, keeping the last profiler
step), on each real GPU trace of tests/data; its per-rank dataframes are then cut to Profscope's steps (each GPU
event clipped to the device-extended step windows of ``find_steps``) and HTA's own analyses run on them:
``get_temporal_breakdown``, ``get_gpu_kernel_breakdown`` (with memory kernels) and ``get_comm_comp_overlap``.
Over the same steps, within 1%:

* kernel time — the overview's Kernel category (time a non-collective kernel runs) is HTA's union of computation
  kernels (on MTIA, HTA's computation also holds the device's event waits, which Profscope counts as device
  synchronisation: they are added for the comparison);
* memory time — the overview's Memcpy + Memset (copies while no kernel computes) are HTA's memory time outside
  computation;
* communication — ``accounting``'s communication is HTA's union of communication kernels plus the host-side
  collectives that launched no kernel (Gloo), which HTA does not count; on a rank with
  communication kernels or an NCCL backend (an NCCL world of one launches none), exactly HTA's (the host ranges around NCCL launches and waits are not communication);
* device busy time — HTA's kernel time less its idle time; Profscope's device idle time is the step less it
  (HTA measures idle from the first to the last GPU event instead of over the whole step);
* overlap — communication while computation runs: HTA's ``get_comm_comp_overlap`` counts computation kernels only,
  Profscope copies and memsets too, so Profscope's overlap is HTA's plus the communication under copies (both
  read from HTA's kernel breakdown).

HTA runs with its sub-µs timestamps kept (``HTA_DISABLE_NS_ROUNDING``); the 1% tolerance covers the alignment of
the two time bases and HTA dropping GPU events whose launch is not in the trace.
"""

from __future__ import annotations

import logging
import re
import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.model.categories import SliceKinds
from profscope.tb_plugin.views.quantities import accounting
from profscope.tb_plugin.views.overview import overview

from conftest import real_trace

# Every real GPU trace of tests/data (hta/*: other teams' jobs; kineto_resnet50: a V100 run).
GPU_TRACES = {
    "nccl_parser_config": ["hta/nccl_parser_config/nccl_data.json.gz"],
    "sampled_ws128": ["hta/sampled_ws128_trace_filter/sampled_rank-0.json.gz",
                      "hta/sampled_ws128_trace_filter/sampled_rank-1.json.gz"],
    "ns_resolution": ["hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"],
    "amd_mi250": ["hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz"],
    "mtia": ["hta/mtia_inference_trace/mtia_inference_rank_0.json.gz"],
    "mtia_training": ["hta/mtia_trace_single_rank/mtia_rank_0.json.gz"],
    "nccl_df_index_resolver": ["hta/df_index_resolver/df_index_resolver.json.gz"],
    "resnet50_span1": ["kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"],
    "resnet50_span2": ["kineto_resnet50/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz"],
}
TOLERANCE = 0.01
NS_PER_US = 1000.0


def _hta(folder: Path) -> Any:
    from hta.trace_analysis import TraceAnalysis

    logging.getLogger("hta").setLevel(logging.ERROR)
    return TraceAnalysis(trace_dir=str(folder), include_last_profiler_step=True)


def _rank_of(model: Any, index: int) -> int:
    info = model.metadata.get("distributedInfo")
    return int(info["rank"]) if isinstance(info, dict) and isinstance(info.get("rank"), int) else index


def _clip_to_steps(df: pd.DataFrame, windows: list[tuple[int, int]]) -> pd.DataFrame:
    """The rank's dataframe with its GPU events cut to the step windows (HTA's µs), host events as they are."""
    gpu = df["stream"].ne(-1)
    parts = [df[~gpu]]
    events = df[gpu].copy()
    events["end"] = events["ts"] + events["dur"]  # HTA aligns "ts" across ranks but not "end"
    for lo, hi in windows:
        inside = events[(events["end"] > lo) & (events["ts"] < hi)].copy()
        inside["ts"] = inside["ts"].clip(lower=lo)
        inside["end"] = inside["end"].clip(upper=hi)
        inside["dur"] = inside["end"] - inside["ts"]
        parts.append(inside)
    out = pd.concat(parts, ignore_index=True)
    # In ns from here on: HTA's kernel breakdown truncates each segment to a whole unit of time.
    for column in ("ts", "dur", "end"):
        out[column] = out[column] * NS_PER_US
    return out


def _hta_windows(df: pd.DataFrame, symbols: list[str], model: Any) -> list[tuple[int, int]]:
    """Profscope's step windows in HTA's time base (aligned on the first ProfilerStep, or the first event)."""
    steps = accounting.find_steps(model)
    step_rows = df[df["name"].map(lambda i: symbols[i].startswith("ProfilerStep"))].sort_values("ts")
    if len(step_rows) and len(model.steps):
        offset = float(step_rows["ts"].iloc[0]) - model.steps.start[0] / 1000.0
    else:
        offset = float(df["ts"].min()) - model.start / 1000.0
    return [(int(round(lo / 1000.0 + offset)), int(round(hi / 1000.0 + offset))) for lo, hi in zip(steps.start, steps.end)]


def _classes(kernel_types: pd.DataFrame) -> dict[str, float]:
    """HTA's kernel breakdown classes ("COMPUTATION overlapping COMMUNICATION", ...) in µs."""
    return {str(k): float(v) / NS_PER_US for k, v in zip(kernel_types["kernel_type"], kernel_types["sum"])}


def _sum(classes: dict[str, float], *, having: tuple[str, ...] = (), lacking: tuple[str, ...] = ()) -> float:
    return sum(v for k, v in classes.items() if all(h in k for h in having) and not any(x in k for x in lacking))


def _close(ours: float, theirs: float, what: str, scale: float) -> None:
    """Equal within 1% of ``scale`` (the quantity's own size, or the step time for small quantities)."""
    assert abs(ours - theirs) <= TOLERANCE * max(scale, 1.0), f"{what}: Profscope {ours:.1f} µs, HTA {theirs:.1f} µs"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hta")


# Open differences, as strict xfails (a fix shows up as an unexpected pass).
KNOWN: dict[str, str] = {}
# HTA tells kernel kinds by CUDA names: a device-side wait is synchronisation only when named "...Sync". Other
# devices' waits (MTIA's event_wait, event_record) are computation kernels to HTA; Profscope counts them as device
# synchronisation (waiting is not computing), so HTA's computation is compared with kernels plus those waits.
CUDA_SYNC_NAME = re.compile(r".*Sync")


def _waits_hta_computes(model: Any, windows: tuple[np.ndarray, np.ndarray]) -> float:
    """µs that HTA's computation adds to Profscope's kernels within the steps: device waits HTA reads as kernels."""
    kinds = SliceKinds(model)
    named_sync = model.string_ids_where(lambda text: bool(CUDA_SYNC_NAME.match(text)))[model.slices.name]
    waits = kinds.device_sync & ~named_sync
    if not waits.any():
        return 0.0
    s = model.slices
    covered = lambda mask: float(accounting.intervals.covered_length_in(  # noqa: E731
        windows, accounting.intervals.merge(s.start[mask], s.end[mask])).sum())
    return (covered(kinds.kernel | waits) - covered(kinds.kernel)) / NS_PER_US


@pytest.mark.parametrize("name", [pytest.param(n, marks=[pytest.mark.xfail(strict=True, reason=KNOWN[n])] if n in KNOWN
                                               else []) for n in sorted(GPU_TRACES)])
def test_device_time_agrees_with_hta(name: str, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # HTA rounds sub-µs timestamps inward by default (up to 1 µs per event: 2% of the kernel time of a trace of
    # short kernels); its own switch keeps them as the trace has them, as Profscope does.
    monkeypatch.setenv("HTA_DISABLE_NS_ROUNDING", "1")
    folder = workdir / name
    folder.mkdir()
    models = {}
    for index, relative in enumerate(GPU_TRACES[name]):
        source = real_trace(relative)
        shutil.copyfile(source, folder / source.name)
        model = load_trace(str(source))
        models[_rank_of(model, index)] = model
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas deprecations inside HTA
        analysis = _hta(folder)
        symbols = analysis.t.symbol_table.get_sym_table()
        for rank, model in models.items():
            df = analysis.t.traces[rank]
            analysis.t.traces[rank] = _clip_to_steps(df, _hta_windows(df, symbols, model))
        temporal = analysis.get_temporal_breakdown(visualize=False).set_index("rank") / NS_PER_US
        kernel_types, _ = analysis.get_gpu_kernel_breakdown(visualize=False, include_memory_kernels=True)
        per_rank_classes = {}
        for rank in models:  # the kernel breakdown sums its classes over ranks: one rank at a time
            only = {r: df for r, df in analysis.t.traces.items() if r == rank}
            saved, analysis.t.traces = analysis.t.traces, only
            per_rank_classes[rank] = _classes(analysis.get_gpu_kernel_breakdown(
                visualize=False, include_memory_kernels=True)[0])
            analysis.t.traces = saved
        overlap_pct = analysis.get_comm_comp_overlap(visualize=False).set_index("rank")["comp_comm_overlap_pctg"]

    for rank, model in models.items():
        answer = overview(model)
        n = len(answer["steps"])
        step_time = answer["mean_step_time"] * n
        classes = per_rank_classes[rank]
        times = accounting.step_times(model)

        # Kernel time: the Kernel category is the union of computation kernels.
        windows = (times.steps.start, times.steps.end)
        kernel = answer["breakdown"]["kernel"] * n
        waits = _waits_hta_computes(model, windows)
        assert waits == 0 or name.startswith("mtia")  # device waits HTA computes: MTIA's only
        _close(kernel + waits, _sum(classes, having=("COMPUTATION",)), "kernel time", kernel)
        assert temporal.loc[rank, "compute_time(us)"] == pytest.approx(_sum(classes, having=("COMPUTATION",)), rel=1e-6)

        # Memory time outside computation: the Memcpy and Memset categories.
        memory = (answer["breakdown"]["memcpy"] + answer["breakdown"]["memset"]) * n
        _close(memory, _sum(classes, having=("MEMORY",), lacking=("COMPUTATION",)), "memory time", step_time)

        # Communication: HTA's communication kernels, plus host collectives that launched none.
        device_only = float(accounting.intervals.covered_length_in(
            windows, accounting.collective_kernel_intervals(model)).sum()) / NS_PER_US
        communication = float(times.communication.sum()) / NS_PER_US
        host_only = communication - device_only  # collectives on the host, which HTA does not count
        hta_communication = _sum(classes, having=("COMMUNICATION",))
        _close(device_only, hta_communication, "communication kernel time", max(communication, 0.1 * step_time))
        assert host_only >= -1e-6
        backend = (model.metadata.get("distributedInfo") or {}).get("backend")
        if SliceKinds(model).collective_kernel.any() or backend == "nccl":
            # Collectives that run on the device (kernels, or an NCCL rank in a world of one, which launches none):
            # their host ranges (launches, waits) are not communication.
            assert host_only == pytest.approx(0, abs=1e-6)

        # Exposed communication (the overview's Communication category): HTA's communication outside
        # computation and copies, plus at most the host-side part.
        exposed = answer["breakdown"]["communication"] * n
        hta_exposed = _sum(classes, having=("COMMUNICATION",), lacking=("COMPUTATION", "MEMORY"))
        assert hta_exposed - TOLERANCE * step_time <= exposed <= hta_exposed + host_only + TOLERANCE * step_time

        # Device busy time: HTA's kernel time (first to last GPU event) less its idle time.
        busy = answer["device_busy"] * n
        hta_busy = float(temporal.loc[rank, "kernel_time(us)"] - temporal.loc[rank, "idle_time(us)"])
        _close(busy, hta_busy, "device busy time", busy)
        _close(answer["device_idle"] * n, step_time - hta_busy, "device idle time over the steps", step_time)

        # Overlap: computation kernels under communication (HTA's ratio), plus communication under copies,
        # plus at most the host-side part.
        overlap = float(times.overlap.sum()) / NS_PER_US
        under_compute = _sum(classes, having=("COMMUNICATION", "COMPUTATION"))
        under_copies = _sum(classes, having=("COMMUNICATION", "MEMORY"), lacking=("COMPUTATION",))
        slack = TOLERANCE * max(communication, 1.0)
        assert under_compute + under_copies - slack <= overlap <= under_compute + under_copies + host_only + slack
        if hta_communication > 0:
            assert under_compute / hta_communication * 100 == pytest.approx(float(overlap_pct.loc[rank]), abs=0.01)
            if host_only == 0:
                ratio = answer["communication"]["overlap_ratio"]
                assert ratio == pytest.approx((under_compute + under_copies) / hta_communication, abs=TOLERANCE)
        else:
            assert np.isnan(overlap_pct.loc[rank])
