"""FLOPs and bytes of one operator call, from the arguments the profiler recorded with ``record_shapes=True``.

Each formula is written once here; ``operator_work.py`` applies them to a model (once per distinct combination of
operator name and arguments) and decides which calls count. The inputs are a call's ``Input Dims`` (one shape per
argument, ``[]`` for a non-tensor), ``Input type`` (the C++ type name of each tensor's dtype, or ``Scalar``,
``ScalarList``, ``""``...) and ``Concrete Inputs`` (the value of each non-tensor argument as text, ``""`` for a
tensor), indexed by the position of the argument in the operator's ATen signature.

What is counted (``e(t)`` is the element count of tensor ``t``, ``b(t)`` the bytes of one of its elements):

Matrix products (unit ``matrix``) — ``A[M, K] @ B[K, N]``, ``batch`` products at once:
  FLOPs = ``2 M N K batch`` (a multiply and an add per term), plus ``M N batch`` when a bias or input is added
  (``addmm``, ``baddbmm``, ``linear`` with bias, ``_scaled_mm`` with bias).
  bytes = ``(M K b(A) + K N b(B) + M N b(out)) batch + e(bias) b(bias)``: each operand read once, the result written
  once; the output has the dtype of ``A`` (``_scaled_mm``: its ``out_dtype``, else 2 bytes for an 8-bit input).
  ``mm``, ``addmm``, ``bmm``, ``baddbmm``, ``_scaled_mm`` read the shapes of their two matrices; ``matmul`` and
  ``linear`` follow torch's broadcasting (a 1-D operand is a vector; batch dimensions broadcast; ``matmul`` reads
  each operand once as recorded, a broadcast one not once per batch).
  Grouped products (``_grouped_mm``, ``_scaled_grouped_mm``; unit ``matrix``): ``A`` 2-D with ``B`` 3-D
  ``[G, K, N]`` is ``2 M_total K N`` (M jagged over the groups), ``A`` 3-D with ``B`` 2-D ``2 G M K N_total``,
  2-D with 2-D ``2 M K_total N`` (K jagged: one output per group, ``G`` from the offsets' length), 3-D with 3-D
  ``2 G M K N``; bytes are the operands and the output.

Convolutions (unit ``matrix``) — input ``x[N, C_in, *spatial]``, weight ``w[C_out, C_in / groups, *kernel]``
(transposed: ``w[C_in, C_out / groups, *kernel]``), stride ``s``, padding ``p``, dilation ``d``, output padding
``op``:
  output size per spatial dimension: ``(i + 2p - d (k - 1) - 1) // s + 1``; transposed
  ``(i - 1) s - 2p + d (k - 1) + op + 1``.
  forward FLOPs = ``2 e(out) e(w) / C_out`` (transposed: ``2 e(x) e(w) / C_in``: every input element meets a
  filter slice), plus ``e(out)`` with a bias; bytes = ``(e(x) + e(w) + e(out) + C_out [bias]) b(x)``.
  backward (``convolution_backward``, ``output_mask`` says which gradients it computes): the input gradient is a
  convolution of the output gradient of the same FLOPs as the forward without bias, so is the weight gradient;
  the bias gradient adds ``e(out)``. bytes: input gradient ``e(out) + e(w) + e(x)``, weight gradient
  ``e(out) + e(x) + e(w)``, bias gradient ``e(out) + C_out``, all times ``b(x)``.

Attention (unit ``matrix``) — query ``[B, H_q, N_q, d_qk]``, key ``[B, H_kv, N_kv, d_qk]``, value
``[B, H_kv, N_kv, d_v]`` (the ``flash_attn`` library and ``_flash_attention_*`` / ``_efficient_attention_*`` take
``[B, N, H, d]``):
  forward FLOPs = ``2 B H_q N_q N_kv d_qk + 2 B H_q N_q N_kv d_v`` (scores, then their product with the values;
  the softmax is not counted), halved with a causal mask;
  bytes = ``(e(q) + e(k) + e(v) + e(out)) b(q)``.
  backward FLOPs = the gradients of values, scores, queries and keys, four products of the forward's size, plus
  the scores recomputed by a fused kernel that does not keep them (every fused backward); with grouped-query
  attention (``H_q > H_kv``), ``B N_kv d (H_q / H_kv - 1)`` additions each to reduce the value and key gradients
  over the query heads sharing them; halved with a causal mask. bytes = q, k, v and the output gradient read,
  the q, k, v gradients written.
  Variable-length calls (``cum_seq_q`` given, 3-D query) have no number: their sequence lengths are not recorded.

Normalization (unit ``vector``): ``E`` elements, ``C`` the size of what one statistic normalises over's weights
(layer and RMS norm: ``prod(normalized_shape)``; batch and group norm: the channels ``x.shape[1]``):
  layer, batch and group norm forward: FLOPs = ``6 C + 2 E`` (+ ``3 E`` when statistics are computed: training, and
  always for layer and group norm); bytes = ``2 E b(x) + W C b(x)`` with ``W`` = 2 (mean, variance) + 1 (weight) +
  1 (bias) + 2 (statistics written in training);
  batch and layer norm backward: FLOPs = ``4 E`` (+ ``3 C`` out of training) + ``5 E`` (input gradient, training)
  or ``2 E`` (no input gradient); bytes = ``E b(grad) + E b(x) (2 with the input gradient in training)``
  + ``C b(x)`` (saved statistics, training) + ``C b(x)`` (weight) + ``C b(x)`` per weight/bias gradient written;
  RMS norm forward: FLOPs = ``(E / C) (2 C + 2) + E`` (+ ``E`` with a weight); bytes = ``2 E b(x)`` + ``C b(x)``
  with a weight; RMS norm backward: ``E`` (+ ``E`` with a weight) + ``6 E`` (input gradient) + ``E`` (+ ``E``
  when several rows share the weight) for the weight gradient; bytes = ``E b(grad) + 2 E b(x)`` + ``2 C b(x)``
  with a weight.

Elementwise (unit ``vector``): one operation per output element. Unary: bytes = ``e(x) b(x) + e(x) b(out)``
(``out`` the second tensor where one is given, as the destination of ``copy_``, else ``x``). Binary: the output
has the broadcast shape of both operands; bytes = ``e(a) b(a) + e(b) b(b) + e(out) b(out)``, the output in the
dtype of a third tensor argument if any, else the wider of two tensors' dtypes, else ``a``'s. A Python scalar counts
as one 4-byte element. Ternary (``where``, ``addcmul``, ``addcdiv``, ``lerp``): three operands the same way.

Reductions (unit ``vector``): FLOPs = ``e(x)`` (one operation per element read; softmax ``3 e(x)``: exponent,
sum, division); bytes = ``e(x) b(x) + e(out) b(out)``, the output shape from the reduced dimensions and
``keepdim`` in ``Concrete Inputs`` (all dimensions when none is given; ``cumsum``/``cumprod`` and softmax keep the
shape).

Definitions that differ on purpose from AMD's TraceLens performance model (whose tables the tests compare with):
the bias of ``addmm``/``baddbmm`` counts the elements of the bias tensor as recorded (TraceLens: ``N`` per batch);
``convolution`` counts its bias (TraceLens looks for a bias as a third recorded argument, and record_shapes records
all nine, so it counts none);
``_scaled_mm`` finds its bias at argument 4 (TraceLens counts a bias whenever a third argument exists, always with
record_shapes); attention bytes use the dtype's size (TraceLens: 2 bytes); the backward of every fused attention
counts the recomputed scores (TraceLens: of flash attention only); ``convolution_backward`` counts only the
gradients its ``output_mask`` asks for (TraceLens: all three); normalization reads ``training`` and the presence of
weight and bias from the call (TraceLens takes ``bool("False")``, true, and any recorded argument as present);
batch-norm backward through cuDNN or MIOpen is training (TraceLens: inference); reductions read the reduced
dimensions (TraceLens reads none from text and reduces to one element).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

MATRIX, VECTOR = "matrix", "vector"

# Bytes per element of record_shapes' "Input type" spellings (C++ type names of the dtypes).
DTYPE_BYTES = {
    "double": 8, "float": 4, "c10::Half": 2, "c10::BFloat16": 2, "long int": 8, "long": 8, "long long": 8, "int": 4,
    "short int": 2, "short": 2, "signed char": 1, "unsigned char": 1, "bool": 1, "c10::complex<float>": 8,
    "c10::complex<double>": 16, "c10::complex<c10::Half>": 4, "c10::Float8_e4m3fn": 1, "c10::Float8_e5m2": 1,
    "c10::Float8_e4m3fnuz": 1, "c10::Float8_e5m2fnuz": 1, "c10::Float8_e8m0fnu": 1, "c10::Float4_e2m1fn_x2": 1,
    "unsigned int": 4, "unsigned short": 2, "unsigned long": 8, "c10::qint8": 1, "c10::quint8": 1, "c10::qint32": 4,
    # A Python number passed to an operator: one element, counted as 4 bytes.
    "Scalar": 4,
}
# The precision a dtype computes in (the roof it is held against); integer types other than int8 have none.
DTYPE_PRECISION = {
    "double": "fp64", "float": "fp32", "c10::Half": "fp16", "c10::BFloat16": "bf16", "c10::Float8_e4m3fn": "fp8",
    "c10::Float8_e5m2": "fp8", "c10::Float8_e4m3fnuz": "fp8", "c10::Float8_e5m2fnuz": "fp8", "signed char": "int8",
    "unsigned char": "int8", "c10::complex<float>": "fp32", "c10::complex<double>": "fp64",
}


class NoNumber(Exception):
    """A call whose arguments do not give a number; the message says why, in the user's words."""


