"""Event classification shared by every view: what each slice *is*.

Classification works on interned strings: a predicate runs once per distinct name or
category, and the result is looked up per slice with array indexing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import numpy as np

from ..ingest.kineto import DEVICE_CATEGORIES
from ..ingest.mindspore import MINDSPORE_OPERATOR_PROCESS, MINDSPORE_SCOPE_PROCESS
from .trace_model import TraceModel
from .tree import has_ancestor

KERNEL_CATEGORIES = frozenset({"kernel", "Kernel"})
MEMCPY_CATEGORIES = frozenset({"gpu_memcpy", "Memcpy"})
MEMSET_CATEGORIES = frozenset({"gpu_memset", "Memset"})
# PaddlePaddle's categories (its TracerEventType names, see ingest/paddle.py). "Operator" is a
# framework operator as in Kineto; "Kernel"/"Memcpy"/"Memset" are Kineto's device categories too.
PADDLE_RUNTIME_CATEGORIES = frozenset({"CudaRuntime", "MluRuntime", "CustomRuntime"})
PADDLE_DATALOADER_CATEGORIES = frozenset({"Dataloader"})
# Host ranges that are not operators: the step, model phases, user ranges, and the parts of an
# operator (infer_meta, node_creation, its CPU kernel launch) that Paddle nests inside it.
PADDLE_HOST_RANGE_CATEGORIES = frozenset(
    {"ProfileStep", "Dataloader", "Forward", "Backward", "Optimization", "UserDefined", "PythonUserDefined",
     "PythonOp", "OperatorInner", "DygraphKernelLaunch", "StaticKernelLaunch", "Communication"}
)
# MindSpore's timeline: its slices take their process's name as category (see ingest/mindspore.py):
# "CPU OP" are kernel executions (operators), "Scope Layer" the scope hierarchy above them.
MINDSPORE_OPERATOR_CATEGORIES = frozenset({MINDSPORE_OPERATOR_PROCESS})
MINDSPORE_HOST_RANGE_CATEGORIES = frozenset({MINDSPORE_SCOPE_PROCESS})

RUNTIME_CATEGORIES = frozenset(
    {"cuda_runtime", "cuda_driver", "Runtime", "hip_runtime", "hip_driver", "mtia_runtime", "xpu_runtime",
     "xpu_driver", "privateuse1_runtime", "privateuse1_driver"}
) | PADDLE_RUNTIME_CATEGORIES
HOST_OP_CATEGORIES = frozenset({"cpu_op", "Operator", "user_annotation", "python_function", "Python"}) | (
    PADDLE_HOST_RANGE_CATEGORIES | MINDSPORE_OPERATOR_CATEGORIES | MINDSPORE_HOST_RANGE_CATEGORIES
)
OPERATOR_CATEGORIES = frozenset({"cpu_op", "Operator"}) | MINDSPORE_OPERATOR_CATEGORIES

# torch's ProfilerStep#N, Paddle's ProfileStep#N.
STEP_NAME = re.compile(r"^Profiler?Step#\d+$")
# record_function ranges that 2021-era traces file under "Operator": annotations, not operators.
ANNOTATION_NAME = re.compile(
    r"^(Profiler?Step#|enumerate\((DataLoader|DataPipe)\)#|Optimizer\.(step|zero_grad)#)"
)
DATALOADER_NAME = re.compile(r"^enumerate\((DataLoader|DataPipe)\)#")
# Host ranges of collective communication (NCCL, Gloo, c10d, the record_param_comms marker).
COLLECTIVE_OP_NAME = re.compile(
    r"^(nccl:|gloo:|c10d::|c10d_|record_param_comms$|ProcessGroup(NCCL|Gloo|MPI|UCC)|"
    r"torch\.distributed\.|hccl:|xccl:)",
    re.IGNORECASE,
)
COLLECTIVE_KERNEL_NAME = re.compile(r"^(void )?(nccl|rccl|ncclKernel|ncclDevKernel|c10d|hccl)", re.IGNORECASE)

# Kernel names that run on Tensor Cores (substrings; NVIDIA's naming of HMMA/IMMA kernels).
TENSOR_CORE_KERNEL_PATTERNS = (
    "h884", "s884", "h1688", "s1688", "hmma", "i8816", "16816", "c1688", "dgrad_1x1_stride_2x2",
    "first_layer_wgrad_kernel", "conv1x1", "conv2d_c1_k1", "direct_group", "xmma_", "wgmma", "tensorop",
    "_tensor_core", "gemm_bf16", "gemm_fp16", "bf16gemm", "f16gemm", "flash_fwd", "flash_bwd",
)
# Operators whose kernels can use Tensor Cores (convolutions, matrix products, RNN cells, attention).
TENSOR_CORE_ELIGIBLE_OPS = frozenset(
    {
        "aten::_convolution", "aten::_convolution_nogroup", "aten::conv1d", "aten::conv2d", "aten::conv3d",
        "aten::conv_tbc", "aten::conv_transpose1d", "aten::conv_transpose2d", "aten::conv_transpose3d",
        "aten::convolution", "aten::cudnn_convolution", "aten::cudnn_convolution_transpose", "aten::prelu",
        "aten::addmm", "aten::addmv", "aten::addr", "aten::matmul", "aten::mm", "aten::mv", "aten::linear",
        "aten::addbmm", "aten::baddbmm", "aten::bmm", "aten::chain_matmul", "aten::linalg_multi_dot",
        "aten::_thnn_fused_lstm_cell", "aten::_thnn_fused_gru_cell", "aten::lstm_cell", "aten::gru_cell",
        "aten::rnn_tanh_cell", "aten::rnn_relu_cell", "aten::addmm_", "aten::_scaled_mm",
        "aten::cudnn_convolution_backward", "aten::cudnn_convolution_backward_weight",
        "aten::cudnn_convolution_backward_input", "aten::cudnn_convolution_transpose_backward",
        "aten::cudnn_convolution_transpose_backward_weight", "aten::cudnn_convolution_transpose_backward_input",
        "aten::convolution_backward", "aten::_scaled_dot_product_flash_attention",
        "aten::_scaled_dot_product_efficient_attention", "aten::_scaled_dot_product_cudnn_attention",
        "aten::_flash_attention_forward", "aten::_flash_attention_backward",
        "CudnnConvolutionBackward", "CudnnConvolutionBackward0", "ConvolutionBackward0", "BmmBackward0",
        "CudnnConvolutionTransposeBackward", "MmBackward", "MmBackward0", "AddmvBackward", "AddmvBackward0",
        "MvBackward", "MvBackward0", "AddmmBackward", "AddmmBackward0", "AddbmmBackward", "AddbmmBackward0",
        "BaddbmmBackward0", "LinearBackward0",
    }
)


def is_tensor_core_kernel(name: str) -> bool:
    return any(pattern in name for pattern in TENSOR_CORE_KERNEL_PATTERNS)


@dataclass(frozen=True)
class SliceKinds:
    """Boolean masks over ``model.slices`` rows, computed once per model."""

    model: TraceModel

    def _by_category(self, names: frozenset[str]) -> np.ndarray:
        table = np.fromiter((s in names for s in self.model.strings), dtype=bool, count=len(self.model.strings))
        return table[self.model.slices.cat] if len(self.model.slices) else np.zeros(0, dtype=bool)

    def _by_name(self, predicate: Callable[[str], bool]) -> np.ndarray:
        table = self.model.string_ids_where(predicate)
        return table[self.model.slices.name] if len(self.model.slices) else np.zeros(0, dtype=bool)

    @cached_property
    def on_host(self) -> np.ndarray:
        host_track = np.array([t.kind != "gpu" for t in self.model.tracks], dtype=bool)
        return host_track[self.model.slices.track] if len(self.model.slices) else np.zeros(0, dtype=bool)

    @cached_property
    def device_activity(self) -> np.ndarray:
        return self._by_category(DEVICE_CATEGORIES)

    @cached_property
    def device_work(self) -> np.ndarray:
        """Kernels, copies and memsets: what an operator launches (device-side annotations excluded)."""
        return self.kernel | self.memcpy | self.memset

    @cached_property
    def kernel(self) -> np.ndarray:
        return self._by_category(KERNEL_CATEGORIES)

    @cached_property
    def memcpy(self) -> np.ndarray:
        return self._by_category(MEMCPY_CATEGORIES)

    @cached_property
    def memset(self) -> np.ndarray:
        return self._by_category(MEMSET_CATEGORIES)

    @cached_property
    def runtime(self) -> np.ndarray:
        return self._by_category(RUNTIME_CATEGORIES)

    @cached_property
    def host_op(self) -> np.ndarray:
        """Operators, annotations and Python frames on host threads."""
        return self._by_category(HOST_OP_CATEGORIES) & self.on_host

    @cached_property
    def operator(self) -> np.ndarray:
        """Framework operators (``cpu_op``; ``Operator`` in older traces), not steps or frames."""
        annotation = self._by_name(lambda s: bool(ANNOTATION_NAME.match(s)))
        return self._by_category(OPERATOR_CATEGORIES) & self.on_host & ~annotation

    @cached_property
    def python(self) -> np.ndarray:
        return self._by_category(frozenset({"python_function", "Python"}))

    @cached_property
    def step(self) -> np.ndarray:
        return self._by_name(lambda s: bool(STEP_NAME.match(s)))

    @cached_property
    def dataloader(self) -> np.ndarray:
        by_name = self._by_name(lambda s: bool(DATALOADER_NAME.match(s)))
        return (by_name | self._by_category(PADDLE_DATALOADER_CATEGORIES)) & self.host_op

    @cached_property
    def collective_op(self) -> np.ndarray:
        """Host ranges of collectives, and everything nested inside one."""
        own = self._by_name(lambda s: bool(COLLECTIVE_OP_NAME.match(s))) & self.host_op
        own |= (self.model.slices.collective >= 0) & self.host_op
        return own | has_ancestor(self.model.slices, own)

    @cached_property
    def collective_kernel(self) -> np.ndarray:
        """Device activities of collectives: by kernel name, or launched from inside a collective op."""
        by_name = self._by_name(lambda s: bool(COLLECTIVE_KERNEL_NAME.match(s))) & self.device_activity
        op = self.model.links.op
        by_op = np.zeros(len(op), dtype=bool)
        has_op = op >= 0
        by_op[has_op] = self.collective_op[op[has_op]]
        return (by_name | by_op) & self.kernel

    @cached_property
    def tensor_core_kernel(self) -> np.ndarray:
        return self._by_name(is_tensor_core_kernel) & self.kernel

