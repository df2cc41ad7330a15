"""Compare: two spans side by side — step breakdown, operators and kernels, sorted by impact.

The two spans (baseline and experiment) may come from any runs, workers and spans, even
from different hardware. Nothing is recomputed here: each side's numbers are the answers
of the overview, operator and kernel questions, asked as those routes ask them
(``views/answers.compare``: the parser pool's precomputed answers serve Compare too, and
opening it costs only the join).

Definitions (also in ``api/openapi.yaml``):

* ``delta`` = experiment − baseline; ``ratio`` = experiment / baseline (null when the
  baseline is 0). Below 1 means the experiment is faster.
* Operators are joined by name (``group_by=name``) or by name and input shapes
  (``group_by=input_shape``); kernels by name. A row present on one side only has the
  other side ``null`` and counts as zero in ``delta``.
* Impact on step time: a row's time per step on each side is its span total divided by
  that span's number of steps — for operators the device total time when the side's
  operators launched device work, else the host total time; for kernels the total time.
  ``impact`` = experiment per step − baseline per step (µs, negative when the experiment
  is faster), so spans with different step counts compare per step. Rows are sorted by
  the absolute impact, largest first.
* Per sample: when both batch sizes are known (the writer's manifest, or entered in the
  page: ``base_batch_size`` / ``exp_batch_size``, which win over the manifest), every per-step
  time is also given per sample (per-step time / batch size): ``per_sample`` for the step
  time and throughput, ``breakdown_per_sample`` per category, and ``per_sample`` in every
  operator and kernel row. With different batch sizes the two can disagree (a span with
  twice the batch may be slower per step and faster per sample); a note says which is which.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..model.trace_model import TraceModel
from . import overview as overview_view
from .quantities import efficiency

GROUP_BY = ("name", "input_shape")
OPERATOR_DELTA_FIELDS = ("calls", "host_self", "host_total", "device_self", "device_total")
KERNEL_DELTA_FIELDS = ("calls", "total")


@dataclass(frozen=True)
class CompareSide:
    """One side of a comparison: which span it is, and its loaded model."""

    run: str
    worker: str
    span: str
    model: TraceModel
    # The manifest's batch size (writer spans), part of the overview's memo key.
    batch_size: Optional[int] = None
    # A batch size entered in the page: wins over the manifest's for the per-sample figures.
    page_batch_size: Optional[int] = None

    @property
    def samples_per_step(self) -> Optional[int]:
        return self.page_batch_size or self.batch_size

    @property
    def batch_size_source(self) -> Optional[str]:
        return "page" if self.page_batch_size else "manifest" if self.batch_size else None


@dataclass(frozen=True)
class SideAnswers:
    """One side's answers that a comparison joins (``views/answers.compare`` asks them): the overview of the default
    step marker, the operators grouped as compared, the kernels by name."""

    overview: dict[str, Any]
    operators: dict[str, Any]
    kernels: dict[str, Any]


def check_group_by(group_by: str) -> None:
    if group_by not in GROUP_BY:
        raise ValueError(f"group_by must be one of {GROUP_BY}")


def ratio(exp: Optional[float], base: Optional[float]) -> Optional[float]:
    """exp / base, or None when either is missing or the base is zero."""
    if exp is None or base is None or base == 0:
        return None
    return float(exp) / float(base)


def _side_info(side: CompareSide, overview: dict[str, Any]) -> dict[str, Any]:
    return {
        "run": side.run,
        "worker": side.worker,
        "span": side.span,
        "framework": side.model.framework,
        "devices": [device["name"] for device in overview["devices"]],
        "has_device": bool(overview["has_device"]),
        "steps": len(overview["steps"]),
        "step_source": overview["step_source"],
        "mean_step_time": overview["mean_step_time"],
        "batch_size": side.samples_per_step,
        "batch_size_source": side.batch_size_source,
    }


def _breakdown(base: dict[str, Any], exp: dict[str, Any]) -> dict[str, Any]:
    b, e = base["breakdown"], exp["breakdown"]
    categories = overview_view.CATEGORIES
    return {
        "base": {c: b[c] for c in categories},
        "exp": {c: e[c] for c in categories},
        "delta": {c: e[c] - b[c] for c in categories},
        "ratio": {c: ratio(e[c], b[c]) for c in categories},
    }


def _delta(base_row: Optional[dict[str, Any]], exp_row: Optional[dict[str, Any]],
           fields: tuple[str, ...]) -> dict[str, float]:
    return {f: float((exp_row[f] if exp_row else 0) - (base_row[f] if base_row else 0)) for f in fields}


def _side_of(base_row: Optional[dict[str, Any]], exp_row: Optional[dict[str, Any]]) -> str:
    return "both" if base_row and exp_row else "base" if base_row else "exp"


def _join(base_rows: list[dict[str, Any]], exp_rows: list[dict[str, Any]], key_fields: tuple[str, ...]
          ) -> list[tuple[tuple[str, ...], Optional[dict[str, Any]], Optional[dict[str, Any]]]]:
    """(key, baseline row or None, experiment row or None) per key of either side, baseline order first."""
    def key(row: dict[str, Any]) -> tuple[str, ...]:
        return tuple(str(row.get(f, "")) for f in key_fields)

    base_by_key = {key(r): r for r in base_rows}
    exp_by_key = {key(r): r for r in exp_rows}
    keys = list(base_by_key) + [k for k in exp_by_key if k not in base_by_key]
    return [(k, base_by_key.get(k), exp_by_key.get(k)) for k in keys]


def _per_step(value: Optional[float], steps: int) -> Optional[float]:
    return None if value is None else float(value) / max(steps, 1)


def compare_operators(base_ops: dict[str, Any], exp_ops: dict[str, Any], base_steps: int, exp_steps: int,
                      group_by: str = "name") -> list[dict[str, Any]]:
    """Operator rows of both sides joined by name (and input shape), sorted by absolute impact."""
    key_fields = ("name", "input_shape") if group_by == "input_shape" else ("name",)
    base_measure = "device_total" if base_ops.get("has_device") else "host_total"
    exp_measure = "device_total" if exp_ops.get("has_device") else "host_total"
    rows = []
    for key, base_row, exp_row in _join(base_ops["rows"], exp_ops["rows"], key_fields):
        base_time = _per_step(base_row[base_measure], base_steps) if base_row else None
        exp_time = _per_step(exp_row[exp_measure], exp_steps) if exp_row else None
        row: dict[str, Any] = {"name": key[0]}
        if group_by == "input_shape":
            row["input_shape"] = key[1]
        row.update({
            "side": _side_of(base_row, exp_row),
            "base": base_row,
            "exp": exp_row,
            "delta": _delta(base_row, exp_row, OPERATOR_DELTA_FIELDS),
            "per_step": {"base": base_time, "exp": exp_time},
            "impact": (exp_time or 0.0) - (base_time or 0.0),
            "ratio": ratio(exp_time, base_time),
        })
        rows.append(row)
    rows.sort(key=lambda r: -abs(r["impact"]))
    return rows


def compare_kernels(base_kernels: dict[str, Any], exp_kernels: dict[str, Any], base_steps: int,
                    exp_steps: int) -> list[dict[str, Any]]:
    """Kernel rows of both sides joined by name, sorted by absolute impact (total time per step)."""
    rows = []
    for key, base_row, exp_row in _join(base_kernels["rows"], exp_kernels["rows"], ("name",)):
        base_time = _per_step(base_row["total"], base_steps) if base_row else None
        exp_time = _per_step(exp_row["total"], exp_steps) if exp_row else None
        delta: dict[str, Optional[float]] = dict(_delta(base_row, exp_row, KERNEL_DELTA_FIELDS))
        delta["mean"] = float(exp_row["mean"] - base_row["mean"]) if base_row and exp_row else None
        rows.append({
            "name": key[0],
            "side": _side_of(base_row, exp_row),
            "base": base_row,
            "exp": exp_row,
            "delta": delta,
            "per_step": {"base": base_time, "exp": exp_time},
            "impact": (exp_time or 0.0) - (base_time or 0.0),
            "ratio": ratio(exp_time, base_time),
        })
    rows.sort(key=lambda r: -abs(r["impact"]))
    return rows


def _per_sample(value: Optional[float], batch: int) -> Optional[float]:
    return None if value is None else float(value) / batch


def with_per_sample(rows: list[dict[str, Any]], base_batch: int, exp_batch: int) -> list[dict[str, Any]]:
    """Each row's per-step times divided by its side's batch size (µs per sample)."""
    for row in rows:
        base, exp = _per_sample(row["per_step"]["base"], base_batch), _per_sample(row["per_step"]["exp"], exp_batch)
        row["per_sample"] = {"base": base, "exp": exp, "impact": (exp or 0.0) - (base or 0.0), "ratio": ratio(exp, base)}
    return rows


def per_sample_summary(base_info: dict[str, Any], exp_info: dict[str, Any], breakdown: dict[str, Any]
                       ) -> tuple[Optional[dict[str, Any]], Optional[dict[str, Any]]]:
    """(step time per sample with throughput, breakdown per sample), or (None, None) without both batch sizes."""
    base_batch, exp_batch = base_info["batch_size"], exp_info["batch_size"]
    if not base_batch or not exp_batch:
        return None, None
    base = base_info["mean_step_time"] / base_batch
    exp = exp_info["mean_step_time"] / exp_batch
    throughput = {"base": base_batch / (base_info["mean_step_time"] / 1e6) if base_info["mean_step_time"] > 0 else None,
                  "exp": exp_batch / (exp_info["mean_step_time"] / 1e6) if exp_info["mean_step_time"] > 0 else None}
    throughput["ratio"] = ratio(throughput["exp"], throughput["base"])
    summary = {"base": base, "exp": exp, "delta": exp - base, "ratio": ratio(exp, base),
               "samples_per_second": throughput}
    per_category = {
        "base": {c: v / base_batch for c, v in breakdown["base"].items()},
        "exp": {c: v / exp_batch for c, v in breakdown["exp"].items()},
    }
    per_category["delta"] = {c: per_category["exp"][c] - per_category["base"][c] for c in per_category["base"]}
    per_category["ratio"] = {c: ratio(per_category["exp"][c], per_category["base"][c]) for c in per_category["base"]}
    return summary, per_category


def _change_text(value: Optional[float]) -> str:
    """A ratio as a signed change: 1.37 → "+37%"."""
    return "n/a" if value is None else f"{(value - 1) * 100:+.0f}%"


def _batch_note(base: dict[str, Any], exp: dict[str, Any], step_ratio: Optional[float],
                per_sample: Optional[dict[str, Any]]) -> Optional[dict[str, Any]]:
    """Different batch sizes: per step and per sample say different things; say which is which."""
    if per_sample is None or base["batch_size"] == exp["batch_size"]:
        return None
    sample_ratio = per_sample["ratio"]
    def verdict(r: Optional[float]) -> str:
        return "about the same" if r is None or abs(r - 1) < 0.005 else "slower" if r > 1 else "faster"
    return {
        "id": "batch_sizes_differ",
        "text": f"The baseline runs batches of {base['batch_size']} and the experiment batches of {exp['batch_size']}: "
                f"per step the experiment is {verdict(step_ratio)} ({_change_text(step_ratio)}), per sample it is "
                f"{verdict(sample_ratio)} ({_change_text(sample_ratio)}). Per sample is the fair measure of training "
                "speed; per step tells how long one iteration takes.",
        "evidence": {"base_batch_size": base["batch_size"], "exp_batch_size": exp["batch_size"],
                     "step_time_ratio": step_ratio, "sample_time_ratio": sample_ratio},
    }


def _steps(count: int) -> str:
    return f"{count} step" if count == 1 else f"{count} steps"


def _device_text(info: dict[str, Any]) -> str:
    if info["devices"]:
        return ", ".join(info["devices"])
    return "Device activity without device properties" if info["has_device"] else "CPU only"


def _notes(base: dict[str, Any], exp: dict[str, Any], base_ops: dict[str, Any], exp_ops: dict[str, Any],
           kernel_rows: list[dict[str, Any]], same_span: bool, group_by: str) -> list[dict[str, Any]]:
    """What a reader must know before trusting the deltas."""
    notes: list[dict[str, Any]] = []
    if same_span:
        notes.append({"id": "same_span", "text": "The baseline and the experiment are the same span: every delta is 0."})
    if base["steps"] != exp["steps"]:
        notes.append({
            "id": "step_counts_differ",
            "text": f"The baseline has {_steps(base['steps'])} and the experiment {_steps(exp['steps'])}: operator and "
                    "kernel times are compared per step (span total / number of steps).",
            "evidence": {"base_steps": base["steps"], "exp_steps": exp["steps"]},
        })
    if base["step_source"] != exp["step_source"]:
        notes.append({
            "id": "step_sources_differ",
            "text": f"Steps were found differently (baseline: {base['step_source']}, experiment: {exp['step_source']}): "
                    "step times may not measure the same thing.",
        })
    devices_differ = base["devices"] != exp["devices"] or base["has_device"] != exp["has_device"]
    if devices_differ:
        notes.append({
            "id": "devices_differ",
            "text": f"Different devices: baseline {_device_text(base)}, experiment {_device_text(exp)}.",
        })
    if bool(base_ops.get("has_device")) != bool(exp_ops.get("has_device")):
        gpu_side = "baseline" if base_ops.get("has_device") else "experiment"
        notes.append({
            "id": "impact_measures_differ",
            "text": f"Only the {gpu_side}'s operators launched device work: operator impact compares its device time "
                    "with the other side's host time.",
        })
    base_names = sum(1 for r in kernel_rows if r["base"] is not None)
    exp_names = sum(1 for r in kernel_rows if r["exp"] is not None)
    base_only = [r for r in kernel_rows if r["side"] == "base"]
    exp_only = [r for r in kernel_rows if r["side"] == "exp"]
    if base_names and exp_names and (base_only or exp_only):
        base_total = sum(r["base"]["total"] for r in kernel_rows if r["base"] is not None)
        exp_total = sum(r["exp"]["total"] for r in kernel_rows if r["exp"] is not None)
        unmatched_time = sum(r["base"]["total"] for r in base_only) + sum(r["exp"]["total"] for r in exp_only)
        unmatched_share = float(unmatched_time / (base_total + exp_total)) if base_total + exp_total > 0 else 0.0
        why = ("the devices differ, and kernel names depend on the GPU and its libraries" if devices_differ
               else "different library versions or settings launch different kernels")
        notes.append({
            "id": "unmatched_kernels",
            "text": f"{len(base_only)} of {base_names} baseline kernels and {len(exp_only)} of {exp_names} experiment "
                    f"kernels have no kernel of the same name on the other side ({unmatched_share:.0%} of kernel time). "
                    f"Likely {why}: read the operator table, which compares by operator.",
            "evidence": {"base_unmatched": len(base_only), "base_kernels": base_names,
                         "exp_unmatched": len(exp_only), "exp_kernels": exp_names,
                         "unmatched_time_share": unmatched_share},
        })
    elif bool(base_names) != bool(exp_names):
        gpu_side = "baseline" if base_names else "experiment"
        notes.append({
            "id": "kernels_one_side",
            "text": f"Only the {gpu_side} ran GPU kernels: the kernel table lists them on that side only.",
        })
    if group_by == "input_shape":
        for label, ops in (("baseline", base_ops), ("experiment", exp_ops)):
            if ops["rows"] and all(not row.get("input_shape") for row in ops["rows"]):
                notes.append({
                    "id": "no_input_shapes",
                    "text": f"The {label} recorded no input shapes (record_shapes=False): its operators match only "
                            "rows without shapes.",
                })
    return notes


def _mfu(base_overview: dict[str, Any], exp_overview: dict[str, Any],
         step_ratio: Optional[float]) -> tuple[dict[str, Any], Optional[dict[str, Any]]]:
    """Both sides' MFU (their overviews' ``efficiency.mfu.mean``), and a note when the experiment's steps are faster
    but use the device less well."""
    b, e = efficiency.mean_mfu(base_overview), efficiency.mean_mfu(exp_overview)
    section = {"base": b, "exp": e, "delta": e - b if b is not None and e is not None else None,
               "ratio": ratio(e, b), "counted": efficiency.COUNTED_FLOPS}
    note = None
    if b is not None and e is not None and step_ratio is not None and step_ratio < 1 and e < b:
        note = {"id": "faster_but_less_efficient",
                "text": f"The experiment's steps are faster ({step_ratio:.2f}x the baseline's time) but its model "
                        f"FLOPs utilization fell from {b:.1%} to {e:.1%}: it does less work per step, or the same "
                        "work further from the device's peak."}
    return section, note


def compare(base: CompareSide, exp: CompareSide, group_by: str, base_answers: SideAnswers,
            exp_answers: SideAnswers) -> dict[str, Any]:
    """The ``compare`` route's answer (see the module docstring for the definitions), from each side's answers (the
    overviews with their efficiency figures: each side's MFU is its overview's)."""
    check_group_by(group_by)
    base_overview, exp_overview = base_answers.overview, exp_answers.overview
    base_info, exp_info = _side_info(base, base_overview), _side_info(exp, exp_overview)
    base_ops, exp_ops = base_answers.operators, exp_answers.operators
    base_steps, exp_steps = base_info["steps"], exp_info["steps"]
    kernel_rows = compare_kernels(base_answers.kernels, exp_answers.kernels, base_steps, exp_steps)
    categories = [c for c in overview_view.CATEGORIES
                  if c in base_overview.get("categories", ()) or c in exp_overview.get("categories", ())]
    same_span = (base.run, base.worker, base.span) == (exp.run, exp.worker, exp.span)
    breakdown = _breakdown(base_overview, exp_overview)
    per_sample, breakdown_per_sample = per_sample_summary(base_info, exp_info, breakdown)
    operator_rows = compare_operators(base_ops, exp_ops, base_steps, exp_steps, group_by)
    if per_sample is not None:
        with_per_sample(operator_rows, base_info["batch_size"], exp_info["batch_size"])
        with_per_sample(kernel_rows, base_info["batch_size"], exp_info["batch_size"])
    step_ratio = ratio(exp_info["mean_step_time"], base_info["mean_step_time"])
    notes = _notes(base_info, exp_info, base_ops, exp_ops, kernel_rows, same_span, group_by)
    batch_note = _batch_note(base_info, exp_info, step_ratio, per_sample)
    if batch_note is not None:
        notes.insert(0, batch_note)
    mfu_section, mfu_note = _mfu(base_overview, exp_overview, step_ratio)
    if mfu_note is not None:
        notes.append(mfu_note)
    return {
        "base": base_info,
        "exp": exp_info,
        "group_by": group_by,
        "categories": categories,
        "breakdown": breakdown,
        "step_time": {
            "base": base_info["mean_step_time"],
            "exp": exp_info["mean_step_time"],
            "delta": exp_info["mean_step_time"] - base_info["mean_step_time"],
            "ratio": step_ratio,
        },
        "per_sample": per_sample,
        "breakdown_per_sample": breakdown_per_sample,
        "mfu": mfu_section,
        "operators": operator_rows,
        "kernels": kernel_rows,
        "notes": notes,
    }
