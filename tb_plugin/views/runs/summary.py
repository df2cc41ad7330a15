"""The span summary: what a loaded trace contains (sizes, time range, tracks, steps, parse notes),
which framework wrote it, and what could not be derived from it (``limitations``)."""

from __future__ import annotations

from typing import Any

from ...model.categories import GENERIC, SliceKinds
from ...model.trace_model import TraceModel
from ...model.units import NS_PER_US
from ..memory import memory_events
from ..quantities import recording

# How many unknown categories a limitation names (the parse notes list them all).
NAMED_CATEGORIES = 5
# Phases that are no events at all: an empty object (Paddle and TensorFlow end their events with ``{}``).
_NOT_EVENTS = frozenset({""})
_INVALID_PHASE = "?invalid"


def span_summary(model: TraceModel) -> dict[str, Any]:
    steps = model.steps
    return {
        "framework": model.framework,
        "events": model.num_events,
        "start": model.start / NS_PER_US,
        "end": model.end / NS_PER_US,
        "duration": (model.end - model.start) / NS_PER_US,
        "counts": {
            "slices": len(model.slices),
            "instants": len(model.instants),
            "counters": len(model.counters),
            "flows": len(model.flows),
            "memory_events": _memory_events(model),
        },
        "tracks": [
            {"id": t.id, "name": t.thread_name, "group": t.process_name, "kind": t.kind, "max_depth": t.max_depth}
            for t in model.tracks
        ],
        "steps": [
            {"name": model.strings[int(n)], "start": int(s) / NS_PER_US, "dur": int(e - s) / NS_PER_US}
            for n, s, e in zip(steps.name, steps.start, steps.end)
        ],
        "devices": model.metadata.get("deviceProperties") or [],
        "distributed": model.metadata.get("distributedInfo"),
        "parse_notes": {
            "unknown_categories": model.stats.get("unknown_categories", {}),
            "skipped_phases": model.stats.get("skipped_phases", {}),
            **{key: model.stats[key] for key in ("begin_end", "async") if key in model.stats},
        },
        "limitations": model.memo("limitations", lambda: limitations(model)),
    }


def _memory_events(model: TraceModel) -> int:
    """The memory view's events (``views/memory.py``: with an address, an allocator total, or a size)."""
    return len(memory_events(model).rows)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def limitations(model: TraceModel) -> list[dict[str, str]]:
    """What the views cannot show for this span, and why: ``[{"id", "text"}]`` in a fixed order.

    Each entry is a fact about the trace (no steps, no device activity...) with its consequence
    for the views, so a reader knows an empty table is the trace's doing, not a bug.
    """
    kinds = SliceKinds(model)
    out: list[dict[str, str]] = []

    def note(key: str, text: str) -> None:
        out.append({"id": key, "text": text})

    if model.framework == GENERIC:
        note("generic_trace", "Not a trace of a known profiler: operators are the host ranges by name and kernels the "
                              "ranges on device lanes, without shapes, call stacks or links between them.")
    if len(model.steps) == 0:
        note("no_steps", "No step markers (ProfilerStep#N): the whole span counts as one step. "
                         + recording.record_steps(model))
    has_device = bool(kinds.device_activity.any())
    if not has_device:
        note("no_device", "No device activity (kernels, copies): no GPU summary, and the step breakdown has no "
                          "kernel, memcpy or memset time.")
    elif not (model.links.launcher >= 0).any():
        note("no_launch_links", "Device activities carry no correlation with the calls that launched them: steps are "
                                "not extended to the device work they launched.")
    if not kinds.operator.any():
        note("no_operators", "No framework operators: the operator view is empty.")
    if _memory_events(model) == 0:
        note("no_memory", "No memory events: the memory view is empty. " + recording.record_memory(model))
    for key, label in (("begin_end", "duration (B/E)"), ("async", "async (b/e)")):
        counts = model.stats.get(key, {})
        unclosed, unmatched = int(counts.get("closed_at_end", 0)), int(counts.get("unmatched_ends", 0))
        if unclosed or unmatched:
            note(f"unpaired_{key}", f"Unpaired {label} events: {_plural(unclosed, 'begin')} without an end, closed "
                                    f"at the trace's end; {_plural(unmatched, 'end')} without a begin, dropped.")
    unknown = model.stats.get("unknown_categories", {})
    if unknown:
        named = sorted(unknown.items(), key=lambda item: (-item[1], item[0]))[:NAMED_CATEGORIES]
        listed = ", ".join(f"{name} ({count})" for name, count in named)
        more = f" and {len(unknown) - len(named)} more" if len(unknown) > len(named) else ""
        note("unknown_categories", f"Events of unknown categories are shown in the trace but not classified: "
                                   f"{listed}{more}.")
    for text in model.stats.get("notes", []):  # what an input's own reader could not use (side files...)
        note("ingest_note", str(text))
    skipped = {p: n for p, n in model.stats.get("skipped_phases", {}).items() if p not in _NOT_EVENTS}
    invalid = skipped.pop(_INVALID_PHASE, 0)
    where = model.stats.get("first_problem_byte")
    first = f" (the first near byte {where} of the JSON)" if isinstance(where, int) else ""
    if invalid:
        note("invalid_events", f"{_plural(invalid, 'event')} could not be read (values of the wrong type, or numbers "
                               f"out of range) and {'was' if invalid == 1 else 'were'} dropped{first}.")
    repaired = int(model.stats.get("repaired_text", 0))
    if repaired:
        note("repaired_text", f"{_plural(repaired, 'event')} had text that is not valid UTF-8: the invalid bytes are "
                              f"shown as \ufffd{'' if invalid else first}.")
    if skipped:
        listed = ", ".join(f"'{phase}' ({count})" for phase, count in sorted(skipped.items()))
        note("skipped_phases", f"Events of unsupported phases were skipped: {listed}.")
    return out
