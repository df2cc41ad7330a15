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

from .trace_model import TraceModel
from .tree import has_ancestor

# Synchronisation on the device (Kineto's CUDA_SYNC; an Ascend task waiting on or recording an event or
# notify, see ingest/mindspore/ascend_layers.py): device activity that computes nothing.
DEVICE_SYNC_CATEGORIES = frozenset({"cuda_sync", "Ascend Sync"})
# Categories whose slices are device activities (kernels, copies, device-side annotations).
DEVICE_CATEGORIES = frozenset(
    {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "Kernel", "Memcpy", "Memset", "mtia_ccp_events",
     "HCCL Task"}  # the tasks an Ascend collective is made of, counted once through its operator (ingest/mindspore/ascend_layers.py)
) | DEVICE_SYNC_CATEGORIES
# Categories of host-side operators and annotations whose args the decoder keeps (shapes, stacks, sequence numbers).
ARGS_CATEGORIES = frozenset({"cpu_op", "Operator", "user_annotation", "python_function"})
# The categories the decoder knows; a trace with others says so in its limitations.
KNOWN_CATEGORIES = frozenset(
    DEVICE_CATEGORIES
    | ARGS_CATEGORIES
    | {
        "cuda_runtime", "cuda_driver", "Runtime", "Trace", "cpu_instant_event", "ac2g", "fwdbwd", "async",
        "overhead", "Python", "python_function", "cuda_profiler_range", "Memory", "cpu_instant_event",
        "hip_runtime", "hip_driver", "mtia_runtime", "xpu_runtime", "xpu_driver", "privateuse1_runtime",
        "privateuse1_driver", "gpu_user_annotation", "user_annotation",
    }
)
# MindSpore's process names whose slices are host operators, and scope ranges (its CPU timeline gives every slice
# its process's name as category: ingest/mindspore/normalise.py).
MINDSPORE_OPERATOR_PROCESS = "CPU OP"
MINDSPORE_SCOPE_PROCESS = "Scope Layer"
MINDSPORE_CATEGORIES = frozenset({MINDSPORE_OPERATOR_PROCESS, MINDSPORE_SCOPE_PROCESS})
_INSTANCE_SUFFIX = re.compile(r"-op\d+$")


def operator_type(name: str) -> str:
    """An Ascend operator instance's type: ``"Default/network/conv1-Conv2d/Conv2D-op12"`` or ``"Conv2D-op12"`` → ``"Conv2D"``."""
    return _INSTANCE_SUFFIX.sub("", name.rsplit("/", 1)[-1])


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
# MindSpore's timeline: its slices take their process's name as category (see ingest/mindspore/normalise.py):
# "CPU OP" are kernel executions (operators), "Scope Layer" the scope hierarchy above them.
# Its older Ascend/GPU device timelines (ingest/mindspore/timeline.py) are given Kineto's own
# kinds: AI Core, AI CPU, communication tasks and GPU kernels are "kernel" (GPU copies
# "gpu_memcpy"), GPU operator executions and the zero-length records of Ascend tasks "Operator";
# their "Scope Name" and "Overlap Analysis" ranges are in no set, so no view counts them as time.
# The layers of a newer Ascend timeline (ingest/mindspore/ascend_layers.py) take Kineto's kinds too: "kernel"
# (Ascend Hardware tasks; communication tasks name their collective), "Memcpy" (copy tasks), "Runtime"
# (CANN calls), "Ascend Sync" (waits and records: device sync); the rows that repeat or derive device time
# ("HCCL", "HCCL Task", "Overlap Analysis") are in no set.
MINDSPORE_OPERATOR_CATEGORIES = frozenset({MINDSPORE_OPERATOR_PROCESS})
# An Ascend collective's own tasks (ingest/mindspore/ascend_layers.py: "HCCL Task"), on the streams of the device's
# "Ascend Hardware" layer: the waits for a peer's notify or an event among them keep the device waiting, not busy.
COLLECTIVE_TASK_CATEGORY = "HCCL Task"
ASCEND_HARDWARE_PROCESS = "Ascend Hardware"
WAIT_TASK_NAME = re.compile(r"^(?:notify|event)_?(?:wait|record|reset)(?:_sqe)?$", re.IGNORECASE)
MINDSPORE_HOST_RANGE_CATEGORIES = frozenset({MINDSPORE_SCOPE_PROCESS})

