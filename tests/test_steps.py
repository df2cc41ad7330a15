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


def test_a_left_out_step_is_named_with_its_reason(tmp_path: Path) -> None:
    """A Paddle span whose profiler stopped 26 µs into a ninth step (a copy of the real linear_sched_2_10 span with
    that stub appended; Paddle's own summary would count nine ProfileSteps): every page counts the eight complete
    steps, and the overview and the span picker say that one is left out, and why."""
    import json

    from profscope.tb_plugin.views.runs.span_names import span_facts
    from profscope.tb_plugin.views.step_trace import step_trace

    source = next((REAL_TRACES / "paddle" / "linear_sched_2_10").glob("*.paddle_trace.json"))
    doc = json.loads(source.read_text())
    events = [e for e in doc["traceEvents"] if e]
    steps = [e for e in events if e.get("cat") == "ProfileStep"]
    last = max(steps, key=lambda e: e["ts"])
    ts = last["ts"] + last["dur"] + 20
    pid, tid = last["pid"], last["tid"]
    events += [{"name": "ProfileStep#10[0.026 ms]", "pid": pid, "tid": tid, "ts": ts, "dur": 26.0, "ph": "X",
                "cat": "ProfileStep", "args": {}},
               {"name": "matmul dygraph[0.010 ms]", "pid": pid, "tid": str(pid) + "(C++)", "ts": ts + 5, "dur": 10.0,
                "ph": "X", "cat": "Operator", "args": {}}]
    doc["traceEvents"] = events + [{}]
    path = tmp_path / source.name
    path.write_text(json.dumps(doc))
    model = load_trace(str(path))
    assert len(model.steps) == 9
    result = overview(model)
    assert [s["name"] for s in result["steps"]] == [f"ProfileStep#{n}" for n in range(2, 10)]
    (left_out,) = result["steps_left_out"]
    assert left_out["name"] == "ProfileStep#10" and "the profiler stopped inside it" in left_out["reason"]
    assert span_facts(model)["steps"] == {"count": 8, "first": 2, "last": 9, "left_out": 1}
    assert [s["name"] for s in step_trace(model)["steps"]] == [s["name"] for s in result["steps"]]


def test_real_gpu_span_with_a_cut_last_step() -> None:
    """HTA's MI250 trace: ProfilerStep#2 launched no device work that the trace recorded (the profiler stopped
    before it)."""
    from profscope.tb_plugin.views.runs.span_names import span_facts

    model = load_trace(str(REAL_TRACES / "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz"))
    result = overview(model)
    assert [s["name"] for s in result["steps"]] == ["ProfilerStep#1"]
    (left_out,) = result["steps_left_out"]
    assert left_out["name"] == "ProfilerStep#2" and left_out["reason"].startswith("it launched no device work")
    assert span_facts(model)["steps"] == {"count": 1, "first": 1, "last": 1, "left_out": 1}
    from profscope.tb_plugin.reports.report import collect_span
    from profscope.tb_plugin.reports.report_html import report_html
    from profscope.tb_plugin.reports.summary import summary_text

    views = collect_span(model, "amd")
    sentence = "ProfilerStep#2 is left out of every figure: it launched no device work"
    assert sentence in summary_text(views) and sentence in report_html(views)
