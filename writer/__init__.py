"""Profscope's writer: profiler spans written where the Profscope TensorBoard tab finds them.

Use it as torch's ``on_trace_ready`` (Paddle: ``paddle_trace_handler``, below)::

    import torch
    import profscope.writer

    writer = profscope.writer.trace_handler("runs", run="exp1", batch_size=32, tags={"lr": 0.01})
    with torch.profiler.profile(
        schedule=torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=2),
        on_trace_ready=writer,
    ) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()
    # then: tensorboard --logdir runs

or as Paddle's::

    writer = profscope.writer.paddle_trace_handler("runs", run="exp1", batch_size=32)
    with paddle.profiler.Profiler(scheduler=(2, 10), on_trace_ready=writer) as prof:
        ...

Each span (one ``on_trace_ready`` call) becomes two files in
``<logdir>/<run>/plugins/profscope/``:

* ``<worker>.<span>.<framework>.trace.json.gz``: the profiler's own Chrome-trace export
  (torch's ``export_chrome_trace``, Paddle's ``export(path, "json")``), gzip-compressed,
  content unchanged; ``<framework>`` is ``pytorch`` or ``paddle``;
* ``<worker>.<span>.manifest.json``, written after the trace: its presence marks the
  span complete.

Both are written atomically (a ``.tmp-`` file in the same folder, fsync, rename), so a
reader never sees part of a file. ``<span>`` is the export time in nanoseconds since
the epoch (``time.time_ns()``), so spans sort in time order. Default names: run
``$PROFSCOPE_RUN`` else ``<YYYYmmdd-HHMMSS>_<hostname>``; worker ``rank<N>`` in a
distributed job (torch.distributed initialised, or ``$RANK`` set) else
``<hostname>_<pid>``.

Manifest schema (format 1)::

    {
      "format": 1,
      "worker": str,                 # as in the file names
      "span": str,                   # as in the file names
      "framework": "pytorch",        # [a-z0-9_]+
      "framework_version": str | null,
      "profscope_version": str,
      "trace_file": str,             # the trace's file name, beside the manifest
      "wall_time": float,            # epoch seconds of the export
      "step_range": [int, int] | null,  # first and last ProfilerStep#N in the trace
      "batch_size": int | null,      # samples per step
      "samples": int | null,         # batch_size x number of steps in step_range
      "tags": {str: str | int | float},
      "source_file": str,            # only in imported spans: the input's base name
      "cpu_utilization": {...}       # host CPU over the span (see profscope.writer.manifest)
    }

``step_range`` is null whenever it cannot be known for sure (no schedule, or a window
cut short by the device). Readers ignore keys they do not know.

A background thread samples this process's and the whole system's CPU utilization (every
100 ms by default, ``cpu_sample_interval=None`` turns it off); each manifest gets the
utilization over its span (``profscope.writer.cpu_sampler``).

Each span is also recorded in a TensorBoard event file of the run folder
(``<logdir>/<run>/events.out.tfevents.*.profscope``): a record whose summary metadata
names the ``profscope`` plugin, and the span's performance scalars
(``profscope/step_time_ms``, ``profscope/breakdown/<category>``, ...) for TensorBoard's
Scalars dashboard, computed in child processes and written at the next span;
``writer.flush()`` / ``writer.close()`` wait for them, and the writer closes itself at exit. See :mod:`profscope.writer.events`.

Torch is never imported by this package at import time. ``profscope import`` (see
:mod:`profscope.writer.importer`) brings existing trace files into the same layout.

How its modules work: ``span_writer.py`` (what every handler shares: atomic span files, manifests with batch size,
tags and the host CPU summary, the event file) with ``torch_handler.py`` (``trace_handler`` for ``torch.profiler``)
and ``paddle_handler.py`` (``paddle_trace_handler`` for ``paddle.profiler``); ``cpu_sampler.py`` (process CPU time and
``/proc/stat``, sampled over each span on a thread that runs no Python code, so ``with_stack`` profiles never show
it); ``recorder.py`` (span analyses in child processes, started and collected from the handler: no writer thread in
the training process); ``import`` of every supported format (detected by content); the demo; a TensorBoard event file
per writer with a span record (plugin metadata) and the span's scalars.
"""

from .manifest import MANIFEST_FORMAT, Manifest, parse_manifest
from .naming import RUN_ENV_VAR, default_run_name, default_worker_name
from .span_files import SpanExistsError, WrittenSpan
from .paddle_handler import PaddleWriter, paddle_trace_handler
from .span_writer import SpanWriter
from .torch_handler import ProfscopeWriter, trace_handler

__all__ = [
    "MANIFEST_FORMAT",
    "Manifest",
    "PaddleWriter",
    "ProfscopeWriter",
    "RUN_ENV_VAR",
    "SpanExistsError",
    "SpanWriter",
    "WrittenSpan",
    "default_run_name",
    "default_worker_name",
    "paddle_trace_handler",
    "parse_manifest",
    "trace_handler",
]
