"""Hand-made PyTorch allocator memory snapshots, built from the format's facts (no GPU was lent to record real ones).

``SnapshotSimulator`` plays a small CUDA caching allocator (torch's ``c10/cuda/CUDACachingAllocator.cpp`` rules,
simplified: sizes rounded up to 512 bytes; requests up to 1 MB from 2 MB small segments, larger ones from large
segments of 20 MB (up to 10 MB) or of the request rounded to 2 MB; best fit within a stream's pool; a freed block
merged with its free neighbours; ``empty_cache`` returns fully free segments; an out-of-memory ``oom`` entry when
the device's capacity is exceeded, after freeing cached segments once; expandable segments grow one segment per
stream and pool by ``segment_map`` of 2/20 MB pages and shrink by ``segment_unmap``) and records what torch records:

* ``device_traces[device]``: entries ``alloc`` (the block's address, the *requested* size), ``free_requested`` and
  ``free_completed`` (a block used on another stream stays ``active_pending_free`` until its events complete),
  ``segment_alloc``/``segment_free``/``segment_map``/``segment_unmap`` (the segment's address and size), ``oom``
  (``device_free`` instead of an address, ``size`` the request), ``snapshot`` (size: active bytes when taken),
  each with ``stream``, ``time_us`` (µs since the epoch), ``frames`` (innermost first: C++ frames of the allocator
  and the operator, then Python frames of the user's model and of torch), ``compile_context`` and ``user_metadata``;
  the history is a ring buffer of ``max_entries`` (the oldest entries are dropped, as torch's are);
* ``segments``: the allocator's state at the end (``device``, ``address``, ``total_size``, ``allocated_size``,
  ``active_size``, ``requested_size``, ``stream``, ``segment_type``, ``segment_pool_id``, ``is_expandable``,
  ``frames``, and ``blocks`` with ``address``, ``size``, ``requested_size``, ``state``, ``frames``);
* ``allocator_settings`` (torch's keys) and ``external_annotations`` (``record_function`` ranges: ``name``,
  ``stage`` START/END, ``device``, ``time_us``).

Frame dicts are shared objects (as torch's ``py_symbolize`` makes them), so ``pickle.dump`` memoizes them; a free
shares its allocation's frame list object when ``share_free_frames``. ``python tests/snapshot_gen.py --entries N
out.pickle`` writes a training-loop snapshot of about N entries (the benchmark's).
"""

from __future__ import annotations

import argparse
import pickle
import random
import struct
from dataclasses import dataclass, field
from typing import Any, Optional

KB, MB, GB = 1 << 10, 1 << 20, 1 << 30
SMALL_SEGMENT = 2 * MB
LARGE_SEGMENT = 20 * MB
BASE_ADDRESS = 0x7F0000000000
EPOCH_US = 1_760_000_000_000_000


