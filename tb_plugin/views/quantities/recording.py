"""How to record what a span lacks, in the words of the profiler that wrote it.

A page with nothing to show says how to record it. The way depends on the framework: a MindSpore user is told
``mindspore.profiler.profile``'s options, not ``torch.profiler``'s (MindSpore 2.x: ``profile_memory`` and
``with_stack`` on Ascend, a ``schedule`` with ``prof.step()`` per training step; its timeline has no modules or
user ranges that these pages read). One function per missing thing, one sentence per framework.
"""

from __future__ import annotations

from ...model.trace_model import TraceModel

MINDSPORE = "mindspore"
PADDLE = "paddle"

_MEMORY = {
    MINDSPORE: "Record them with mindspore.profiler.profile(profile_memory=True).",
    PADDLE: "Record them with paddle.profiler.Profiler(profile_memory=True).",
}
_STACKS = {
    MINDSPORE: "Record them with mindspore.profiler.profile(with_stack=True) (Ascend).",
}
_MODULES = {
    MINDSPORE: "MindSpore's timeline records operators and scope layers, not modules: the flame graph and the "
               "operator table show its scopes.",
}
_ANNOTATIONS = {
    MINDSPORE: "MindSpore's timeline records operators and scope layers, not user ranges that this page reads.",
    PADDLE: "Wrap regions of the training step in paddle.profiler.RecordEvent(\"name\") to see them here.",
}
_STEPS = {
    MINDSPORE: "Record steps with mindspore.profiler.profile(schedule=mindspore.profiler.schedule(...)) and "
               "prof.step() once per training step.",
    PADDLE: "Record steps with paddle.profiler.Profiler(scheduler=...) and prof.step() once per training step.",
}


def _pick(model: TraceModel, table: dict[str, str], torch_text: str) -> str:
    return table.get(model.framework, torch_text)


def record_memory(model: TraceModel) -> str:
    return _pick(model, _MEMORY, "Record them with torch.profiler.profile(profile_memory=True, record_shapes=True).")


def record_stacks(model: TraceModel) -> str:
    return _pick(model, _STACKS, "Record them with torch.profiler.profile(with_stack=True).")


def record_modules(model: TraceModel) -> str:
    return _pick(model, _MODULES, "Record with torch.profiler.profile(with_modules=True, with_stack=True) to see "
                                  "modules.")


def record_annotations(model: TraceModel) -> str:
    return _pick(model, _ANNOTATIONS, "Wrap regions of the training step in torch.profiler.record_function(\"name\") "
                                      "to see them here.")


def record_steps(model: TraceModel) -> str:
    return _pick(model, _STEPS, "Record steps with torch.profiler.profile(schedule=...) and prof.step() once per "
                                "training step.")