RUNTIME_CATEGORIES = frozenset(
    {"cuda_runtime", "cuda_driver", "Runtime", "hip_runtime", "hip_driver", "mtia_runtime", "xpu_runtime",
     "xpu_driver", "privateuse1_runtime", "privateuse1_driver"}
) | PADDLE_RUNTIME_CATEGORIES
HOST_OP_CATEGORIES = frozenset({"cpu_op", "Operator", "user_annotation", "python_function", "Python"}) | (
    PADDLE_HOST_RANGE_CATEGORIES | MINDSPORE_OPERATOR_CATEGORIES | MINDSPORE_HOST_RANGE_CATEGORIES
)
OPERATOR_CATEGORIES = frozenset({"cpu_op", "Operator"}) | MINDSPORE_OPERATOR_CATEGORIES

# DeepLink (torch_dipu) writes Kineto traces whose device records come from its own profiler
# (DeepLink-org/deeplink.framework, dipu/torch_dipu/csrc_dipu/profiler/: profiler.cpp
# RecordBlockCreator, DIPUDeviceActivity.cpp). Each profiled block is a host range
# "LaunchKernel_<name>" (Kineto CUDA_RUNTIME: category "cuda_runtime", a launch) and a device
# range "<name>" on its stream (CONCURRENT_KERNEL: category "kernel"), joined by an "ac2g" flow;
# both carry the launching operator's External id. The name says what the block is:
# * "diopi<Op>": the DIOPI call itself (the inner record of every autogenerated wrapper,
#   scripts/autogen_diopi_wrapper/diopi_wrapper_template.py; diopiRecordStart in
#   csrc_dipu/diopirt/diopirt_impl.cpp) -> a device kernel;
# * "dipu_<aten op>": the autogenerated wrapper (its __FUNCTION__), which encloses the DIOPI call
#   and the output's allocation -> an operator range on the device, not a kernel (counting it
#   would count its kernels twice);
# * "empty", "empty_strided" (csrc_dipu/aten/ops/EmptyOpsKernel.cpp) and, in older releases,
#   "wrapper_DIPU_empty_memory_format"/"wrapper_DIPU_empty_strided" (csrc_dipu/aten/RegisterDIPU.cpp):
#   a tensor allocated by DIPU's caching allocator -> allocator time, not compute;
# * "DiclAllreduce" and the other DICL collectives (ProcessGroupDICL.cpp) -> communication.
DEEPLINK_KERNEL_NAME = re.compile(r"^diopi[A-Z]")

# MTIA's device activity (Kineto category "mtia_ccp_events", an alias of CONCURRENT_KERNEL in Kineto's
# ActivityType.h) holds more than kernels; the event's name says what it is. Work on the processing
# elements ("pe_exe", and graph partitions such as "merge" and "remote", with their PE grid position)
# is kernels; "dma_request" a copy (with a direction and size); "event_record"/"event_wait" synchronisation.
MTIA_DEVICE_CATEGORY = "mtia_ccp_events"
MTIA_COPY_NAMES = frozenset({"dma_request"})
MTIA_SYNC_NAMES = frozenset({"event_record", "event_wait"})
DEEPLINK_DEVICE_OP_NAME = re.compile(r"^dipu_")
DEEPLINK_ALLOCATOR_NAME = re.compile(r"^(?:LaunchKernel_)?(?:wrapper_DIPU_)?empty(?:_memory_format|_strided)?$")

# Any other Chrome trace (framework "generic": hand-made, TensorFlow's or JAX's trace viewer
# export...) has no operator or kernel categories: every host range is an operator by name and
# every range on a device lane a kernel. TensorFlow/JAX name their device processes
# "/device:GPU:0", "/device:TPU:0"; their "Steps" and "XLA Modules" lanes hold ranges that
# enclose the op lanes' kernels, so they are not kernels themselves.
GENERIC = "generic"
GENERIC_DEVICE_PROCESS = re.compile(r"^/device:(?!CPU)")
GENERIC_ENCLOSING_LANE = re.compile(r"^(?:Steps|XLA Modules)$")

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
    r"torch\.distributed\.|hccl:|xccl:|Dicl[A-Z])",
    re.IGNORECASE,
)
COLLECTIVE_KERNEL_NAME = re.compile(r"^(void )?(nccl|rccl|ncclKernel|ncclDevKernel|c10d|hccl|dicl)", re.IGNORECASE)

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


_DEEPLINK_KERNEL, _DEEPLINK_DEVICE_OP, _DEEPLINK_ALLOCATOR = 1, 2, 3


def _deeplink_name_kinds(strings: list[str]) -> np.ndarray:
    """Per interned string: 1 a DIOPI kernel, 2 a DIPU operator wrapper, 3 an allocation, else 0."""

    def kind(text: str) -> int:
        if DEEPLINK_KERNEL_NAME.match(text):
            return _DEEPLINK_KERNEL
        if DEEPLINK_DEVICE_OP_NAME.match(text):
            return _DEEPLINK_DEVICE_OP
        return _DEEPLINK_ALLOCATOR if DEEPLINK_ALLOCATOR_NAME.match(text) else 0

    return np.fromiter(map(kind, strings), dtype=np.int8, count=len(strings))


