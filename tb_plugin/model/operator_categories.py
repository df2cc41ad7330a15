"""What kind of work each operator and each piece of device work is: GEMM, grouped GEMM, convolution, attention,
normalization, elementwise, reduction, optimizer, communication, memory copy, Triton, other. One definition, used by
every view (the Overview's device time per category, the roofline's colours, the operator tables).

An operator's category comes from its name (``operator_category``). Device work takes, in this order:

1. what the slice is (``SliceKinds``): a copy or memset is a memory copy, a collective kernel communication;
2. the category of the operator that launched it (``links.op``, the innermost operator around the launch), when the
   name says one;
3. the kernel's own name (``kernel_category``): Triton and Inductor kernels, cuBLAS/CUTLASS/hipBLASLt GEMMs,
   flash and fused attention kernels, cuDNN/MIOpen convolutions, ATen's normalization, reduction and elementwise
   kernels, multi-tensor-apply optimizer kernels;
4. else other.

This follows AMD TraceLens's categorisation (operator name first, then ATen's kernel names), with its forward and
backward categories merged (``CONV_fwd`` and ``CONV_bwd`` are both convolution) and copies and collectives taken
from what the device recorded.
"""

from __future__ import annotations

import re
from typing import Callable

import numpy as np

from .categories import COLLECTIVE_OP_NAME, SliceKinds
from .trace_model import TraceModel

# Category keys in display order, and what the page calls them.
CATEGORIES = ("gemm", "grouped_gemm", "convolution", "attention", "normalization", "elementwise", "reduction",
              "optimizer", "communication", "memory_copy", "triton", "other")
LABELS = {"gemm": "GEMM", "grouped_gemm": "Grouped GEMM", "convolution": "Convolution", "attention": "Attention",
          "normalization": "Normalization", "elementwise": "Elementwise", "reduction": "Reduction",
          "optimizer": "Optimizer", "communication": "Communication", "memory_copy": "Memory copy",
          "triton": "Triton", "other": "Other"}
CODE = {name: code for code, name in enumerate(CATEGORIES)}
OTHER = CODE["other"]
NO_CATEGORY = -1

_ELEMENTWISE_OPS = (
    "abs", "neg", "exp", "exp2", "expm1", "log", "log1p", "log2", "sqrt", "rsqrt", "sigmoid", "tanh", "relu", "gelu",
    "silu", "mish", "erf", "sin", "cos", "reciprocal", "clamp", "clamp_min", "clamp_max", "hardtanh", "leaky_relu",
    "elu", "softplus", "hardswish", "hardsigmoid", "copy", "sign", "floor", "ceil", "round", "trunc", "frac",
    "square", "logical_not", "bitwise_not", "nan_to_num", "_to_copy", "to", "native_dropout", "dropout", "add", "sub",
    "mul", "div", "pow", "maximum", "minimum", "fmod", "remainder", "eq", "ne", "lt", "le", "gt", "ge", "logical_and",
    "logical_or", "bitwise_and", "bitwise_or", "bitwise_xor", "rsub", "atan2", "threshold", "threshold_backward",
    "hardtanh_backward", "leaky_relu_backward", "masked_fill", "floor_divide", "native_dropout_backward",
    "gelu_backward", "silu_backward", "sigmoid_backward", "tanh_backward", "where", "addcmul", "addcdiv", "lerp",
    "fill", "zero", "clone", "contiguous",
)
_REDUCTION_OPS = (
    "sum", "mean", "amax", "amin", "max", "min", "norm", "linalg_vector_norm", "std", "var", "var_mean", "std_mean",
    "logsumexp", "prod", "any", "all", "argmax", "argmin", "cumsum", "cumprod", "softmax", "_softmax", "log_softmax",
    "_log_softmax", "_softmax_backward_data", "_log_softmax_backward_data", "topk", "sort",
)
_BY_NAME: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^triton"), "triton"),
    (COLLECTIVE_OP_NAME, "communication"),
    (re.compile(r"grouped_(?:gemm|mm)|^aten::_(?:scaled_)?grouped_mm$", re.IGNORECASE), "grouped_gemm"),
    (re.compile(r"scaled_dot_product|flash_attention|efficient_attention|cudnn_attention|flash_attn|FlashAttn|"
                r"multi_head_attention|fmha|^(?:ScaledDotProduct|FlashAttention|EfficientAttention)\w*Backward",
                re.IGNORECASE), "attention"),
    (re.compile(r"^aten::(?:_?convolution|_convolution_double_backward|conv\d|conv_transpose\d|conv_tbc|"
                r"cudnn_convolution|miopen_(?:depthwise_)?convolution|mkldnn_convolution|_slow_conv|slow_conv|"
                r"thnn_conv|_nnpack_spatial_convolution|_conv_depthwise)|"
                r"^(?:Cudnn|Miopen|Mkldnn|Slow|Thnn)?Convolution\w*Backward\d*$|^ConvBias", re.IGNORECASE),
     "convolution"),
    (re.compile(r"^aten::(?:mm|addmm|_addmm_activation|bmm|baddbmm|addbmm|matmul|linear|_scaled_mm|_int_mm|mv|addmv|"
                r"dot|vdot|einsum|chain_matmul|linalg_multi_dot|_weight_int\dpack_mm|_mixed_dtypes_linear)$|"
                r"^(?:Mm|Addmm|Bmm|Baddbmm|Addbmm|Matmul|Linear|Mv|Addmv|Dot)Backward\d*$"), "gemm"),
    (re.compile(r"(?:layer|batch|group|instance|rms)_?norm", re.IGNORECASE), "normalization"),
    (re.compile(r"^aten::_fused_(?:adam|adamw|sgd|adagrad)|^aten::_foreach_|^Optimizer\.(?:step|zero_grad)#|"
                r"multi_tensor_apply|fused_adam", re.IGNORECASE), "optimizer"),
    (re.compile(r"^aten::(?:%s)_?$" % "|".join(map(re.escape, _REDUCTION_OPS))), "reduction"),
    (re.compile(r"^aten::(?:%s)_?$" % "|".join(map(re.escape, _ELEMENTWISE_OPS))), "elementwise"),
)
_BY_KERNEL: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^triton_|^triton\b"), "triton"),
    (re.compile(r"multi_tensor_apply|fused_adam|FusedAdam|_foreach", re.IGNORECASE), "optimizer"),
    (re.compile(r"grouped_?gemm|GroupedGemm", re.IGNORECASE), "grouped_gemm"),
    (re.compile(r"flash_fwd|flash_bwd|fmha|attention|attn_fwd|attn_bwd", re.IGNORECASE), "attention"),
    (re.compile(r"fprop|dgrad|wgrad|implicit_?convolve|implicit_?gemm|winograd|conv2d|conv3d|convolve|"
                r"MIOpenConv|igemm", re.IGNORECASE), "convolution"),
    (re.compile(r"gemm|cutlass|xmma|cublas|Cijk_|hipblaslt|gemv|_mma_", re.IGNORECASE), "gemm"),
    (re.compile(r"layer_?norm|batch_?norm|group_?norm|rms_?norm|bn_fw|bn_bw|LayerNorm|BatchNorm", re.IGNORECASE),
     "normalization"),
    (re.compile(r"reduce_kernel|softmax|SoftMax|reduce|cumsum|scan_kernel", re.IGNORECASE), "reduction"),
    (re.compile(r"elementwise|vectorized_|unrolled_|fill_kernel|direct_copy", re.IGNORECASE), "elementwise"),
)