@dataclass(frozen=True)
class Work:
    """What one call computes and moves."""

    flops: int
    bytes: int
    precision: str  # fp64, fp32, fp16, bf16, fp8, int8, or "other" (integer and boolean work)
    unit: str  # MATRIX (tensor cores, matrix units) or VECTOR
    params: tuple[tuple[str, Any], ...] = ()  # what the formula read (M, N, K, causal...), for the page


class CallArgs:
    """A call's decoded ``Input Dims``, ``Input type`` and ``Concrete Inputs``."""

    def __init__(self, dims: Any, types: Any, concrete: Any) -> None:
        if types is None:
            raise NoNumber("no Input type was recorded (a trace of torch before 1.10)")
        if not isinstance(dims, list) or not isinstance(types, list):
            raise NoNumber("the shapes recorded are not lists")
        self.dims = dims
        self.types = types
        self.recorded = isinstance(concrete, list)  # Concrete Inputs: torch 2.1 and later
        self.concrete = concrete if isinstance(concrete, list) else []

    def need_values(self, what: str) -> None:
        """Raise when the call recorded no ``Concrete Inputs`` and the formula needs ``what`` from them."""
        if not self.recorded:
            raise NoNumber(f"the trace does not record {what} (Concrete Inputs: torch 2.1 or later with "
                           "record_shapes)")

    def has(self, i: int) -> bool:
        """Argument ``i`` is a tensor with a recorded shape."""
        return i < len(self.dims) and isinstance(self.dims[i], list) and i < len(self.types) and \
            _is_tensor_type(self.types[i]) and _is_shape(self.dims[i])

    def shape(self, i: int, ndim: Optional[Sequence[int]] = None) -> tuple[int, ...]:
        if not self.has(i):
            raise NoNumber(f"argument {i} has no tensor shape recorded")
        shape = tuple(self.dims[i])
        if ndim is not None and len(shape) not in ndim:
            raise NoNumber(f"argument {i} has {len(shape)} dimensions, expected {' or '.join(map(str, ndim))}")
        return shape

    def dtype(self, i: int) -> str:
        return self.types[i] if i < len(self.types) and isinstance(self.types[i], str) else ""

    def bpe(self, i: int) -> int:
        size = DTYPE_BYTES.get(self.dtype(i))
        if size is None:
            raise NoNumber(f"the element size of argument {i} ({self.dtype(i) or 'no type'}) is unknown")
        return size

    def operand(self, i: int) -> tuple[tuple[int, ...], int]:
        """(shape, bytes per element) of a tensor or Python scalar argument (a scalar is one element)."""
        if i < len(self.types) and self.types[i] == "Scalar":
            return (), DTYPE_BYTES["Scalar"]
        return self.shape(i), self.bpe(i)

    def text(self, i: int) -> str:
        value = self.concrete[i] if i < len(self.concrete) else ""
        return value.strip() if isinstance(value, str) else ""

    def ints(self, i: int, count: int, default: int) -> tuple[int, ...]:
        """An int list argument (``"[2, 2]"``; one value stands for every dimension), else ``default``."""
        text = self.text(i)
        if not text:
            return (default,) * count
        values = _int_list(text)
        if values is None:
            raise NoNumber(f"argument {i} ({text!r}) is not a list of integers")
        if len(values) == 1:
            return values * count
        if len(values) != count:
            raise NoNumber(f"argument {i} ({text!r}) has {len(values)} values for {count} dimensions")
        return values

    def integer(self, i: int, default: Optional[int] = None) -> int:
        text = self.text(i)
        if not text:
            if default is None:
                raise NoNumber(f"argument {i} was not recorded")
            return default
        try:
            return int(text)
        except ValueError:
            raise NoNumber(f"argument {i} ({text!r}) is not an integer") from None

    def flag(self, i: int, default: bool) -> bool:
        text = self.text(i)
        if text in ("True", "true", "1"):
            return True
        if text in ("False", "false", "0"):
            return False
        return default

    def flags(self, i: int, count: int) -> tuple[bool, ...]:
        """A bool list argument (``output_mask``: ``"[True, False, True]"``); all true when not recorded."""
        text = self.text(i)
        if not text:
            return (True,) * count
        parts = [p.strip() for p in text.strip("[]()").split(",") if p.strip()]
        if len(parts) != count or any(p not in ("True", "False", "true", "false", "1", "0") for p in parts):
            raise NoNumber(f"argument {i} ({text!r}) is not a mask of {count} booleans")
        return tuple(p in ("True", "true", "1") for p in parts)


