"""FLOPs and bytes of every operator call of a model, and which calls count them.

The formulas are ``work_formulas.py``'s. They are applied once per distinct combination of operator name and
recorded arguments (``Input Dims``, ``Input type``, ``Concrete Inputs``: string ids, so a million calls of a few
hundred shapes decode a few hundred JSON texts), and the results are spread over the calls with array indexing.

Counted once: a matrix product is often reached through several operators that all have a formula
(``aten::linear`` → ``aten::matmul`` → ``aten::mm``; ``aten::layer_norm`` → ``aten::native_layer_norm``;
``aten::_scaled_dot_product_flash_attention`` → ``aten::_flash_attention_forward``). The work is counted at the
innermost one, the operator that does it:

* a matrix operator (product, convolution, attention) counts unless a matrix operator with a formula is nested in it
  (then that one does: ``linear`` defers to the ``addmm`` or ``mm`` inside it; attention computed by the math path
  defers to its ``bmm`` calls);
* a vector operator (normalization, elementwise, reduction) counts unless the operators with a formula nested in it
  do at least its FLOPs together (``layer_norm`` defers to ``native_layer_norm``, ``to`` to ``copy_``, ``mean`` to
  ``sum`` and ``div_``; ``mul_`` keeps its number over the one-element ``copy_`` that turns its scalar into a
  tensor), and unless it runs inside a counted call (the bias addition inside ``convolution`` is part of the
  convolution's formula, that ``copy_`` part of the ``mul_``).

So no call counts inside another counted call, and the device time of a counted call is the device work launched
within it (``owner``): the numbers of a call and of its device time describe the same work.

A call gets no number, with a reason, when its shapes were not recorded (a trace without ``record_shapes``), when
its arguments do not fit the formula (the reason says how), or when its work is counted in a nested operator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import msgspec
import numpy as np

from ...model.categories import SliceKinds
from ...model.factorize import unique_rows
from ...model.trace_model import TraceModel
from ...model.tree import levels
from .work_formulas import MATRIX, VECTOR, NoNumber, Work, call_work, unit_of

# Per call: why it has (or has no) number of its own.
COUNTED, NESTED, INSIDE_COUNTED, NO_NUMBER, NO_SHAPES = range(5)
STATUS_TEXT = {
    COUNTED: "",
    NESTED: "counted in the operator nested in it that does the work",
    INSIDE_COUNTED: "part of the operator it runs in, which counts it",
    NO_NUMBER: "",  # the combination's own reason
    NO_SHAPES: "no shapes were recorded (profile with record_shapes=True)",
}
_NONE, _MATRIX, _VECTOR = 0, 1, 2


@dataclass(frozen=True)
class Combos:
    """Per distinct (operator name, Input Dims, Input type, Concrete Inputs) of the calls with a formula."""

    name: np.ndarray  # int32 string ids
    input_dims: np.ndarray
    input_type: np.ndarray
    concrete_inputs: np.ndarray
    flops: np.ndarray  # int64, -1 without a number
    bytes: np.ndarray  # int64, -1 without a number
    precision: list[str]
    unit: list[str]
    params: list[tuple[tuple[str, Any], ...]]
    reason: list[str]  # "" where there is a number

    def __len__(self) -> int:
        return len(self.name)


@dataclass(frozen=True)
class OperatorWork:
    """The calls of operators that have a formula, and the counted ones' device work."""

    rows: np.ndarray  # slice rows of the calls (operators whose name has a formula), ascending
    combo: np.ndarray  # int32 per call: its row in ``combos``
    status: np.ndarray  # int8 per call: COUNTED, NESTED, INSIDE_COUNTED, NO_NUMBER, NO_SHAPES
    combos: Combos
    work_rows: np.ndarray  # device work (kernels, copies, memsets) launched within a counted call
    owner: np.ndarray  # per work row: the index (into ``rows``) of the counted call it belongs to

    @property
    def counted(self) -> np.ndarray:
        return self.status == COUNTED

    def flops(self) -> np.ndarray:
        """Per call: FLOPs (-1 without a number of its own)."""
        return np.where(self.counted, self.combos.flops[self.combo], -1)

    def bytes(self) -> np.ndarray:
        return np.where(self.counted, self.combos.bytes[self.combo], -1)

    def reason(self, i: int) -> str:
        """Why call ``i`` has no number of its own ("" when it has one)."""
        status = int(self.status[i])
        return self.combos.reason[int(self.combo[i])] if status == NO_NUMBER else STATUS_TEXT[status]


def operator_work(model: TraceModel) -> OperatorWork:
    return model.memo("operator_work", lambda: _operator_work(model))


def _unit_table(model: TraceModel) -> np.ndarray:
    units = {MATRIX: _MATRIX, VECTOR: _VECTOR}
    return np.fromiter((units.get(unit_of(s) or "", _NONE) for s in model.strings), dtype=np.int8,
                       count=len(model.strings))


