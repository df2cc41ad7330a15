"""The Python API, for notebooks and scripts: the page's answers about a trace file, as Python data.

    from profscope import open_trace

    t = open_trace("worker0.1795303442092317655.pt.trace.json.gz")
    t.overview()["breakdown"]                       # µs per step and category
    t.operators(group_by="input_shape")["rows"][:5]
    t.critical_path(step=1)
    t.compare(open_trace("after.pt.trace.json.gz"))["step_time"]

``open_trace`` reads any trace file Profscope reads (torch/Kineto, Paddle, MindSpore, Chrome traces; ``.json`` or
``.json.gz``) and keeps the parsed model in the model cache the command line uses (``PROFSCOPE_CACHE_DIR``), so a
second open is fast. Every question of ``views/answers.py`` about one span (``answers.SPAN_QUESTIONS``) is a method
of the returned ``Trace``, with the same parameters after the model: ``t.overview(marker=...)`` is
``answers.overview(t.model, marker=...)``, and answers exactly what the route of the same name answers (the same
dicts, in the routes' units: µs, bytes, shares in 0..1). ``help(t.overview)`` shows a question's documentation.
"""

from __future__ import annotations

import functools
import os
from typing import Any, Callable, Optional, Sequence

from ..ingest.load import load_trace
from ..model.trace_model import TraceModel
from ..store.cache import ModelCache
from ..views import answers

_QUESTIONS: dict[str, Callable[..., Any]] = {question.__name__: question for question in answers.SPAN_QUESTIONS}


class Trace:
    """One parsed trace file: ``model`` is its trace model; each question of ``answers.SPAN_QUESTIONS`` is a
    method (``dir(trace)`` lists them)."""

    def __init__(self, model: TraceModel, name: str = "trace") -> None:
        self.model = model
        self.name = name

    def __getattr__(self, name: str) -> Callable[..., Any]:
        question = _QUESTIONS.get(name)
        if question is None:
            raise AttributeError(f"{type(self).__name__!r} has no question {name!r}; see dir() for the questions")

        @functools.wraps(question)
        def ask(*args: Any, **kwargs: Any) -> Any:
            return question(self.model, *args, **kwargs)

        return ask

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(_QUESTIONS))

    def __repr__(self) -> str:
        return f"<Trace {self.name!r}: {self.model.framework}, {len(self.model.slices)} slices>"

    def compare(self, experiment: "Trace", group_by: str = "name", base_batch_size: Optional[int] = None,
                exp_batch_size: Optional[int] = None) -> dict[str, Any]:
        """This trace (the baseline) against ``experiment``: step breakdown, operators and kernels by impact on the
        step time (the Compare page's answer); with both batch sizes, per sample too."""
        return answers.compare(_side(self, base_batch_size), _side(experiment, exp_batch_size), group_by)


def _side(trace: Trace, batch_size: Optional[int]) -> answers.CompareSide:
    return answers.CompareSide(trace.name, "", "", trace.model, page_batch_size=batch_size)


def open_trace(path: str, cache: bool = True) -> Trace:
    """Parse the trace file at ``path`` (or read its model from the cache). ``cache=False`` parses it every time and
    writes nothing. Raises ``ingest.load.TraceLoadError`` for a file that is not a trace Profscope reads."""
    path = os.fspath(path)
    # One process: a notebook runs threads, and the two-process decode of the command line forks.
    model = ModelCache().load_or_build(path) if cache else load_trace(path)
    return Trace(model, os.path.basename(path))


def distributed(traces: Sequence[Trace]) -> dict[str, Any]:
    """The Distributed page's answer for the traces of one job's ranks (one trace per rank, the same span)."""
    return answers.distributed([(trace.name, trace.model) for trace in traces])