def _is_tensor_type(text: Any) -> bool:
    """A tensor's dtype as record_shapes spells it (C++ type names: ``float``, ``c10::Half``); the other arguments
    have capitalised kinds (``Scalar``, ``ScalarList``, ``TensorList``, ``GenericList``) or none (``""``)."""
    return isinstance(text, str) and bool(text) and text != "Scalar" and (
        text in DTYPE_BYTES or text.startswith("c10::") or text[0].islower())


def _is_shape(value: Any) -> bool:
    return all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in value)


_INT_LIST = re.compile(r"^\[?\(?\s*-?\d+(?:\s*,\s*-?\d+)*\s*,?\s*\)?\]?$")


def _int_list(text: str) -> Optional[tuple[int, ...]]:
    if not _INT_LIST.match(text):
        return None
    return tuple(int(p) for p in re.findall(r"-?\d+", text))


def _prod(shape: Sequence[int]) -> int:
    return math.prod(shape)


def precision_of(dtype: str) -> str:
    return DTYPE_PRECISION.get(dtype, "other")


# ---- matrix products -----------------------------------------------------------------------------------------


def gemm_work(m: int, n: int, k: int, batch: int, bias_elems: int, bpe_a: int, bpe_b: int, bpe_out: int,
              bpe_bias: int, dtype: str, adds_bias: bool) -> Work:
    """``batch`` products ``A[M, K] @ B[K, N]``: FLOPs ``2 M N K batch`` (+ ``M N batch`` with a bias added), bytes
    ``(M K b(A) + K N b(B) + M N b(out)) batch + e(bias) b(bias)``."""
    flops = 2 * m * n * k * batch + (m * n * batch if adds_bias else 0)
    moved = (m * k * bpe_a + k * n * bpe_b + m * n * bpe_out) * batch + bias_elems * bpe_bias
    params = (("M", m), ("N", n), ("K", k)) + ((("batch", batch),) if batch != 1 else ())
    return Work(flops, moved, precision_of(dtype), MATRIX, params)


def _mm(a: CallArgs) -> Work:
    """``aten::mm(self[M, K], mat2[K, N])``."""
    (m, k), (k2, n) = a.shape(0, (2,)), a.shape(1, (2,))
    return gemm_work(m, n, k, 1, 0, a.bpe(0), a.bpe(1), a.bpe(0), 0, a.dtype(0), False)


def _addmm(a: CallArgs) -> Work:
    """``aten::addmm(self (bias), mat1[M, K], mat2[K, N], beta, alpha)``."""
    (m, k), (k2, n) = a.shape(1, (2,)), a.shape(2, (2,))
    bias = _prod(a.shape(0)) if a.has(0) else 0
    return gemm_work(m, n, k, 1, bias, a.bpe(1), a.bpe(2), a.bpe(1), a.bpe(0) if bias else 0, a.dtype(1), True)


def _bmm(a: CallArgs) -> Work:
    """``aten::bmm(self[B, M, K], mat2[B, K, N])``."""
    (b, m, k), (_b, _k, n) = a.shape(0, (3,)), a.shape(1, (3,))
    return gemm_work(m, n, k, b, 0, a.bpe(0), a.bpe(1), a.bpe(0), 0, a.dtype(0), False)


def _baddbmm(a: CallArgs) -> Work:
    """``aten::baddbmm(self (added), batch1[B, M, K], batch2[B, K, N], beta, alpha)``."""
    (b, m, k), (_b, _k, n) = a.shape(1, (3,)), a.shape(2, (3,))
    bias = _prod(a.shape(0)) if a.has(0) else 0
    return gemm_work(m, n, k, b, bias, a.bpe(1), a.bpe(2), a.bpe(1), a.bpe(0) if bias else 0, a.dtype(1), True)


def _scaled_mm(a: CallArgs) -> Work:
    """``aten::_scaled_mm(self[M, K], mat2[K, N], scale_a, scale_b, bias?, scale_result?, out_dtype?, ...)``: the
    output in ``out_dtype`` when recorded, else 2 bytes for 8-bit inputs and the input's size otherwise."""
    (m, k), (_k, n) = a.shape(0, (2,)), a.shape(1, (2,))
    bias = _prod(a.shape(4)) if a.has(4) else 0
    bpe_out = _SCALAR_TYPE_BYTES.get(a.text(6), 2 if a.bpe(0) == 1 else a.bpe(0))
    return gemm_work(m, n, k, 1, bias, a.bpe(0), a.bpe(1), bpe_out, a.bpe(4) if bias else 0, a.dtype(0), bias > 0)


# c10::ScalarType numbers as Concrete Inputs records a dtype argument (c10/core/ScalarType.h).
_SCALAR_TYPE_BYTES = {"0": 1, "1": 1, "2": 2, "3": 4, "4": 8, "5": 2, "6": 4, "7": 8, "11": 1, "15": 2, "23": 1,
                      "24": 1, "25": 1, "26": 1}