def _first(rules: tuple[tuple[re.Pattern[str], str], ...]) -> Callable[[str], int]:
    def category(name: str) -> int:
        for pattern, key in rules:
            if pattern.search(name):
                return CODE[key]
        return OTHER

    return category


operator_category_code = _first(_BY_NAME)
kernel_category_code = _first(_BY_KERNEL)


def operator_category(name: str) -> str:
    """The category an operator's name says (``"other"`` when it says none)."""
    return CATEGORIES[operator_category_code(name)]


def kernel_category(name: str) -> str:
    """The category a kernel's own name says (``"other"`` when it says none)."""
    return CATEGORIES[kernel_category_code(name)]


def _per_string(model: TraceModel, key: str, category: Callable[[str], int], rows: np.ndarray) -> np.ndarray:
    """Per interned string: its category code, classified for the names of ``rows`` only (a trace's strings also
    hold long shapes and call stacks that are no name)."""

    def compute() -> np.ndarray:
        table = np.full(len(model.strings), OTHER, dtype=np.int8)
        names = np.unique(model.slices.name[rows]) if len(rows) else np.zeros(0, dtype=np.int64)
        table[names] = np.fromiter((category(model.strings[int(n)]) for n in names), dtype=np.int8,
                                   count=len(names))
        return table

    return model.memo(key, compute)


def operator_categories_by_name(model: TraceModel) -> np.ndarray:
    """Per interned string: the category code an operator of that name has (the names of operator slices)."""
    return _per_string(model, "operator_category_by_string", operator_category_code,
                       np.flatnonzero(SliceKinds(model).operator))


def device_work_categories(model: TraceModel) -> np.ndarray:
    """Per slice: the category code of device work (kernels, copies, memsets), ``NO_CATEGORY`` for other slices.
    The rules are the module docstring's, applied in that order."""

    def compute() -> np.ndarray:
        s = model.slices
        kinds = SliceKinds(model)
        out = np.full(len(s), NO_CATEGORY, dtype=np.int8)
        work = np.flatnonzero(kinds.device_work)
        if not len(work):
            return out
        by_kernel = _per_string(model, "kernel_category_by_string", kernel_category_code, work)[s.name[work]]
        op = model.links.op[work]
        by_op = np.where(op >= 0, operator_categories_by_name(model)[s.name[np.maximum(op, 0)]], OTHER)
        category = np.where(by_op != OTHER, by_op, by_kernel).astype(np.int8)
        category[kinds.collective_kernel[work]] = CODE["communication"]
        category[(kinds.memcpy | kinds.memset)[work]] = CODE["memory_copy"]
        out[work] = category
        return out

    return model.memo("device_work_categories", compute)
