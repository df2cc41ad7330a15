"""Profscope: profiler runs of deep-learning jobs, seen in TensorBoard, and as Python data.

    from profscope import open_trace

    t = open_trace("worker0.1795303442092317655.pt.trace.json.gz")
    t.overview()["breakdown"]
    t.operators(group_by="input_shape")["rows"][:5]

``open_trace`` and ``Trace`` are ``profscope.tb_plugin.reports.notebook``'s (every question of the PROFSCOPE tab
about one trace is a method of ``Trace``); ``distributed(traces)`` answers the Distributed page for one trace per
rank. The subpackages: ``profscope.writer`` (in training jobs: traces, manifests, Scalars) and
``profscope.tb_plugin`` (the TensorBoard plugin, the ``profscope`` command line and this API).

Importing ``profscope`` (or ``profscope.writer`` in a training job) loads nothing else: the API is imported on
first use.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Trace", "distributed", "open_trace"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from .tb_plugin.reports import notebook

        return getattr(notebook, name)
    raise AttributeError(f"module 'profscope' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
