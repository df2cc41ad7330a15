"""Which steps a span has: trailing stub steps cut by the profiler's stop are dropped on CPU-only spans too."""

from __future__ import annotations

from pathlib import Path

import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.views.overview import overview
from profscope.tb_plugin.model.steps import find_steps

from conftest import REAL_TRACES
from handmade import trace, write, x

ANN = "user_annotation"


def _cpu_steps(last_ops: int, last_dur: float) -> list[dict]:
    events = []
    for step in range(3):
        t = step * 1100.0
        events.append(x(f"ProfilerStep#{step}", t, 1100, cat=ANN))
        events += [x("aten::mm", t + 10 + 100 * i, 90) for i in range(10)]
    t = 3 * 1100.0
    events.append(x("ProfilerStep#3", t, last_dur, cat=ANN))
    events += [x("aten::mm", t + 2 + 2 * i, 1) for i in range(last_ops)]
    return events


def test_cpu_stub_last_step_is_dropped(tmp_path: Path) -> None:
    # The profiler stopped 26 µs into step 3: one operator, against ten in each full step.
    model = load_trace(str(write(tmp_path / "t.json", trace(_cpu_steps(last_ops=1, last_dur=26)))))
    steps = find_steps(model)
    assert steps.names == ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"]
    result = overview(model)
    assert result["mean_step_time"] == pytest.approx(1100.0)
    assert result["benchmark"]["min_step_time"] == pytest.approx(1100.0)


def test_a_short_step_that_ran_its_work_is_kept(tmp_path: Path) -> None:
    # Fewer operators but not a stub (longer than a quarter of the step before): kept.
    model = load_trace(str(write(tmp_path / "t.json", trace(_cpu_steps(last_ops=3, last_dur=400)))))
    assert len(find_steps(model)) == 4
    # As many operators as the others in a short step (a fast step): kept.
    model = load_trace(str(write(tmp_path / "u.json", trace(_cpu_steps(last_ops=10, last_dur=26)))))
    assert len(find_steps(model)) == 4


@pytest.mark.parametrize("path", sorted(str(p.relative_to(REAL_TRACES))
                                        for p in (REAL_TRACES / "torch213").glob("*/*.pt.trace.json.gz")))
def test_real_cpu_spans_keep_their_complete_steps(path: str) -> None:
    model = load_trace(str(REAL_TRACES / path))
    assert len(find_steps(model)) == len(model.steps)  # every ProfilerStep of these spans ran to its end
