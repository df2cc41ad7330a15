"""Which framework wrote a Chrome-trace file, from its name and its first few kilobytes.

* ``"paddle"``: PaddlePaddle's ``export_chrome_tracing`` — event names end with their
  duration (``"conv2d[1.2 ms]"``), steps are ``ProfileStep#N``, thread ids are strings such
  as ``"123(Python)"``. Checked first: Paddle also writes a ``schemaVersion`` key.
* ``"pytorch"``: Kineto (torch.profiler) — its top-level keys (``schemaVersion``,
  ``deviceProperties``, ``distributedInfo``, ``baseTimeNanoseconds``), torch's categories
  or ``ProfilerStep#N``.
* ``"mindspore"``: MindSpore's ``trace_view.json`` (``ASCEND_PROFILER_OUTPUT``) — its process
  names (``"CPU OP"``, ``"Scope Layer"``...), host operators typed ``"HostCpuOps"``, times
  written as strings (``"ts": "1795303374563996.947"``). Two of these are needed.
* ``"generic"``: any other Chrome trace (hand-made files...).

Only a prefix is looked at, so the answer is cheap and the same for a file of any size; the
markers used appear in the first events of every trace of these frameworks.
"""

from __future__ import annotations

import re

HEAD_BYTES = 16 * 1024

PADDLE, PYTORCH, MINDSPORE, GENERIC = "paddle", "pytorch", "mindspore", "generic"

_PADDLE_FILE = re.compile(r"\.paddle_trace\.json(\.gz)?$")
_PADDLE_MARKERS = (
    re.compile(rb'"name"\s*:\s*"[^"]*\[\d+(?:\.\d+)? (?:ns|us|ms|s)\]"'),  # "conv2d[1.2 ms]"
    re.compile(rb'"name"\s*:\s*"ProfileStep#\d+'),
    re.compile(rb'"tid"\s*:\s*"\d+\((?:Python|C\+\+|GPU)\)"'),  # "123(Python)"
)
_MINDSPORE_MARKERS = (
    # process_name metadata of MindSpore's timeline (CPU profiler; Ascend adds device processes).
    re.compile(rb'"args"\s*:\s*\{\s*"name"\s*:\s*"(?:CPU OP|Scope Layer|Ascend Hardware|CANN|Overlap Analysis)"'),
    re.compile(rb'"type"\s*:\s*"HostCpuOps"'),
    re.compile(rb'"ts"\s*:\s*"-?\d+(?:\.\d+)?"'),  # times as strings
)
_KINETO_KEYS = re.compile(rb'"(?:schemaVersion|deviceProperties|distributedInfo|baseTimeNanoseconds|traceName)"\s*:')
_TORCH_CATEGORIES = re.compile(
    rb'"cat"\s*:\s*"(?:cpu_op|user_annotation|python_function|cuda_runtime|cuda_driver|gpu_memcpy|gpu_memset|'
    rb'gpu_user_annotation|cpu_instant_event|ac2g|fwdbwd)"'
)
_TORCH_STEP = re.compile(rb'"name"\s*:\s*"ProfilerStep#\d+"')


def detect_framework(head: bytes, filename: str = "") -> str:
    """``"paddle"``, ``"pytorch"``, ``"mindspore"`` or ``"generic"`` for a trace starting with ``head`` (decompressed bytes)."""
    if _PADDLE_FILE.search(filename):
        return PADDLE
    prefix = bytes(head[:HEAD_BYTES])
    # Two independent Paddle markers: one decorated name alone could be a user's range name.
    if sum(1 for marker in _PADDLE_MARKERS if marker.search(prefix)) >= 2:
        return PADDLE
    if filename.endswith((".pt.trace.json", ".pt.trace.json.gz")):
        return PYTORCH
    if _KINETO_KEYS.search(prefix) is None and sum(1 for marker in _MINDSPORE_MARKERS if marker.search(prefix)) >= 2:
        return MINDSPORE
    if _KINETO_KEYS.search(prefix) or _TORCH_CATEGORIES.search(prefix) or _TORCH_STEP.search(prefix):
        return PYTORCH
    return GENERIC