def round_size(size: int) -> int:
    return 512 if size < 512 else 512 * -(-size // 512)


def segment_size_for(size: int) -> int:
    if size <= MB:
        return SMALL_SEGMENT
    if size < 10 * MB:
        return LARGE_SEGMENT
    return 2 * MB * -(-size // (2 * MB))


def frame(filename: str, line: int, name: str) -> dict[str, Any]:
    return {"name": name, "filename": filename, "line": line}


@dataclass
class Block:
    address: int
    size: int
    requested: int = 0
    allocated: bool = False
    pending: bool = False  # freed on the allocating stream but used on another: waiting for its events
    frames: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Segment:
    address: int
    size: int
    stream: int
    small: bool
    expandable: bool
    blocks: list[Block]
    frames: list[dict[str, Any]]


class OutOfMemory(Exception):
    pass


class SnapshotSimulator:
    """A CUDA caching allocator of one device that records a snapshot (see the module docstring)."""

    def __init__(self, capacity: int = 16 * GB, max_entries: Optional[int] = None, expandable: bool = False,
                 device: int = 0, devices: int = 1, seed: int = 0, share_free_frames: bool = False,
                 annotations: bool = True, times: bool = True) -> None:
        self.capacity = capacity
        self.max_entries = max_entries
        self.expandable = expandable
        self.device = device
        self.devices = devices
        self.random = random.Random(seed)
        self.share_free_frames = share_free_frames
        self.times = times
        self.segments: list[Segment] = []
        self.trace: list[dict[str, Any]] = []
        self.dropped = 0
        self.annotations: list[dict[str, Any]] = [] if annotations else None  # type: ignore[assignment]
        self.now = EPOCH_US
        self.next_address = BASE_ADDRESS
        self.metadata = ""
        self.compile_context = "N/A"
        self._frames: dict[tuple[str, int, str], dict[str, Any]] = {}

    # --- frames ---------------------------------------------------------------------------------------

    def shared_frame(self, filename: str, line: int, name: str) -> dict[str, Any]:
        key = (filename, line, name)
        found = self._frames.get(key)
        if found is None:
            found = self._frames[key] = frame(filename, line, name)
        return found

    def stack(self, user: list[tuple[str, int, str]], op: str = "aten::empty") -> list[dict[str, Any]]:
        """Frames innermost first: the allocator's and the operator's C++ frames, then the user's Python frames
        (innermost first) with torch's module plumbing between them, then the script's main."""
        name = op.split("::")[-1]
        # What stacks="all" records under an operator (torch 2.x): the allocator, the tensor's creation, the
        # dispatcher's redispatch chain, the kernel, autograd's VariableType and the Python binding.
        cpp = [
            ("/pytorch/c10/cuda/CUDACachingAllocator.cpp", 1408, "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)"),
            ("/pytorch/c10/cuda/CUDACachingAllocator.cpp", 3820, "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate(unsigned long)"),
            ("/pytorch/c10/core/StorageImpl.h", 55, "c10::StorageImpl::StorageImpl(c10::StorageImpl::use_byte_size_t, c10::SymInt const&, c10::Allocator*, bool)"),
            ("/pytorch/aten/src/ATen/EmptyTensor.cpp", 199, "at::detail::empty_generic(c10::ArrayRef<long>, c10::Allocator*, c10::DispatchKeySet, c10::ScalarType, std::optional<c10::MemoryFormat>)"),
            ("/pytorch/aten/src/ATen/cuda/EmptyTensor.cpp", 22, "at::detail::empty_cuda(c10::ArrayRef<long>, c10::ScalarType, std::optional<c10::Device>, std::optional<c10::MemoryFormat>)"),
            ("/pytorch/build/aten/src/ATen/RegisterCUDA.cpp", 1034, "at::(anonymous namespace)::create_out(c10::ArrayRef<long>, c10::ArrayRef<long>, c10::TensorOptions const&)"),
            ("/pytorch/build/aten/src/ATen/RegisterCUDA.cpp", 2077, f"at::(anonymous namespace)::wrapper_CUDA_{name}(at::Tensor const&, at::Tensor const&)"),
            ("/pytorch/aten/src/ATen/core/boxing/impl/WrapFunctionIntoFunctor.h", 13, "c10::impl::wrap_kernel_functor_unboxed_<...>::call(c10::OperatorKernel*, c10::DispatchKeySet, at::Tensor const&, at::Tensor const&)"),
            ("/pytorch/build/aten/src/ATen/Operators_4.cpp", 4109, f"at::_ops::{name}::redispatch(c10::DispatchKeySet, at::Tensor const&, at::Tensor const&)"),
            ("/pytorch/torch/csrc/autograd/generated/VariableType_4.cpp", 11563, f"torch::autograd::VariableType::(anonymous namespace)::{name}(c10::DispatchKeySet, at::Tensor const&, at::Tensor const&)"),
            ("/pytorch/aten/src/ATen/core/boxing/impl/WrapFunctionIntoFunctor.h", 13, "c10::impl::wrap_kernel_functor_unboxed_<...>::call(c10::OperatorKernel*, c10::DispatchKeySet, at::Tensor const&, at::Tensor const&)"),
            ("/pytorch/build/aten/src/ATen/Operators_4.cpp", 4102, f"at::_ops::{name}::call(at::Tensor const&, at::Tensor const&)"),
            ("/pytorch/torch/csrc/autograd/generated/python_torch_functions_2.cpp", 8713, f"torch::autograd::THPVariable_{name}(_object*, _object*, _object*)"),
            ("/usr/local/src/conda/python-3.11.9/Objects/methodobject.c", 368, "cfunction_call"),
            ("/usr/local/src/conda/python-3.11.9/Python/ceval.c", 5203, "_PyEval_EvalFrameDefault"),
        ]
        frames = [self.shared_frame(*f) for f in cpp]
        for i, (filename, line, name) in enumerate(user):
            frames.append(self.shared_frame(filename, line, name))
            if i + 1 < len(user):
                frames.append(self.shared_frame("/usr/lib/python3.11/site-packages/torch/nn/modules/module.py",
                                                1786, "_call_impl"))
        frames.append(self.shared_frame("/home/user/project/train.py", 88, "<module>"))
        return frames

    # --- recording ----------------------------------------------------------------------------------

    def tick(self, microseconds: int = 1) -> None:
        self.now += microseconds

    def record(self, action: str, addr: int, size: int, stream: int, frames: list[dict[str, Any]]) -> None:
        entry: dict[str, Any] = {"action": action}
        entry["device_free" if action == "oom" else "addr"] = addr
        entry["size"] = size
        entry["stream"] = stream
        if self.times:
            entry["time_us"] = self.now
        entry["compile_context"] = self.compile_context
        entry["user_metadata"] = self.metadata
        entry["frames"] = frames
        self.trace.append(entry)
        if self.max_entries is not None and len(self.trace) > 2 * self.max_entries:
            self.dropped += len(self.trace) - self.max_entries
            del self.trace[:len(self.trace) - self.max_entries]

    def annotate(self, name: str, stage: str) -> None:
        if self.annotations is not None:
            self.annotations.append({"name": name, "stage": stage, "device": self.device, "time_us": self.now})

    # --- the allocator ------------------------------------------------------------------------------

    def reserved(self) -> int:
        return sum(s.size for s in self.segments)

    def _new_address(self, size: int) -> int:
        address = self.next_address
        self.next_address += -(-size // SMALL_SEGMENT) * SMALL_SEGMENT + SMALL_SEGMENT
        return address

    def _find_block(self, rounded: int, stream: int, small: bool) -> Optional[tuple[Segment, int]]:
        best: Optional[tuple[Segment, int]] = None
        for segment in self.segments:
            if segment.stream != stream or segment.small != small:
                continue
            for index, block in enumerate(segment.blocks):
                if not block.allocated and not block.pending and block.size >= rounded:
                    if best is None or block.size < best[0].blocks[best[1]].size:
                        best = (segment, index)
        return best

    def _grow(self, rounded: int, stream: int, small: bool, frames: list[dict[str, Any]]) -> tuple[Segment, int]:
        if self.expandable:
            page = SMALL_SEGMENT if small else LARGE_SEGMENT
            segment = next((s for s in self.segments if s.stream == stream and s.small == small and s.expandable),
                           None)
            last_free = segment.blocks[-1].size if segment and not segment.blocks[-1].allocated \
                and not segment.blocks[-1].pending else 0
            need = -(-(rounded - last_free) // page) * page
            if self.reserved() + need > self.capacity:
                raise OutOfMemory
            if segment is None:
                segment = Segment(self._new_address(64 * GB), 0, stream, small, True, [], frames)
                self.segments.append(segment)
            self.record("segment_map", segment.address + segment.size, need, stream, frames)
            segment.size += need
            if segment.blocks and not segment.blocks[-1].allocated and not segment.blocks[-1].pending:
                segment.blocks[-1].size += need
            else:
                segment.blocks.append(Block(segment.address + segment.size - need, need))
            return segment, len(segment.blocks) - 1
        size = segment_size_for(rounded)
        if self.reserved() + size > self.capacity:
            raise OutOfMemory
        segment = Segment(self._new_address(size), size, stream, small, False, [], frames)
        segment.blocks.append(Block(segment.address, size))
        self.segments.append(segment)
        self.record("segment_alloc", segment.address, size, stream, frames)
        return segment, 0

    def empty_cache(self) -> None:
        """cudaFree every segment with no block in use (expandable: unmap whole free pages at the end)."""
        for segment in list(self.segments):
            if segment.expandable:
                page = SMALL_SEGMENT if segment.small else LARGE_SEGMENT
                last = segment.blocks[-1] if segment.blocks else None
                if last is not None and not last.allocated and not last.pending and last.size >= page:
                    free_pages = last.size // page * page
                    end = segment.address + segment.size
                    self.record("segment_unmap", end - free_pages, free_pages, segment.stream, [])
                    segment.size -= free_pages
                    last.size -= free_pages
                    if last.size == 0:
                        segment.blocks.pop()
                    if segment.size == 0:
                        self.segments.remove(segment)
                continue
            if all(not b.allocated and not b.pending for b in segment.blocks):
                self.record("segment_free", segment.address, segment.size, segment.stream, [])
                self.segments.remove(segment)

    def malloc(self, size: int, frames: list[dict[str, Any]], stream: int = 0) -> int:
        rounded = round_size(size)
        small = rounded <= MB
        found = self._find_block(rounded, stream, small)
        if found is None:
            try:
                found = self._grow(rounded, stream, small, frames)
            except OutOfMemory:
                self.empty_cache()
                try:
                    found = self._grow(rounded, stream, small, frames)
                except OutOfMemory:
                    self.record("oom", self.capacity - self.reserved(), size, stream, frames)
                    raise
        segment, index = found
        block = segment.blocks[index]
        if block.size - rounded >= 512:
            rest = Block(block.address + rounded, block.size - rounded)
            block.size = rounded
            segment.blocks.insert(index + 1, rest)
        block.allocated, block.requested, block.frames = True, size, frames
        self.record("alloc", block.address, size, stream, frames)
        return block.address

    def _locate(self, address: int) -> tuple[Segment, int]:
        for segment in self.segments:
            if segment.address <= address < segment.address + segment.size:
                for index, block in enumerate(segment.blocks):
                    if block.address == address:
                        return segment, index
        raise KeyError(address)

    def free(self, address: int, frames: Optional[list[dict[str, Any]]] = None, other_stream: bool = False) -> None:
        """Free a block; ``other_stream``: it was used on another stream, so it stays pending until ``sync``."""
        segment, index = self._locate(address)
        block = segment.blocks[index]
        frames = block.frames if frames is None and self.share_free_frames else (frames or block.frames[:])
        self.record("free_requested", block.address, block.requested, segment.stream, frames)
        block.allocated = False
        if other_stream:
            block.pending = True
            return
        self._complete(segment, index, frames)

    def _complete(self, segment: Segment, index: int, frames: list[dict[str, Any]]) -> None:
        block = segment.blocks[index]
        self.record("free_completed", block.address, block.requested, segment.stream, frames)
        block.pending, block.requested, block.frames = False, 0, []
        # Merge with free neighbours.
        if index + 1 < len(segment.blocks) and self._is_free(segment.blocks[index + 1]):
            block.size += segment.blocks.pop(index + 1).size
        if index > 0 and self._is_free(segment.blocks[index - 1]):
            segment.blocks[index - 1].size += segment.blocks.pop(index).size

    @staticmethod
    def _is_free(block: Block) -> bool:
        return not block.allocated and not block.pending

    def sync(self) -> None:
        """The other streams' events completed: pending frees complete."""
        for segment in self.segments:
            index = 0
            while index < len(segment.blocks):
                block = segment.blocks[index]
                if block.pending:
                    self._complete(segment, index, block.frames[:] if not self.share_free_frames else block.frames)
                    continue  # the block may have merged: look at this index again
                index += 1

    # --- the snapshot -------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        segments = []
        total_active = 0
        for segment in sorted(self.segments, key=lambda s: s.address):
            blocks = []
            allocated = active = requested = 0
            for block in segment.blocks:
                state = "active_allocated" if block.allocated else "active_pending_free" if block.pending else \
                    "inactive"
                blocks.append({"address": block.address, "size": block.size,
                               "requested_size": block.requested if state != "inactive" else 0,
                               "state": state, "frames": block.frames if state != "inactive" else []})
                allocated += block.size if block.allocated else 0
                if state != "inactive":
                    active += block.size
                    requested += block.requested
            total_active += active
            segments.append({
                "device": self.device, "address": segment.address, "total_size": segment.size,
                "allocated_size": allocated, "active_size": active, "requested_size": requested,
                "stream": segment.stream, "segment_type": "small" if segment.small else "large",
                "segment_pool_id": (0, 0), "is_expandable": segment.expandable, "frames": segment.frames,
                "blocks": blocks,
            })
        self.record("snapshot", 0, total_active, 0, [])
        trace = self.trace[-self.max_entries:] if self.max_entries is not None else self.trace
        device_traces: list[list[dict[str, Any]]] = [[] for _ in range(self.devices)]
        device_traces[self.device] = trace
        snapshot: dict[str, Any] = {
            "segments": segments,
            "device_traces": device_traces,
            "allocator_settings": {
                "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True" if self.expandable else "",
                "max_split_size": -1, "garbage_collection_threshold": 0.0, "expandable_segments": self.expandable,
                "pinned_num_register_threads": 1, "release_lock_on_cudamalloc": False,
                "pinned_use_cuda_host_register": False, "roundup_power2_divisions": {"1": 0, "2": 0, "4": 0},
            },
        }
        if self.annotations is not None:
            snapshot["external_annotations"] = self.annotations
        return snapshot


# --- a training loop -------------------------------------------------------------------------------------------

LAYERS = [("/home/user/project/model.py", 40 + 10 * i, f"Block{i}.forward") for i in range(6)]


def training_snapshot(steps: int = 3, hidden: int = 4096, batch: int = 64, max_entries: Optional[int] = None,
                      expandable: bool = False, capacity: int = 16 * GB, seed: int = 0, oom_at_end: bool = False,
                      pending_frees: bool = True, share_free_frames: bool = True,
                      stop_after_forward: bool = False) -> dict[str, Any]:
    """A model's parameters allocated first (before the recorded history when ``max_entries`` cuts it), then
    ``steps`` training steps: activations per layer in forward, gradients in backward (some freed on a side stream:
    pending until synchronised), optimizer state at the first step, activations freed; ``record_function`` ranges
    around each phase; ``oom_at_end`` asks for more than the device holds after the last step;
    ``stop_after_forward`` takes the snapshot after the last step's forward (its activations alive)."""
    sim = SnapshotSimulator(capacity=capacity, max_entries=max_entries, expandable=expandable, seed=seed,
                            share_free_frames=share_free_frames)
    rnd = sim.random
    params = []
    for filename, line, name in LAYERS:
        frames = sim.stack([("/home/user/project/model.py", line - 30, name.replace(".forward", ".__init__"))],
                           "aten::empty")
        params.append(sim.malloc(hidden * hidden * 4, frames))
        params.append(sim.malloc(hidden * 4, frames))
        sim.tick(20)
    optimizer: list[int] = []
    grads: dict[int, int] = {}
    for step in range(steps):
        sim.metadata = f"step={step}"
        sim.annotate("## forward ##", "START")
        activations = []
        for depth, (filename, line, name) in enumerate(LAYERS):
            user = [(filename, line + k, name) for k in range(1)] + \
                [("/home/user/project/model.py", 120, "Model.forward"), ("/home/user/project/train.py", 60, "step")]
            for k in range(3):
                sim.tick(rnd.randrange(1, 30))
                size = batch * hidden * 4 * (k + 1) + rnd.randrange(0, 3) * 100
                activations.append(sim.malloc(size, sim.stack(user[:1 + (k % 3)], ("aten::mm", "aten::gelu",
                                                                                     "aten::add")[k])))
            # a temporary freed at once
            tmp = sim.malloc(rnd.randrange(1, 600) * KB, sim.stack(user[:1], "aten::softmax"))
            sim.tick(5)
            sim.free(tmp)
        sim.annotate("## forward ##", "END")
        if stop_after_forward and step == steps - 1:
            break
        sim.annotate("## backward ##", "START")
        for depth in reversed(range(len(LAYERS))):
            filename, line, name = LAYERS[depth]
            autograd = [("/usr/lib/python3.11/site-packages/torch/autograd/graph.py", 825, "_engine_run_backward"),
                        ("/home/user/project/train.py", 64, "step")]
            for p in (2 * depth, 2 * depth + 1):
                sim.tick(rnd.randrange(1, 40))
                if p not in grads:
                    grads[p] = sim.malloc(hidden * (hidden if p % 2 == 0 else 1) * 4,
                                          sim.stack(autograd, "aten::mm"))
            for _ in range(3):
                sim.tick(rnd.randrange(1, 10))
                sim.free(activations.pop(), other_stream=pending_frees and rnd.random() < 0.2)
        sim.sync()
        sim.annotate("## backward ##", "END")
        sim.annotate("## optimizer ##", "START")
        if not optimizer:
            opt = [("/usr/lib/python3.11/site-packages/torch/optim/adam.py", 170, "_init_group"),
                   ("/home/user/project/train.py", 70, "step")]
            for p in range(len(params)):
                sim.tick(3)
                optimizer.append(sim.malloc(hidden * (hidden if p % 2 == 0 else 1) * 4, sim.stack(opt, "aten::zeros_like")))
                optimizer.append(sim.malloc(hidden * (hidden if p % 2 == 0 else 1) * 4, sim.stack(opt, "aten::zeros_like")))
        sim.annotate("## optimizer ##", "END")
        for p in list(grads):  # zero_grad(set_to_none=True)
            sim.tick(2)
            sim.free(grads.pop(p))
        sim.tick(100)
    sim.metadata = ""
    if oom_at_end:
        try:
            sim.malloc(capacity, sim.stack([("/home/user/project/train.py", 75, "step")], "aten::empty"))
        except OutOfMemory:
            pass
    return sim.snapshot()


def benchmark_snapshot(entries: int, seed: int = 0, trace: Any = None) -> dict[str, Any]:
    """About ``entries`` trace entries of a long-running job: training steps over a bounded live set. ``trace``: where
    the entries go (default a list, in the snapshot returned)."""
    sim = SnapshotSimulator(capacity=80 * GB, seed=seed, share_free_frames=False)
    if trace is not None:
        sim.trace = trace
    rnd = sim.random
    sites = [sim.stack([(f"/home/user/project/layers/l{i % 40}.py", 10 + i, f"Layer{i % 40}.forward"),
                        ("/home/user/project/model.py", 120 + i % 7, "Model.forward"),
                        ("/home/user/project/train.py", 60, "step")], ("aten::mm", "aten::gelu", "aten::add")[i % 3])
             for i in range(400)]
    live: list[int] = []
    step = 0
    while len(sim.trace) < entries:
        sim.metadata = f"step={step}"
        sim.annotate("## forward ##", "START")
        for _ in range(2000):
            sim.tick(rnd.randrange(1, 20))
            live.append(sim.malloc(rnd.choice((512, 4096, 65536, 1 << 20, 3 << 20, 123_456)), list(rnd.choice(sites))))
        sim.annotate("## forward ##", "END")
        rnd.shuffle(live)
        while len(live) > 500:
            sim.tick(rnd.randrange(1, 20))
            sim.free(live.pop(), frames=list(rnd.choice(sites)))
        step += 1
        if step % 10 == 0:
            sim.empty_cache()
    return sim.snapshot()


def moved_to(snapshot: dict[str, Any], first_us: int) -> dict[str, Any]:
    """The snapshot with its times (entries' and annotations') shifted so its first entry lies at ``first_us`` µs
    since the epoch: lined up with a trace recorded then (shifted in place; returned for convenience)."""
    entries = [e for trace in snapshot["device_traces"] for e in trace]
    shift = first_us - min(e["time_us"] for e in entries)
    for item in [*entries, *(snapshot.get("external_annotations") or [])]:
        item["time_us"] += shift
    return snapshot


def trace_clock(path: str) -> tuple[int, float]:
    """A Kineto trace's ``baseTimeNanoseconds`` and its first event's time (µs in its own time base): a snapshot
    entry at ``base // 1000 + first`` µs since the epoch lies at the trace's first event."""
    import gzip
    import json

    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        trace = json.load(f)
    return trace["baseTimeNanoseconds"], min(e["ts"] for e in trace["traceEvents"] if "ts" in e)


class StreamedPickle:
    """Plain data (dict, list, tuple, str, int, float, bool, None) written as pickle protocol 4 opcodes while it is
    made, for snapshots too big to hold in memory: strings are memoized by value and dicts by identity (the shared
    frames, as ``pickle.dump`` shares them), other objects are written whole; no framing (a pickle reader takes
    frames as optional hints). ``open_list``/``append``/``close_list`` write one list a batch of 1000 at a time."""

    def __init__(self, out: Any) -> None:
        self.out = out
        self.memo: dict[Any, int] = {}
        self.kept: list[Any] = []  # memoized dicts stay alive: their ids are memo keys
        self.batch: list[Any] = []
        out.write(b"\x80\x04")

    def _memoize(self, key: Any) -> None:
        self.memo[key] = len(self.memo)
        self.out.write(b"\x94")

    def _get(self, index: int) -> None:
        self.out.write(b"h" + bytes([index]) if index < 256 else b"j" + index.to_bytes(4, "little"))

    def value(self, value: Any, shared: bool = True) -> None:  # noqa: C901 - one branch per type
        """``shared``: memoize a dict (False for a trace entry: memoizing every entry would keep them all)."""
        write = self.out.write
        if value is None:
            write(b"N")
        elif value is True or value is False:
            write(b"\x88" if value else b"\x89")
        elif isinstance(value, int):
            if 0 <= value < 256:
                write(b"K" + bytes([value]))
            elif 0 <= value < 65536:
                write(b"M" + value.to_bytes(2, "little"))
            elif -(1 << 31) <= value < (1 << 31):
                write(b"J" + value.to_bytes(4, "little", signed=True))
            else:
                data = value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True)
                write(b"\x8a" + bytes([len(data)]) + data)
        elif isinstance(value, float):
            write(b"G" + struct.pack(">d", value))
        elif isinstance(value, str):
            index = self.memo.get(("s", value))
            if index is not None:
                self._get(index)
                return
            data = value.encode("utf-8", "surrogatepass")
            write((b"\x8c" + bytes([len(data)]) if len(data) < 256 else b"X" + len(data).to_bytes(4, "little")) + data)
            self._memoize(("s", value))
        elif isinstance(value, dict):
            index = self.memo.get(("d", id(value)))
            if index is not None:
                self._get(index)
                return
            write(b"}")
            if shared:
                self._memoize(("d", id(value)))
                self.kept.append(value)
            if value:
                write(b"(")
                for key, item in value.items():
                    self.value(key)
                    self.value(item)
                write(b"u")
        elif isinstance(value, list):
            write(b"]")
            if value:
                write(b"(")
                for item in value:
                    self.value(item)
                write(b"e")
        elif isinstance(value, tuple):
            write(b"(")
            for item in value:
                self.value(item)
            write(b"t")
        else:
            raise TypeError(f"not plain data: {type(value).__name__}")

    def open_list(self) -> None:
        self.out.write(b"]")

    def append(self, item: Any) -> None:
        self.batch.append(item)
        if len(self.batch) == 1000:
            self._flush()

    def _flush(self) -> None:
        if self.batch:
            self.out.write(b"(")
            for item in self.batch:
                self.value(item, shared=False)
            self.out.write(b"e")
            self.batch = []

    def close_list(self) -> None:
        self._flush()


class _StreamedTrace:
    """A simulator's ``trace`` that writes each entry into an open list of a ``StreamedPickle`` instead of keeping it."""

    def __init__(self, stream: StreamedPickle) -> None:
        self.stream = stream
        self.count = 0

    def append(self, entry: dict[str, Any]) -> None:
        self.stream.append(entry)
        self.count += 1

    def __len__(self) -> int:
        return self.count


def write_benchmark_snapshot(path: str, entries: int, seed: int = 0) -> None:
    """``benchmark_snapshot(entries, seed)`` written while it is made (the same data; ``device_traces`` before
    ``segments`` in the top-level dict), so that snapshots of several GB need no more memory than the allocator's
    state: how the benchmark makes a 2 GB snapshot."""
    with open(path, "wb") as out:
        stream = StreamedPickle(out)
        out.write(b"}")
        stream._memoize(("top", 0))
        out.write(b"(")
        stream.value("device_traces")
        out.write(b"](")  # the list of devices, holding one: the streamed trace
        stream.open_list()
        trace = _StreamedTrace(stream)
        finished = benchmark_snapshot(entries, seed, trace=trace)
        stream.close_list()
        out.write(b"e")
        for key, value in finished.items():
            if key != "device_traces":
                stream.value(key)
                stream.value(value)
        out.write(b"u.")


# The hand-made snapshots of tests/data/memory_snapshots (see its PROVENANCE.md): file name -> how it is made.
TEST_DATA = {
    # Three steps, the snapshot taken after the third forward; a history of 200 entries (the oldest dropped):
    # frees of allocations from before the history, blocks allocated before it and never freed.
    "training_ring_buffer.pickle": lambda: training_snapshot(steps=3, max_entries=200, stop_after_forward=True),
    # Expandable segments (segment_map/segment_unmap), then a request larger than the device: an oom entry.
    "expandable_oom.pickle": lambda: training_snapshot(steps=2, expandable=True, capacity=3 * GB, oom_at_end=True),
}


def write_test_data(folder: str) -> None:
    """Write ``TEST_DATA`` into ``folder`` (as torch's _dump_snapshot would: pickle's default protocol)."""
    import os

    for name, make in TEST_DATA.items():
        with open(os.path.join(folder, name), "wb") as f:
            pickle.dump(make(), f)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the snapshot to write, or with --test-data the folder")
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--test-data", action="store_true", help="write the snapshots of tests/data/memory_snapshots")
    args = parser.parse_args()
    if args.test_data:
        write_test_data(args.out)
        return
    with open(args.out, "wb") as f:
        pickle.dump(benchmark_snapshot(args.entries), f, protocol=pickle.DEFAULT_PROTOCOL)


if __name__ == "__main__":
    main()
