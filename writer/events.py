"""TensorBoard event records of the writer's spans: the run shows in TensorBoard as Profscope's.

Per span, two summaries go into an event file in the run folder
(``<logdir>/<run>/events.out.tfevents.<time>.<host>.<pid>.<n>.profscope``), in
TensorBoard's own protobuf format and record framing (TensorBoard's ``RecordWriter``;
TensorFlow is not needed), written synchronously by the caller: no writer thread of
TensorBoard's ``EventFileWriter`` lives in the training process, where ``torch.profiler``'s
Python tracer would record it as the job's work:

* the span record, tag ``profscope/spans/<worker>``: a string tensor whose summary
  metadata names the ``profscope`` plugin, with content (and value) the JSON
  ``{"version": 1, "worker", "span", "trace_file"}`` (``trace_file`` relative to the
  run folder). Its data class is *tensor*, so TensorBoard's data provider lists the run
  under the plugin (``list_plugins`` / ``list_tensors``) without reading any trace;
* the performance scalars of ``profscope.tb_plugin.reports.span_scalars`` (scalar plugin
  metadata), once the span has been analysed.

Both are recorded at the span's training step: the manifest's ``step_range`` end, else
one more than the previous span's step (a running counter from 0).

TensorBoard merges the event files of a folder into one run, and keeps one point per
step in each series (a step that goes back is read as a restarted job and replaces the
later points). So each worker has its own span-record tag, and only the run's primary
worker writes the plain ``profscope/...`` scalar tags; the others write
``profscope/<worker>/...``. The primary worker is a process that is not rank 1 or higher
(``rank0``, or a job of one process); when an import brings several such workers into a
run, the first by name.

TensorBoard is imported here, so this module is imported only when a span is written.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import socket
import time
from pathlib import Path
from typing import BinaryIO, Iterable, Mapping, Optional

from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2
from tensorboard.plugins.scalar import metadata as scalar_metadata
from tensorboard.summary.writer.record_writer import RecordWriter

from profscope.tb_plugin import layout
from profscope.tb_plugin.reports.span_scalars import TAG_PREFIX, tag_description

from .manifest import Manifest

PLUGIN_CONTENT_VERSION = 1
EVENT_FILE_SUFFIX = ".profscope"
SPAN_RECORD_PREFIX = TAG_PREFIX + "spans/"
_SECONDARY_RANK = re.compile(r"^rank[1-9][0-9]*$")
_FILE_VERSION = "brain.Event:2"
# Event files of this process, numbered like TensorBoard's own writer numbers its files.
_file_numbers = itertools.count()


def span_record_tag(worker: str) -> str:
    return SPAN_RECORD_PREFIX + worker


def is_primary_worker(worker: str, run_workers: Iterable[str] = ()) -> bool:
    """Whether ``worker`` writes the run's plain scalar tags, among the workers known in the run."""
    if _SECONDARY_RANK.match(worker):
        return False
    candidates = {w for w in run_workers if not _SECONDARY_RANK.match(w)} | {worker}
    return worker == ("rank0" if "rank0" in candidates else min(candidates))


def scalar_tag(tag: str, worker: str, primary: bool) -> str:
    """``profscope/x`` as written by ``worker``: unchanged for the primary worker, else ``profscope/<worker>/x``."""
    if primary or not tag.startswith(TAG_PREFIX):
        return tag
    return f"{TAG_PREFIX}{worker}/{tag[len(TAG_PREFIX):]}"


def next_step(manifest: Manifest, previous_step: Optional[int]) -> int:
    """The span's training step: the last profiled step, else one more than the previous span's."""
    if manifest.step_range is not None:
        return manifest.step_range[1]
    return 0 if previous_step is None else previous_step + 1


def span_record_content(manifest: Manifest) -> bytes:
    """The plugin's versioned message for one span (JSON bytes)."""
    trace_file = "/".join((*layout.ASSET_DIR, manifest.trace_file))
    message = {
        "version": PLUGIN_CONTENT_VERSION,
        "worker": manifest.worker,
        "span": manifest.span,
        "trace_file": trace_file,
    }
    return json.dumps(message, sort_keys=True).encode("utf-8")


def span_record_event(manifest: Manifest, step: int) -> event_pb2.Event:
    content = span_record_content(manifest)
    metadata = summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name=layout.PLUGIN_NAME, content=content),
        data_class=summary_pb2.DATA_CLASS_TENSOR,
    )
    value = tensor_pb2.TensorProto(
        dtype=types_pb2.DT_STRING, tensor_shape=tensor_shape_pb2.TensorShapeProto(), string_val=[content]
    )
    summary = summary_pb2.Summary(
        value=[summary_pb2.Summary.Value(tag=span_record_tag(manifest.worker), metadata=metadata, tensor=value)]
    )
    return event_pb2.Event(wall_time=manifest.wall_time, step=step, summary=summary)


def scalars_event(
    scalars: Mapping[str, float], worker: str, step: int, wall_time: float, primary: bool = True
) -> event_pb2.Event:
    """One event holding every scalar of a span (rank-0 float tensors, as ``tf.summary.scalar`` writes)."""
    values = []
    for tag in sorted(scalars):
        metadata = scalar_metadata.create_summary_metadata(display_name="", description=tag_description(tag))
        metadata.data_class = summary_pb2.DATA_CLASS_SCALAR
        value = tensor_pb2.TensorProto(
            dtype=types_pb2.DT_FLOAT, tensor_shape=tensor_shape_pb2.TensorShapeProto(), float_val=[scalars[tag]]
        )
        values.append(summary_pb2.Summary.Value(tag=scalar_tag(tag, worker, primary), metadata=metadata, tensor=value))
    return event_pb2.Event(wall_time=wall_time, step=step, summary=summary_pb2.Summary(value=values))


class _EventFile:
    """One event file, written and flushed by the caller (TensorBoard's file name pattern and first event)."""

    def __init__(self, folder: Path, suffix: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        name = "events.out.tfevents.%010d.%s.%s.%s%s" % (
            time.time(), socket.gethostname(), os.getpid(), next(_file_numbers), suffix)
        self.path = folder / name
        self._file: BinaryIO = open(self.path, "ab")
        self._records = RecordWriter(self._file)
        self.add_event(event_pb2.Event(
            wall_time=time.time(), file_version=_FILE_VERSION,
            source_metadata=event_pb2.SourceMetadata(writer="profscope.writer"),
        ))
        self.flush()

    def add_event(self, event: event_pb2.Event) -> None:
        self._records.write(event.SerializeToString())

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()


class RunEventFile:
    """One event file in a run folder, created when the first record is added."""

    def __init__(self, run_folder: Path) -> None:
        self.run_folder = Path(run_folder)
        self._writer: Optional[_EventFile] = None

    def _file(self) -> _EventFile:
        if self._writer is None:
            self._writer = _EventFile(self.run_folder, EVENT_FILE_SUFFIX)
        return self._writer

    def add_span(self, manifest: Manifest, step: int) -> None:
        self._file().add_event(span_record_event(manifest, step))

    def add_scalars(
        self, scalars: Mapping[str, float], worker: str, step: int, wall_time: float, primary: bool = True
    ) -> None:
        if scalars:
            self._file().add_event(scalars_event(scalars, worker, step, wall_time, primary))

    def flush(self) -> None:
        if self._writer is not None:
            self._writer.flush()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
