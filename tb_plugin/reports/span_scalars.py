"""A span's headline performance numbers, as scalars for TensorBoard's Scalars dashboard.

The writer (in the background, after each span) and ``profscope import`` record these at
the span's training step, so that step time, its breakdown, GPU utilization, peak memory
and throughput can be followed across a whole training job. The numbers are the
overview's and the memory view's own (the same pure functions the routes call), so a
point in the Scalars dashboard and the PROFSCOPE tab never disagree.

Tags (all under ``profscope/``; the writer may insert a worker segment, see
``profscope.writer.events``):

* ``profscope/step_time_ms``: mean step time, in milliseconds;
* ``profscope/breakdown/<category>``: each category's share of the mean step (0..1),
  for the overview's categories (device categories only when the span has device work);
* ``profscope/gpu_utilization``: mean over the GPUs of their utilization (0..1), only
  when the span has GPUs;
* ``profscope/peak_memory_bytes/<device>``: peak allocated bytes per device (``cpu``,
  ``gpu0``, ...), when the span recorded memory events;
* ``profscope/samples_per_second``: when the batch size is known.

Run as ``python -m profscope.tb_plugin.reports.span_scalars TRACE [--batch-size N]`` it prints the
scalars of one trace file as JSON: the writer uses this to analyse a span in a short-lived
process, away from the training process's memory and interpreter lock.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Optional, Sequence

from ..ingest.load import TraceLoadError, load_trace
from ..model.trace_model import TraceModel
from ..model.units import US_PER_MS
from ..views import answers

TAG_PREFIX = "profscope/"
STEP_TIME_MS = TAG_PREFIX + "step_time_ms"
BREAKDOWN_PREFIX = TAG_PREFIX + "breakdown/"
GPU_UTILIZATION = TAG_PREFIX + "gpu_utilization"
PEAK_MEMORY_PREFIX = TAG_PREFIX + "peak_memory_bytes/"
SAMPLES_PER_SECOND = TAG_PREFIX + "samples_per_second"

# How much lower the analysing process runs than the training job that started it.
_BACKGROUND_NICENESS = 10

_DESCRIPTIONS = {
    STEP_TIME_MS: "Mean step time of the profiled span, in ms (Profscope's overview).",
    GPU_UTILIZATION: "Mean over the span's GPUs of the share of time a kernel ran (0..1).",
    SAMPLES_PER_SECOND: "Batch size / mean step time of the profiled span.",
}


def tag_description(tag: str) -> str:
    """A one-line description of a tag of ``span_scalars``, shown by TensorBoard with its chart."""
    if tag.startswith(BREAKDOWN_PREFIX):
        return f"Share of the mean step spent in {tag[len(BREAKDOWN_PREFIX):]} (0..1), each instant counted once."
    if tag.startswith(PEAK_MEMORY_PREFIX):
        return f"Peak allocated memory on {tag[len(PEAK_MEMORY_PREFIX):]} during the span, in bytes."
    return _DESCRIPTIONS.get(tag, "")


def span_scalars(model: TraceModel, batch_size: Optional[int] = None) -> dict[str, float]:
    """Tag → value for one span (only finite values; a number that cannot be known is left out)."""
    scalars: dict[str, float] = {}
    result = answers.overview(model, batch_size=batch_size)
    mean_step_us = float(result["mean_step_time"])
    if result["steps"] and mean_step_us > 0:
        scalars[STEP_TIME_MS] = mean_step_us / US_PER_MS
        for category in result["categories"]:
            scalars[BREAKDOWN_PREFIX + category] = float(result["breakdown"][category]) / mean_step_us
    utilizations = [float(device["utilization"]) for device in result["devices"]]
    if utilizations:
        scalars[GPU_UTILIZATION] = sum(utilizations) / len(utilizations)
    samples_per_second = result["benchmark"].get("samples_per_second")
    if samples_per_second is not None:
        scalars[SAMPLES_PER_SECOND] = float(samples_per_second)
    # Only the peaks are used: the smallest event table keeps the rest of the view cheap.
    peaks = answers.memory(model, limit=1)["peak"]
    for device, peak in peaks.items():
        scalars[PEAK_MEMORY_PREFIX + device] = float(peak["allocated"])
    return {tag: value for tag, value in scalars.items() if math.isfinite(value)}


def trace_file_scalars(path: str, batch_size: Optional[int] = None) -> dict[str, float]:
    """``span_scalars`` of a trace file; raises ``TraceLoadError`` when it cannot be loaded."""
    return span_scalars(load_trace(path), batch_size)


def _pack_and_scalars(path: str, batch_size: Optional[int]) -> dict[str, float]:
    """Write the trace's pack (one parse), then its scalars from the pack's model; a trace that cannot be packed
    still gets its scalars from a parse."""
    from ..model.array_file import read_model
    from ..store.ingest import pack_local_file

    result, model_path = pack_local_file(path, batch_size)
    if result.status == "failed" or model_path is None:
        print(f"profscope: no pack for {path}: {result.error}", file=sys.stderr)
        return trace_file_scalars(path, batch_size)
    return span_scalars(read_model(model_path, owned=False), batch_size)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m profscope.tb_plugin.reports.span_scalars",
        description="Print the performance scalars of one trace file as JSON (tag -> value).",
    )
    parser.add_argument("trace", help="a trace file (.json or .json.gz)")
    parser.add_argument("--batch-size", type=int, default=None, help="samples per step, for samples_per_second")
    parser.add_argument("--background", action="store_true", help="run at a lower CPU priority")
    parser.add_argument("--pack", action="store_true",
                        help="also write the trace's pack beside it (.profscope/<file>/), and read the scalars from it")
    args = parser.parse_args(argv)
    if args.background and hasattr(os, "nice"):
        try:
            os.nice(_BACKGROUND_NICENESS)
        except OSError:
            pass
    try:
        if args.pack:
            scalars = _pack_and_scalars(args.trace, args.batch_size)
        else:
            scalars = trace_file_scalars(args.trace, args.batch_size)
    except (TraceLoadError, OSError) as error:
        print(f"profscope: cannot analyse {args.trace}: {error}", file=sys.stderr)
        return 1
    sys.stdout.write(json.dumps(scalars, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
