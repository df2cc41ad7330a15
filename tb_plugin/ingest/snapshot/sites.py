"""What each frame is (the user's code, a library's Python, C++) and the allocation site of each stack.

A stack is innermost frame first. Its allocation site is the frame people act on: the innermost frame of the user's
own code; else the innermost Python frame; else the innermost C++ frame that is not the allocator's or the
interpreter's own plumbing; else its innermost frame. Python frames are told by their ``.py`` file; a library's are
those under ``site-packages``/``dist-packages``, the standard library (``lib/pythonX.Y``), a ``torch`` folder or a
``<frozen ...>``-style name. ``torch.cuda._memory_viz._profile_to_snapshot`` writes ``filename: "none"`` and the
profiler's name (``path/to/file.py(12): forward``, ``nn.Module: Linear_0``, ``<built-in method ...>``): the path in
the name decides there.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

import numpy as np

from ...model.snapshot import CPP_FRAME, PYTHON_FRAME, USER_FRAME

_LIBRARY_PATH = re.compile(r"(?:^|/)(?:site-packages|dist-packages|torch|lib/python\d+(?:\.\d+)?)/")
_PROFILER_PY_NAME = re.compile(r"^(?P<file>.+\.py)\(\d+\): ")
# C++ frames that are plumbing rather than what allocated (as memory_viz filters them, and the allocator's own).
_CPP_PLUMBING = (
    "unwind::", "CapturedTraceback", "gather_with_cpp", "_start", "__libc_start_main", "PyEval_", "PyObject_",
    "PyFunction_", "_PyEval", "_PyObject", "_PyFunction", "c10::cuda::CUDACachingAllocator", "c10::Allocator",
    "c10::StorageImpl", "c10::impl::", "c10::Dispatcher", "c10::BoxedKernel", "c10::KernelFunction",
    "at::detail::empty", "at::empty", "at::native::empty", "at::_ops::", "at::TensorBase::", "at::Tensor::",
    "torch::autograd::VariableType::", "std::", "void c10::", "c10::function_ref",
)
_CPP_PLUMBING_FILES = ("core/boxing", "/Register", "/Redispatch", "pythonrun.c", "Modules/main.c", "Objects/call.c",
                       "Objects/methodobject.c", "pycore_ceval.h", "ceval.c", "cpython/abstract.h",
                       "CUDACachingAllocator")


def frame_kind(filename: Optional[str], name: Optional[str]) -> int:
    """``USER_FRAME``, ``PYTHON_FRAME`` or ``CPP_FRAME`` (see the module docstring)."""
    path = filename or ""
    if path == "none" and name:  # _profile_to_snapshot: the profiler's Python event name
        match = _PROFILER_PY_NAME.match(name)
        if match:
            path = match["file"]
        else:
            return PYTHON_FRAME  # nn.Module, <built-in method ...>
    if not path.endswith(".py"):
        return CPP_FRAME
    if path.startswith("<") or _LIBRARY_PATH.search(path.replace("\\", "/")):
        return PYTHON_FRAME
    return USER_FRAME


def is_plumbing(filename: Optional[str], name: Optional[str]) -> bool:
    """A C++ frame of the allocator, the dispatcher or the interpreter, not what allocated."""
    text, path = name or "", filename or ""
    return any(part in text for part in _CPP_PLUMBING) or any(part in path for part in _CPP_PLUMBING_FILES)


def _first_flagged(offsets: np.ndarray, frames: np.ndarray, flagged: np.ndarray) -> np.ndarray:
    """For each stack, the position in ``frames`` of its first frame with ``flagged[frame]``, else -1."""
    count = len(offsets) - 1
    first = np.full(count, -1, dtype=np.int64)
    if not len(frames) or not count:
        return first
    big = np.int64(len(frames))
    positions = np.where(flagged[frames], np.arange(len(frames), dtype=np.int64), big)
    nonempty = offsets[1:] > offsets[:-1]
    if nonempty.any():
        found = np.minimum.reduceat(positions, offsets[:-1][nonempty])
        first[nonempty] = np.where(found < big, found, -1)
    return first


def stack_sites(kinds: np.ndarray, plumbing: np.ndarray, offsets: np.ndarray, frames: np.ndarray) -> np.ndarray:
    """The site frame of every stack (-1 for an empty one), by the preference of the module docstring."""
    count = len(offsets) - 1
    site = np.full(count, -1, dtype=np.int32)
    if not count:
        return site
    choices = (kinds == USER_FRAME, kinds != CPP_FRAME, ~plumbing, np.ones(len(kinds), dtype=bool))
    for flagged in choices:
        position = _first_flagged(offsets, frames, flagged)
        take = (site < 0) & (position >= 0)
        site[take] = frames[position[take]]
    return site


def classify_frames(files: Sequence[Optional[str]], names: Sequence[Optional[str]]) -> tuple[np.ndarray, np.ndarray]:
    """Each frame's kind and whether it is plumbing (one Python call per distinct frame, not per entry)."""
    kinds = np.fromiter((frame_kind(f, n) for f, n in zip(files, names)), dtype=np.int8, count=len(files))
    plumbing = np.fromiter((is_plumbing(f, n) for f, n in zip(files, names)), dtype=bool, count=len(files))
    return kinds, plumbing