def _operator_work(model: TraceModel) -> OperatorWork:
    s = model.slices
    kinds = SliceKinds(model)
    unit = np.zeros(len(s), dtype=np.int8)
    if len(s):
        unit = np.where(kinds.operator, _unit_table(model)[s.name], _NONE).astype(np.int8)
    modelled = unit != _NONE
    rows = np.flatnonzero(modelled)
    combo_of_row, combos = _combos(model, rows)
    tree_levels = tree_levels_of(model) if len(rows) else []
    flops = combos.flops[combo_of_row] if len(rows) else np.zeros(0, dtype=np.int64)
    has_number = flops >= 0
    is_matrix = unit[rows] == _MATRIX
    # Sums per row over its subtree (itself included) of: matrix operators with a formula (the innermost matrix
    # operator counts), the FLOPs of operators with a formula (a vector operator whose nested operators do at least
    # its FLOPs defers to them), and operators with a formula. (Three 1-D passes: np.add.at on rows of a 2-D array
    # is slower than three.)
    row_flops = np.zeros(len(s), dtype=np.int64)
    row_flops[rows] = np.maximum(flops, 0)
    below_matrix = subtree_sum(s.parent, tree_levels, (unit == _MATRIX).astype(np.int64))[rows] - is_matrix
    below_flops = subtree_sum(s.parent, tree_levels, row_flops)[rows] - row_flops[rows]
    below_any = subtree_sum(s.parent, tree_levels, modelled.astype(np.int64))[rows] - 1
    deferred = np.where(is_matrix, below_matrix > 0,
                        (below_any > 0) & ((below_flops >= np.maximum(flops, 0)) | ~has_number))
    candidate = np.zeros(len(s), dtype=bool)
    candidate[rows[~deferred & has_number]] = True
    inside = ~is_matrix & (_nearest_ancestor(s.parent, tree_levels, candidate)[rows] >= 0)
    no_shapes = s.input_dims[rows] < 0
    status = np.full(len(rows), COUNTED, dtype=np.int8)
    status[~has_number] = NO_NUMBER
    status[no_shapes] = NO_SHAPES
    status[deferred] = NESTED
    status[inside & ~deferred] = INSIDE_COUNTED
    # Device work and the counted call it belongs to: its launching operator, or the nearest counted one around it.
    counted = np.zeros(len(s), dtype=bool)
    counted[rows[status == COUNTED]] = True
    work_rows = np.flatnonzero(kinds.device_work & (model.links.op >= 0)) if len(s) else np.zeros(0, np.int64)
    op = model.links.op[work_rows].astype(np.int64)
    if counted.any() and len(work_rows):
        around = _nearest_ancestor(s.parent, tree_levels, counted)
        owner_row = np.where(counted[op], op, around[op])
    else:
        owner_row = np.full(len(work_rows), -1, dtype=np.int64)
    keep = owner_row >= 0
    return OperatorWork(rows=rows, combo=combo_of_row, status=status, combos=combos, work_rows=work_rows[keep],
                        owner=np.searchsorted(rows, owner_row[keep]).astype(np.int64))


def tree_levels_of(model: TraceModel) -> list[np.ndarray]:
    """``tree.levels`` of the model's slices, once per model (the efficiency figures walk the tree several times)."""
    return model.memo("tree_levels", lambda: levels(model.slices))


def subtree_sum(parent: np.ndarray, tree_levels: list[np.ndarray], values: np.ndarray) -> np.ndarray:
    total = values.copy()
    for level in reversed(tree_levels):
        p = parent[level]
        has = p >= 0
        np.add.at(total, p[has], total[level[has]])
    return total


def _nearest_ancestor(parent: np.ndarray, tree_levels: list[np.ndarray], flag: np.ndarray) -> np.ndarray:
    nearest = np.full(len(parent), -1, dtype=np.int64)
    for level in tree_levels:
        p = parent[level]
        has = p >= 0
        parents = p[has]
        nearest[level[has]] = np.where(flag[parents], parents, nearest[parents])
    return nearest


def _combos(model: TraceModel, rows: np.ndarray) -> tuple[np.ndarray, Combos]:
    """The distinct (name, Input Dims, Input type, Concrete Inputs) of ``rows`` and each row's combination; the
    formula applied once per combination."""
    s = model.slices
    name, dims, types, concrete = (s.name[rows], s.input_dims[rows], s.input_type[rows], s.concrete_inputs[rows])
    if len(rows):
        _, code = unique_rows(np.stack([name, dims], axis=1))
        _, code = unique_rows(np.stack([code, types], axis=1))
        _, code = unique_rows(np.stack([code, concrete], axis=1))
        first = np.full(int(code.max()) + 1, len(rows), dtype=np.int64)
        np.minimum.at(first, code, np.arange(len(rows)))
    else:
        code, first = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    flops, moved, precision, unit, params, reason = [], [], [], [], [], []
    strings = model.strings
    for i in first.tolist():  # once per distinct combination
        work, why = _work_of(strings[int(name[i])], _text(strings, dims[i]), _text(strings, types[i]),
                             _text(strings, concrete[i]))
        flops.append(work.flops if work else -1)
        moved.append(work.bytes if work else -1)
        precision.append(work.precision if work else "")
        unit.append(work.unit if work else "")
        params.append(work.params if work else ())
        reason.append(why)
    combos = Combos(name=name[first], input_dims=dims[first], input_type=types[first],
                    concrete_inputs=concrete[first], flops=np.asarray(flops, dtype=np.int64),
                    bytes=np.asarray(moved, dtype=np.int64), precision=precision, unit=unit, params=params,
                    reason=reason)
    return code.astype(np.int32), combos


def _text(strings: list[str], string_id: int) -> Optional[str]:
    return strings[int(string_id)] if string_id >= 0 else None


_DECODER = msgspec.json.Decoder()


def _work_of(name: str, dims: Optional[str], types: Optional[str],
             concrete: Optional[str]) -> tuple[Optional[Work], str]:
    if dims is None:
        return None, STATUS_TEXT[NO_SHAPES]
    try:
        decoded = [_DECODER.decode(text) if text else None for text in (dims, types, concrete)]
    except (msgspec.DecodeError, RecursionError, ValueError):  # a damaged trace: no number for that call only
        return None, "the recorded shapes are not valid JSON"
    try:
        return call_work(name, *decoded), ""
    except NoNumber as reason:
        return None, str(reason)