def _broadcast(*shapes: Sequence[int]) -> tuple[int, ...]:
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for dims in zip(*[(1,) * (ndim - len(s)) + tuple(s) for s in shapes]):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise NoNumber(f"shapes {' and '.join(str(list(s)) for s in shapes)} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def matmul_dims(a_shape: Sequence[int], b_shape: Sequence[int]) -> tuple[int, int, int, int]:
    """(M, N, K, batch) of ``torch.matmul(a, b)``: a 1-D ``a`` is a row ``[1, K]``, a 1-D ``b`` a column ``[K, 1]``;
    batch dimensions broadcast."""
    if not a_shape or not b_shape:
        raise NoNumber("matmul of a 0-d tensor")
    a2 = (1, a_shape[0]) if len(a_shape) == 1 else tuple(a_shape[-2:])
    b2 = (b_shape[0], 1) if len(b_shape) == 1 else tuple(b_shape[-2:])
    batch = _prod(_broadcast(tuple(a_shape[:-2]), tuple(b_shape[:-2])))
    return a2[0], b2[1], a2[1], batch


def _matmul(a: CallArgs) -> Work:
    """``aten::matmul(self, other)`` (counted only when no product inside it is: see ``operator_work``): each operand
    read once as recorded (a broadcast one is not read per batch), the ``batch`` results written."""
    x, y = a.shape(0), a.shape(1)
    m, n, k, batch = matmul_dims(x, y)
    moved = _prod(x) * a.bpe(0) + _prod(y) * a.bpe(1) + m * n * batch * a.bpe(0)
    params = (("M", m), ("N", n), ("K", k)) + ((("batch", batch),) if batch != 1 else ())
    return Work(2 * m * n * k * batch, moved, precision_of(a.dtype(0)), MATRIX, params)


def _linear(a: CallArgs) -> Work:
    """``aten::linear(input[..., K], weight[N, K], bias[N]?)``: ``M`` is every leading dimension of the input."""
    x, w = a.shape(0), a.shape(1, (1, 2))
    if not x:
        raise NoNumber("linear of a 0-d input")
    n = w[0] if len(w) == 2 else 1
    bias = _prod(a.shape(2)) if a.has(2) else 0
    return gemm_work(_prod(x[:-1]), n, x[-1], 1, bias, a.bpe(0), a.bpe(1), a.bpe(0), a.bpe(2) if bias else 0,
                     a.dtype(0), bias > 0)


def _grouped_mm(a: CallArgs) -> Work:
    """``aten::_grouped_mm(self, mat2, offs?, bias?, out_dtype?)`` and ``_scaled_grouped_mm(self, mat2, scale_a,
    scale_b, offs?, ...)``: 2-D/3-D operands, the jagged dimension summed over the groups."""
    x, w = a.shape(0, (2, 3)), a.shape(1, (2, 3))
    offs = 2 if a.has(2) and len(a.shape(2)) == 1 and not a.dtype(2).startswith(("float", "c10::")) else 4
    if len(x) == 2 and len(w) == 3:  # [M_total, K] x [G, K, N]
        m, k, n, groups = x[0], x[1], w[2], 1
        out = m * n
    elif len(x) == 3 and len(w) == 2:  # [G, M, K] x [K, N_total]
        groups, m, k, n = x[0], x[1], x[2], w[1]
        out = groups * m * n
    elif len(x) == 3 and len(w) == 3:  # [G, M, K] x [G, K, N]
        groups, m, k, n = x[0], x[1], x[2], w[2]
        out = groups * m * n
    else:  # [M, K_total] x [K_total, N]: one [M, N] per group
        m, k, n = x[0], x[1], w[1]
        count = a.shape(offs)[0] if a.has(offs) else 1
        groups, out = 1, count * m * n
    flops = 2 * groups * m * n * k
    moved = _prod(x) * a.bpe(0) + _prod(w) * a.bpe(1) + out * (2 if a.bpe(0) == 1 else a.bpe(0))
    return Work(flops, moved, precision_of(a.dtype(0)), MATRIX, (("M", m), ("N", n), ("K", k), ("groups", groups)))


# ---- convolutions --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConvShape:
    x: tuple[int, ...]
    w: tuple[int, ...]
    out: tuple[int, ...]
    transposed: bool
    groups: int


def conv_output(x: Sequence[int], w: Sequence[int], stride: Sequence[int], padding: Sequence[int],
                dilation: Sequence[int], transposed: bool, output_padding: Sequence[int],
                groups: int) -> tuple[int, ...]:
    """The output shape of a convolution (formulas in the module docstring)."""
    spatial = []
    for i, size in enumerate(x[2:]):
        k = w[2 + i]
        if transposed:
            spatial.append((size - 1) * stride[i] - 2 * padding[i] + dilation[i] * (k - 1) + output_padding[i] + 1)
        else:
            spatial.append((size + 2 * padding[i] - dilation[i] * (k - 1) - 1) // stride[i] + 1)
    if any(s <= 0 for s in spatial):
        raise NoNumber("the convolution's output would be empty")
    channels = w[1] * groups if transposed else w[0]
    return (x[0], channels) + tuple(spatial)


def _conv_shape(a: CallArgs, x_at: int, first_int_arg: int) -> ConvShape:
    """Shapes of a convolution whose ``stride, padding, dilation, transposed, output_padding, groups`` follow at
    ``first_int_arg`` (ATen's ``convolution`` and ``convolution_backward`` order)."""
    x, w = a.shape(x_at, (3, 4, 5)), a.shape(x_at + 1, (3, 4, 5))
    if len(w) != len(x):
        raise NoNumber("input and weight have different ranks")
    a.need_values("the stride, padding and groups")
    nd = len(x) - 2
    stride = a.ints(first_int_arg, nd, 1)
    padding = a.ints(first_int_arg + 1, nd, 0)
    dilation = a.ints(first_int_arg + 2, nd, 1)
    transposed = a.flag(first_int_arg + 3, False)
    output_padding = a.ints(first_int_arg + 4, nd, 0)
    groups = a.integer(first_int_arg + 5, 1)
    if groups < 1 or min(stride) < 1:
        raise NoNumber("groups or stride below 1")
    return ConvShape(x, w, conv_output(x, w, stride, padding, dilation, transposed, output_padding, groups),
                     transposed, groups)


def conv_flops(c: ConvShape) -> int:
    """Multiply-adds of one convolution (no bias): ``2 e(out) e(w) / C_out``, transposed ``2 e(x) e(w) / C_in``."""
    per_element = 2 * _prod(c.w[1:])
    return (_prod(c.x) if c.transposed else _prod(c.out)) * per_element


def _conv_params(c: ConvShape) -> tuple[tuple[str, Any], ...]:
    return (("input", list(c.x)), ("weight", list(c.w)), ("output", list(c.out)), ("groups", c.groups)) + \
        ((("transposed", True),) if c.transposed else ())


def _convolution(a: CallArgs) -> Work:
    """``aten::convolution(input, weight, bias?, stride, padding, dilation, transposed, output_padding, groups)``."""
    c = _conv_shape(a, 0, 3)
    bias = a.has(2)
    out = _prod(c.out)
    flops = conv_flops(c) + (out if bias else 0)
    moved = (_prod(c.x) + _prod(c.w) + out + (c.out[1] if bias else 0)) * a.bpe(0)
    return Work(flops, moved, precision_of(a.dtype(0)), MATRIX, _conv_params(c))


def _convolution_backward(a: CallArgs) -> Work:
    """``aten::convolution_backward(grad_output, input, weight, bias_sizes?, stride, padding, dilation, transposed,
    output_padding, groups, output_mask)``: the gradients ``output_mask`` asks for."""
    c = _conv_shape(a, 1, 4)
    grad_input, grad_weight, grad_bias = a.flags(10, 3)
    bias = grad_bias and bool(_int_list(a.text(3)) or a.has(3))
    out, x, w = _prod(c.out), _prod(c.x), _prod(c.w)
    flops = conv_flops(c) * (int(grad_input) + int(grad_weight)) + (out if bias else 0)
    elems = (out + w + x) * (int(grad_input) + int(grad_weight)) + ((out + c.out[1]) if bias else 0)
    mask = ("output_mask", [grad_input, grad_weight, bias])
    return Work(flops, elems * a.bpe(1), precision_of(a.dtype(1)), MATRIX, _conv_params(c) + (mask,))


# ---- attention -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttentionShape:
    batch: int
    heads_q: int
    len_q: int
    heads_kv: int
    len_kv: int
    d_qk: int
    d_v: int


def _attention_shape(a: CallArgs, q_at: int, heads_first: bool) -> AttentionShape:
    q, k, v = a.shape(q_at, (3, 4)), a.shape(q_at + 1, (3, 4)), a.shape(q_at + 2, (3, 4))
    if len(q) == 3 or len(k) != 4 or len(v) != 4:
        raise NoNumber("variable-length attention: the sequence lengths are not recorded")
    if heads_first:  # [B, H, N, d]
        return AttentionShape(q[0], q[1], q[2], k[1], k[2], q[3], v[3])
    return AttentionShape(q[0], q[2], q[1], k[2], k[1], q[3], v[3])  # [B, N, H, d]


def attention_flops(s: AttentionShape, causal: bool) -> int:
    """Forward: ``2 B H_q N_q N_kv (d_qk + d_v)``, halved when causal."""
    flops = 2 * s.batch * s.heads_q * s.len_q * s.len_kv * (s.d_qk + s.d_v)
    return flops // 2 if causal else flops


def attention_backward_flops(s: AttentionShape, causal: bool, recompute: bool) -> int:
    """Backward: gradients of V (``2 B H_q N_kv N_q d_v``), of the scores (``2 B H_q N_q N_kv d_v``), of Q and of K
    (``2 B H_q N_q N_kv d_qk`` each), the scores recomputed (``2 B H_q N_q N_kv d_qk``) by a fused kernel, and the
    reductions over query heads sharing a key/value head; halved when causal."""
    scores_qk = 2 * s.batch * s.heads_q * s.len_q * s.len_kv * s.d_qk
    scores_v = 2 * s.batch * s.heads_q * s.len_q * s.len_kv * s.d_v
    share = s.heads_q // s.heads_kv - 1 if s.heads_kv else 0
    flops = (scores_qk if recompute else 0) + 2 * scores_v + 2 * scores_qk
    flops += s.batch * s.len_kv * s.d_v * share + s.batch * s.len_kv * s.d_qk * share
    return flops // 2 if causal else flops


def _attention_elems(s: AttentionShape) -> tuple[int, int, int, int]:
    q = s.batch * s.len_q * s.heads_q * s.d_qk
    k = s.batch * s.len_kv * s.heads_kv * s.d_qk
    v = s.batch * s.len_kv * s.heads_kv * s.d_v
    o = s.batch * s.len_q * s.heads_q * s.d_v
    return q, k, v, o


def _attention_params(s: AttentionShape, causal: bool) -> tuple[tuple[str, Any], ...]:
    return (("B", s.batch), ("H_q", s.heads_q), ("N_q", s.len_q), ("H_kv", s.heads_kv), ("N_kv", s.len_kv),
            ("d_qk", s.d_qk), ("d_v", s.d_v), ("causal", causal))


def _attention_forward(q_at: int, heads_first: bool, causal_at: Optional[int],
                       mask_type_at: Optional[int] = None) -> Callable[[CallArgs], Work]:
    def read(a: CallArgs) -> Work:
        s = _attention_shape(a, q_at, heads_first)
        causal = _causal(a, causal_at, mask_type_at)
        q, k, v, o = _attention_elems(s)
        return Work(attention_flops(s, causal), (q + k + v + o) * a.bpe(q_at), precision_of(a.dtype(q_at)),
                    MATRIX, _attention_params(s, causal))

    return read


def _attention_backward(q_at: int, heads_first: bool, causal_at: Optional[int],
                        mask_type_at: Optional[int] = None) -> Callable[[CallArgs], Work]:
    def read(a: CallArgs) -> Work:
        s = _attention_shape(a, q_at, heads_first)
        causal = _causal(a, causal_at, mask_type_at)
        q, k, v, o = _attention_elems(s)
        moved = (2 * (q + k + v) + o) * a.bpe(q_at)
        return Work(attention_backward_flops(s, causal, True), moved, precision_of(a.dtype(q_at)), MATRIX,
                    _attention_params(s, causal))

    return read


def _causal(a: CallArgs, causal_at: Optional[int], mask_type_at: Optional[int]) -> bool:
    a.need_values("whether the mask is causal")
    if mask_type_at is not None:  # _efficient_attention_*: custom_mask_type 0 none, 1/2 causal
        return a.integer(mask_type_at, 0) in (1, 2)
    return a.flag(causal_at, False) if causal_at is not None else False


# ---- normalization -------------------------------------------------------------------------------------------


def norm_flops(elems: int, channels: int, training: bool) -> int:
    """Layer, batch and group norm forward: ``6 C + 2 E``, plus ``3 E`` when the statistics are computed."""
    return 6 * channels + 2 * elems + (3 * elems if training else 0)


def norm_bytes(elems: int, channels: int, bpe_in: int, bpe_out: int, affine: bool, bias: bool,
               training: bool) -> int:
    tensors = 2 + (1 if affine else 0) + (1 if affine and bias else 0) + (2 if training else 0)
    return elems * bpe_in + elems * bpe_out + tensors * channels * bpe_in


def norm_backward_flops(elems: int, channels: int, training: bool, grad_input: bool) -> int:
    """Batch and layer norm backward: ``4 E`` (+ ``3 C`` out of training), then ``5 E`` for the input gradient in
    training, or ``2 E`` without an input gradient."""
    flops = 4 * elems + (0 if training else 3 * channels)
    if grad_input:
        flops += 5 * elems if training else 0
    else:
        flops += 2 * elems
    return flops


def norm_backward_bytes(elems: int, channels: int, bpe_in: int, bpe_grad: int, training: bool, grad_input: bool,
                        affine: bool, bias: bool) -> int:
    moved = elems * bpe_grad + elems * bpe_in * (2 if grad_input and training else 1)
    moved += channels * bpe_in if training else 0
    if affine:
        moved += channels * bpe_in + (channels * bpe_in * (2 if bias else 1) if training else 0)
    return moved


def _normalized_size(a: CallArgs, at: int, weight_at: int) -> int:
    """The element count of a ``normalized_shape`` argument (``"[768]"``), else of the weight (of that shape)."""
    shape = _int_list(a.text(at))
    if shape and min(shape) > 0:
        return _prod(shape)
    if a.has(weight_at):
        return _prod(a.shape(weight_at))
    raise NoNumber("normalized_shape was not recorded")


def _norm_params(x: Sequence[int], channels: int, training: bool) -> tuple[tuple[str, Any], ...]:
    return (("shape", list(x)), ("C", channels), ("training", training))


def _layer_norm(a: CallArgs) -> Work:
    """``aten::layer_norm(input, normalized_shape, weight?, bias?, eps, cudnn_enable)`` and
    ``native_layer_norm(input, normalized_shape, weight?, bias?, eps)``: statistics always computed."""
    x = a.shape(0)
    channels = _normalized_size(a, 1, 2)
    e, affine, bias = _prod(x), a.has(2), a.has(3)
    return Work(norm_flops(e, channels, True), norm_bytes(e, channels, a.bpe(0), a.bpe(0), affine, bias, True),
                precision_of(a.dtype(0)), VECTOR, _norm_params(x, channels, True))


def _layer_norm_backward(a: CallArgs) -> Work:
    """``aten::native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight?, bias?,
    output_mask)``."""
    x = a.shape(1)
    channels = _normalized_size(a, 2, 5)
    grad_input, grad_weight, grad_bias = a.flags(7, 3)
    e = _prod(x)
    return Work(norm_backward_flops(e, channels, True, grad_input),
                norm_backward_bytes(e, channels, a.bpe(1), a.bpe(0), True, grad_input, grad_weight, grad_bias),
                precision_of(a.dtype(1)), VECTOR, _norm_params(x, channels, True))


def _batch_norm(training_at: Optional[int], training: bool = True) -> Callable[[CallArgs], Work]:
    """``batch_norm``, ``native_batch_norm``, ``cudnn_batch_norm``, ``miopen_batch_norm``,
    ``_native_batch_norm_legit``: (input, weight?, bias?, running_mean?, running_var?, training, ...)."""

    def read(a: CallArgs) -> Work:
        x = a.shape(0, (2, 3, 4, 5))
        if training_at is not None:
            a.need_values("whether it trains")
        is_training = a.flag(training_at, training) if training_at is not None else training
        e, channels, affine, bias = _prod(x), x[1], a.has(1), a.has(2)
        return Work(norm_flops(e, channels, is_training),
                    norm_bytes(e, channels, a.bpe(0), a.bpe(0), affine, bias, is_training),
                    precision_of(a.dtype(0)), VECTOR, _norm_params(x, channels, is_training))

    return read


def _batch_norm_backward(x_at: int, grad_at: int, weight_at: int, training_at: Optional[int],
                         mask_at: Optional[int]) -> Callable[[CallArgs], Work]:
    """``native_batch_norm_backward(grad_out, input, weight?, running_mean?, running_var?, save_mean?,
    save_invstd?, train, eps, output_mask)``; ``cudnn_batch_norm_backward(input, grad_output, weight, ...)`` and
    ``miopen_batch_norm_backward(input, grad_output, weight, ...)`` (training only)."""

    def read(a: CallArgs) -> Work:
        x = a.shape(x_at, (2, 3, 4, 5))
        if training_at is not None or mask_at is not None:
            a.need_values("whether it trains and which gradients it computes")
        training = a.flag(training_at, True) if training_at is not None else True
        grad_input, grad_weight, grad_bias = a.flags(mask_at, 3) if mask_at is not None else (True, True, True)
        affine = a.has(weight_at) and grad_weight
        e, channels = _prod(x), x[1]
        return Work(norm_backward_flops(e, channels, training, grad_input),
                    norm_backward_bytes(e, channels, a.bpe(x_at), a.bpe(grad_at), training, grad_input, affine,
                                        grad_bias),
                    precision_of(a.dtype(x_at)), VECTOR, _norm_params(x, channels, training))

    return read


def _group_norm(a: CallArgs) -> Work:
    """``aten::group_norm(input, num_groups, weight?, bias?, eps, cudnn_enabled)``,
    ``native_group_norm(input, weight?, bias?, N, C, HxW, group, eps)``: statistics always computed."""
    x = a.shape(0, (2, 3, 4, 5))
    weight_at = 2 if a.text(1) else 1
    e, channels = _prod(x), x[1]
    affine, bias = a.has(weight_at), a.has(weight_at + 1)
    return Work(norm_flops(e, channels, True), norm_bytes(e, channels, a.bpe(0), a.bpe(0), affine, bias, True),
                precision_of(a.dtype(0)), VECTOR, _norm_params(x, channels, True))


def _rms_norm(a: CallArgs) -> Work:
    """``aten::_fused_rms_norm(input, normalized_shape, weight?, eps)`` and ``rms_norm``: FLOPs
    ``(E / C) (2 C + 2) + E`` (+ ``E`` with a weight), bytes ``2 E b(x)`` (+ ``C b(x)`` with a weight)."""
    x = a.shape(0)
    channels = _normalized_size(a, 1, 2)
    e, affine = _prod(x), a.has(2)
    flops = (e // channels) * (2 * channels + 2) + e * (2 if affine else 1)
    moved = 2 * e * a.bpe(0) + (channels * a.bpe(0) if affine else 0)
    return Work(flops, moved, precision_of(a.dtype(0)), VECTOR, _norm_params(x, channels, False))


def _rms_norm_backward(a: CallArgs) -> Work:
    """``aten::_fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight?, output_mask)``."""
    x = a.shape(1)
    channels = _normalized_size(a, 2, 4)
    grad_input, grad_weight = a.flags(5, 2)
    e, affine = _prod(x), a.has(4)
    flops = (e if affine else 0) + e + (6 * e if grad_input else 0)
    if grad_weight and affine:
        flops += e + (e if e // channels > 1 else 0)
    moved = e * a.bpe(0) + 2 * e * a.bpe(1) + (2 * channels * a.bpe(1) if affine else 0)
    return Work(flops, moved, precision_of(a.dtype(1)), VECTOR, _norm_params(x, channels, True))


# ---- elementwise and reductions ------------------------------------------------------------------------------


def _unary(a: CallArgs) -> Work:
    """One tensor in, one out: ``e(x)`` FLOPs, ``e(x) (b(x) + b(out))`` bytes."""
    x = a.shape(0)
    bpe_out = a.bpe(1) if a.has(1) and tuple(a.shape(1)) == tuple(x) else a.bpe(0)
    e = _prod(x)
    return Work(e, e * a.bpe(0) + e * bpe_out, precision_of(a.dtype(0)), VECTOR, (("shape", list(x)),))


def _nary(count: int) -> Callable[[CallArgs], Work]:
    def read(a: CallArgs) -> Work:
        operands = [a.operand(i) for i in range(count)]
        out = _broadcast(*(shape for shape, _ in operands))
        tensors = [i for i in range(count) if a.has(i)]
        if not tensors:
            raise NoNumber("no tensor operand")
        if a.has(count):
            bpe_out = a.bpe(count)
        elif len(tensors) >= 2:
            bpe_out = max(a.bpe(i) for i in tensors)
        else:
            bpe_out = operands[0][1]
        e = _prod(out)
        moved = sum(_prod(shape) * bpe for shape, bpe in operands) + e * bpe_out
        first = tensors[0]
        return Work(e, moved, precision_of(a.dtype(first)), VECTOR, (("shape", list(out)),))

    return read


def _reduction(flops_per_element: int = 1, keeps_shape: bool = False,
               skip: tuple[int, ...] = ()) -> Callable[[CallArgs], Work]:
    """``skip``: arguments that are no dimension (the order ``p`` of ``norm``)."""

    def read(a: CallArgs) -> Work:
        x = a.shape(0)
        e = _prod(x)
        if not keeps_shape:
            a.need_values("the reduced dimensions")
        out = e if keeps_shape else _prod(_reduced_shape(a, x, skip))
        bpe_in = a.bpe(0)
        return Work(flops_per_element * e, e * bpe_in + out * bpe_in, precision_of(a.dtype(0)), VECTOR,
                    (("shape", list(x)), ("output elements", out)))

    return read


def _reduced_shape(a: CallArgs, x: Sequence[int], skip: tuple[int, ...] = ()) -> tuple[int, ...]:
    """The shape left by a reduction over the dimensions in its ``Concrete Inputs`` (an int list, else one int),
    ``keepdim`` its last boolean; all dimensions when none is given."""
    dims: Optional[tuple[int, ...]] = None
    single: Optional[tuple[int, ...]] = None
    keepdim = False
    for i in range(1, len(a.concrete)):
        text = a.text(i)
        if i in skip or not text:
            continue
        if text in ("True", "False"):
            keepdim = text == "True"
        elif text.startswith(("[", "(")):
            dims = _int_list(text) if dims is None else dims
        elif single is None:
            single = _int_list(text)
    dims = dims if dims is not None else single
    if not dims:
        return (1,) * len(x) if keepdim else ()
    nd = len(x)
    axes = {d + nd if d < 0 else d for d in dims}
    if any(not 0 <= d < nd for d in axes):
        raise NoNumber(f"reduced dimensions {list(dims)} outside a {nd}-d input")
    return tuple((1 if i in axes else size) for i, size in enumerate(x) if keepdim or i not in axes)


# ---- which operators have a formula --------------------------------------------------------------------------

Reader = Callable[[CallArgs], Work]

_UNARY = ("abs", "neg", "exp", "exp2", "expm1", "log", "log1p", "log2", "sqrt", "rsqrt", "sigmoid", "tanh", "relu",
          "gelu", "silu", "mish", "erf", "sin", "cos", "reciprocal", "clamp", "clamp_min", "clamp_max", "hardtanh",
          "leaky_relu", "elu", "softplus", "hardswish", "hardsigmoid", "copy", "sign", "floor", "ceil", "round",
          "trunc", "frac", "square", "logical_not", "bitwise_not", "nan_to_num", "_to_copy", "native_dropout")
_BINARY = ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "fmod", "remainder", "eq", "ne", "lt", "le",
           "gt", "ge", "logical_and", "logical_or", "bitwise_and", "bitwise_or", "bitwise_xor", "rsub", "atan2",
           "threshold_backward", "hardtanh_backward", "leaky_relu_backward", "masked_fill", "floor_divide",
           "native_dropout_backward", "gelu_backward", "silu_backward", "sigmoid_backward", "tanh_backward")
_TERNARY = ("where", "addcmul", "addcdiv", "lerp")
_REDUCE = ("sum", "mean", "amax", "amin", "max", "min", "norm", "linalg_vector_norm", "std", "var", "logsumexp",
           "prod", "any", "all", "argmax", "argmin")

READERS: dict[str, Reader] = {
    "aten::mm": _mm, "aten::addmm": _addmm, "aten::bmm": _bmm, "aten::baddbmm": _baddbmm,
    "aten::_scaled_mm": _scaled_mm, "aten::matmul": _matmul, "aten::linear": _linear,
    "aten::_grouped_mm": _grouped_mm, "aten::_scaled_grouped_mm": _grouped_mm,
    "aten::convolution": _convolution, "aten::convolution_backward": _convolution_backward,
    # Attention, forward: (q, k, v, ...) and where is_causal is.
    "aten::scaled_dot_product_attention": _attention_forward(0, True, 5),
    "aten::_scaled_dot_product_flash_attention": _attention_forward(0, True, 4),
    "aten::_scaled_dot_product_flash_attention_for_cpu": _attention_forward(0, True, 4),
    "aten::_scaled_dot_product_efficient_attention": _attention_forward(0, True, 6),
    "aten::_scaled_dot_product_cudnn_attention": _attention_forward(0, True, 6),
    "aten::_flash_attention_forward": _attention_forward(0, False, 8),
    "aten::_efficient_attention_forward": _attention_forward(0, False, None, 9),
    "flash_attn::_flash_attn_forward": _attention_forward(0, False, 5),
    "FlashAttnFunc": _attention_forward(0, False, 5),
    # Attention, backward: (grad_out, q, k, v, ...).
    "aten::_scaled_dot_product_flash_attention_backward": _attention_backward(1, True, 11),
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward": _attention_backward(1, True, 7),
    "aten::_scaled_dot_product_efficient_attention_backward": _attention_backward(1, True, 11),
    "aten::_scaled_dot_product_cudnn_attention_backward": _attention_backward(1, True, 14),
    "aten::_flash_attention_backward": _attention_backward(1, False, 11),
    "aten::_efficient_attention_backward": _attention_backward(1, False, None, 14),
    "flash_attn::_flash_attn_backward": _attention_backward(1, False, 11),
    # Normalization.
    "aten::layer_norm": _layer_norm, "aten::native_layer_norm": _layer_norm,
    "aten::native_layer_norm_backward": _layer_norm_backward,
    "aten::batch_norm": _batch_norm(5), "aten::native_batch_norm": _batch_norm(5),
    "aten::cudnn_batch_norm": _batch_norm(5), "aten::miopen_batch_norm": _batch_norm(5),
    "aten::_native_batch_norm_legit": _batch_norm(5), "aten::_batch_norm_with_update": _batch_norm(None, True),
    "aten::_native_batch_norm_legit_no_training": _batch_norm(None, False),
    "aten::native_batch_norm_backward": _batch_norm_backward(1, 0, 2, 7, 9),
    "aten::cudnn_batch_norm_backward": _batch_norm_backward(0, 1, 2, None, None),
    "aten::miopen_batch_norm_backward": _batch_norm_backward(0, 1, 2, None, None),
    "aten::group_norm": _group_norm, "aten::native_group_norm": _group_norm,
    "aten::rms_norm": _rms_norm, "aten::_fused_rms_norm": _rms_norm,
    "aten::_fused_rms_norm_backward": _rms_norm_backward,
    # Softmax: three operations per element, the shape kept.
    "aten::_softmax": _reduction(3, True), "aten::softmax": _reduction(3, True),
    "aten::_log_softmax": _reduction(3, True), "aten::log_softmax": _reduction(3, True),
    "aten::cumsum": _reduction(1, True), "aten::cumprod": _reduction(1, True),
}
for _name in _UNARY:
    READERS[f"aten::{_name}"] = READERS[f"aten::{_name}_"] = _unary
for _name in _BINARY:
    READERS[f"aten::{_name}"] = READERS[f"aten::{_name}_"] = _nary(2)
for _name in _TERNARY:
    READERS[f"aten::{_name}"] = READERS[f"aten::{_name}_"] = _nary(3)
for _name in _REDUCE:
    READERS[f"aten::{_name}"] = _reduction(skip=(1,) if _name in ("norm", "linalg_vector_norm") else ())
READERS["aten::copy_"] = _unary


# The operators computed on matrix units (tensor cores): products, convolutions, attention.
MATRIX_OPERATORS = frozenset({
    "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::_scaled_mm", "aten::matmul", "aten::linear",
    "aten::_grouped_mm", "aten::_scaled_grouped_mm", "aten::convolution", "aten::convolution_backward",
    "aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention",
    "aten::_scaled_dot_product_flash_attention_for_cpu", "aten::_scaled_dot_product_efficient_attention",
    "aten::_scaled_dot_product_cudnn_attention", "aten::_flash_attention_forward",
    "aten::_efficient_attention_forward", "flash_attn::_flash_attn_forward", "FlashAttnFunc",
    "aten::_scaled_dot_product_flash_attention_backward", "aten::_scaled_dot_product_flash_attention_for_cpu_backward",
    "aten::_scaled_dot_product_efficient_attention_backward", "aten::_scaled_dot_product_cudnn_attention_backward",
    "aten::_flash_attention_backward", "aten::_efficient_attention_backward", "flash_attn::_flash_attn_backward",
})


def unit_of(name: str) -> Optional[str]:
    """MATRIX or VECTOR for an operator with a formula (without reading a call), else None."""
    if name not in READERS:
        return None
    return MATRIX if name in MATRIX_OPERATORS else VECTOR


def call_work(name: str, dims: Any, types: Any, concrete: Any) -> Work:
    """The work of one call of operator ``name`` with its decoded arguments; raises ``NoNumber`` with the reason."""
    reader = READERS.get(name)
    if reader is None:
        raise NoNumber("no formula for this operator")
    try:
        work = reader(CallArgs(dims, types, concrete))
    except (IndexError, TypeError, ValueError, ZeroDivisionError) as error:  # arguments not as the signature says
        raise NoNumber(f"the recorded arguments do not match the operator's signature ({error})") from None
    if not (0 <= work.flops < LARGEST and 0 <= work.bytes < LARGEST):  # shapes no tensor has (a damaged trace)
        raise NoNumber("the recorded shapes give more work than any call does")
    return work


# Beyond this a call's FLOPs or bytes come from shapes no tensor has (and would not fit the int64 columns).
LARGEST = 1 << 62
