"""What a route gets for one span, and why it may get nothing.

``RunManager.span`` resolves a (run, worker, span) of the request against the discovered runs in one
call and returns a ``Span``: its names, its discovered file (``source``, never a path from the request),
its writer manifest and its parsed model. Otherwise it raises one of the exceptions below, which
``server/http.py`` maps to 404 (unknown), 202 (still loading, with its progress) or 422 (failed).

A span opened from a pack (``packs.py``) is ready before its model is read: ``Span.model`` reads it on first use
(``RunManager.span`` does so unless asked not to, for the run-level routes that read the ranks' summaries only),
and raises ``SpanLoading`` when the pack turns out not to read (its trace is then parsed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..model.trace_model import TraceModel
from ..views.runs.table import manifest_batch_size
from .discovery import SpanSource
from .packs import PackRef


class UnknownSpan(LookupError):
    """No such run, worker or span in the logdir."""


class SpanLoading(Exception):
    def __init__(self, progress: float) -> None:
        super().__init__("loading")
        self.progress = progress


class SpanFailed(Exception):
    """The span's trace could not be loaded; the message is for the user."""


@dataclass(frozen=True)
class Span:
    """One parsed span of a worker of a run."""

    run: str
    worker: str
    name: str  # the span's own name, also when the request left it out (the worker's only span)
    source: SpanSource
    # The model, read on first use for a span opened from a pack (``RunManager``'s loader keeps it).
    load: Callable[[], TraceModel] = field(repr=False, compare=False)
    pack: Optional[PackRef] = None  # the pack the span was opened from (its summary lies there), else None

    @property
    def model(self) -> TraceModel:
        return self.load()

    @property
    def manifest(self) -> dict[str, Any]:
        """The writer's manifest as discovery read it last (empty for a span without one)."""
        return dict(self.source.manifest or {})

    @property
    def batch_size(self) -> Optional[int]:
        return manifest_batch_size(self.source.manifest)