@dataclass(frozen=True)
class SliceKinds:
    """Boolean masks over ``model.slices`` rows, computed once per model: ``SliceKinds(model)`` is the model's one
    instance (kept in its memo), so every view shares the masks another view computed (10 M slices: the overview
    alone asked for the kernel mask nine times, 0.4 s)."""

    model: TraceModel

    def __new__(cls, model: TraceModel) -> "SliceKinds":
        return model.memo(cls, lambda: super(SliceKinds, cls).__new__(cls))

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
        return self._by_category(DEVICE_CATEGORIES) | self._generic_kernel

    @cached_property
    def device_work(self) -> np.ndarray:
        """Kernels, copies and memsets: what an operator launches (device-side annotations excluded)."""
        return self.kernel | self.memcpy | self.memset

    @cached_property
    def kernel(self) -> np.ndarray:
        """Device kernels. DeepLink's operator and allocation ranges on the device are not (``DEEPLINK_*``);
        MTIA's device activity is, but for its copies and synchronisation (``MTIA_*``)."""
        not_kernel = np.isin(self._deeplink_kind, (_DEEPLINK_DEVICE_OP, _DEEPLINK_ALLOCATOR))
        mtia_kernel = self._mtia & ~self._mtia_copy & ~self._mtia_sync
        return (self._by_category(KERNEL_CATEGORIES) & ~not_kernel) | self._generic_kernel | mtia_kernel

    @cached_property
    def _mtia(self) -> np.ndarray:
        return self._by_category(frozenset({MTIA_DEVICE_CATEGORY}))

    @cached_property
    def _mtia_copy(self) -> np.ndarray:
        return self._mtia & self._by_name(MTIA_COPY_NAMES.__contains__)

    @cached_property
    def _mtia_sync(self) -> np.ndarray:
        return self._mtia & self._by_name(MTIA_SYNC_NAMES.__contains__)

    @cached_property
    def device_sync(self) -> np.ndarray:
        """Synchronisation on the device (waits, event records): device activity that computes nothing."""
        return self._by_category(DEVICE_SYNC_CATEGORIES) | self._mtia_sync

    @cached_property
    def allocator(self) -> np.ndarray:
        """DeepLink's tensor allocations: the host launch and the device range of each (not compute)."""
        recorded = self._by_category(KERNEL_CATEGORIES | RUNTIME_CATEGORIES)
        return (self._deeplink_kind == _DEEPLINK_ALLOCATOR) & recorded

    @cached_property
    def _deeplink_kind(self) -> np.ndarray:
        """Per slice, what its name says in DeepLink's naming (0 when nothing): see ``DEEPLINK_*``."""
        table = self.model.memo("deeplink_name_kinds", lambda: _deeplink_name_kinds(self.model.strings))
        return table[self.model.slices.name] if len(self.model.slices) else np.zeros(0, dtype=np.int8)

    @cached_property
    def _device_lane(self) -> np.ndarray:
        """On a device's lane: GPU tracks, and the "/device:..." processes of TensorFlow and JAX exports."""
        lanes = np.array([t.kind == "gpu" or bool(GENERIC_DEVICE_PROCESS.match(t.process_name))
                          for t in self.model.tracks], dtype=bool)
        return lanes[self.model.slices.track] if len(self.model.slices) else np.zeros(0, dtype=bool)

    @cached_property
    def _generic_kernel(self) -> np.ndarray:
        """A generic trace's ranges on device lanes (except lanes of enclosing ranges): its kernels, by name."""
        if self.model.framework != GENERIC or not len(self.model.slices):
            return np.zeros(len(self.model.slices), dtype=bool)
        enclosing = np.array([bool(GENERIC_ENCLOSING_LANE.match(t.thread_name)) for t in self.model.tracks], dtype=bool)
        return self._device_lane & ~enclosing[self.model.slices.track] & ~self.memcpy & ~self.memset

    @cached_property
    def _generic_operator(self) -> np.ndarray:
        """A generic trace's host ranges (not steps, runtime calls or Python frames): its operators, by name."""
        if self.model.framework != GENERIC or not len(self.model.slices):
            return np.zeros(len(self.model.slices), dtype=bool)
        return self.on_host & ~self._device_lane & ~self.runtime & ~self.step & ~self.python

    @cached_property
    def memcpy(self) -> np.ndarray:
        return self._by_category(MEMCPY_CATEGORIES) | self._mtia_copy

    @cached_property
    def memset(self) -> np.ndarray:
        return self._by_category(MEMSET_CATEGORIES)

    @cached_property
    def runtime(self) -> np.ndarray:
        return self._by_category(RUNTIME_CATEGORIES)

    @cached_property
    def host_op(self) -> np.ndarray:
        """Operators, annotations and Python frames on host threads."""
        return (self._by_category(HOST_OP_CATEGORIES) & self.on_host) | self._generic_operator

    @cached_property
    def operator(self) -> np.ndarray:
        """Framework operators (``cpu_op``; ``Operator`` in older traces), not steps or frames."""
        annotation = self._by_name(lambda s: bool(ANNOTATION_NAME.match(s)))
        return (self._by_category(OPERATOR_CATEGORIES) & self.on_host & ~annotation) | self._generic_operator

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
    def collective_range(self) -> np.ndarray:
        """Host ranges of collectives themselves: named as one (``COLLECTIVE_OP_NAME``) or carrying a collective's
        arguments. Not what they enclose: a range may outlive its collective and hold a model's forward pass."""
        own = self._by_name(lambda s: bool(COLLECTIVE_OP_NAME.match(s))) & self.host_op
        return own | ((self.model.slices.collective >= 0) & self.host_op)

    @cached_property
    def collective_op(self) -> np.ndarray:
        """Host ranges of collectives, and everything nested inside one."""
        return self.collective_range | has_ancestor(self.model.slices, self.collective_range)

    @cached_property
    def collective_kernel(self) -> np.ndarray:
        """Device activities of collectives: by kernel name, naming their collective (Ascend's communication
        tasks, ingest/mindspore/ascend_layers.py), or launched by a collective's own range (the operator the
        launch is linked to is the collective range itself, not an operator nested inside one: an annotation
        named like a collective that encloses a forward pass does not make its kernels communication)."""
        by_name = self._by_name(lambda s: bool(COLLECTIVE_KERNEL_NAME.match(s))) & self.device_activity
        by_name |= (self.model.slices.collective >= 0) & self.device_activity
        op = self.model.links.op
        by_op = np.zeros(len(op), dtype=bool)
        has_op = op >= 0
        by_op[has_op] = self.collective_range[op[has_op]]
        return (by_name | by_op) & self.kernel

    @cached_property
    def _itemised_collective(self) -> np.ndarray:
        """Collective kernels of a device whose streams also show the collective's own tasks (an Ascend HCCL operator
        with its notify waits, copies and reductions on the Ascend Hardware streams)."""
        tasks = self.collective_task
        if not tasks.any():
            return np.zeros(len(self.model.slices), dtype=bool)
        devices = np.unique(self.model.slices.device[tasks])
        return self.collective_kernel & np.isin(self.model.slices.device, devices)

    @cached_property
    def collective_task(self) -> np.ndarray:
        """A collective's own tasks on the device's streams (Ascend Hardware lanes; not the HCCL layer's planes,
        which repeat them)."""
        hardware = np.array([t.kind == "gpu" and t.process_name.startswith(ASCEND_HARDWARE_PROCESS)
                             for t in self.model.tracks], dtype=bool)
        on_hardware = hardware[self.model.slices.track] if len(self.model.slices) else np.zeros(0, dtype=bool)
        return self._by_category(frozenset({COLLECTIVE_TASK_CATEGORY})) & on_hardware

    @cached_property
    def busy_kernel(self) -> np.ndarray:
        """Kernels as the device's busy time counts them: a collective whose own tasks the device's streams show
        counts through those of its tasks that do not wait (copies, reductions), not over its whole span, most of
        which its notify waits may take."""
        active_tasks = self.collective_task & ~self._by_name(lambda s: bool(WAIT_TASK_NAME.match(s)))
        return (self.kernel & ~self._itemised_collective) | active_tasks

    @cached_property
    def busy_work(self) -> np.ndarray:
        """Device work as the device's busy time counts it: ``busy_kernel``, copies and memsets."""
        return self.busy_kernel | self.memcpy | self.memset

    @cached_property
    def tensor_core_kernel(self) -> np.ndarray:
        return self._by_name(is_tensor_core_kernel) & self.kernel



_OPERATOR_INSTANCE = re.compile(r"-op\d+$")


def kernel_group_name(name: str) -> str:
    """The kernel table's row for a kernel name: the name itself, except for the instances of one operator that
    Ascend's graph mode names apart (``Conv2D-op292``, ``Default/network/conv1-Conv2d/Conv2D-op12``): their
    operator type (``Conv2D``), one row as MindSpore's own operator statistics count them."""
    return operator_type(name) if _OPERATOR_INSTANCE.search(name) else name
