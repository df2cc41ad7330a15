"""What each device of a span is: its name, what kind of device it is, who made it, and what it is called in
the views ("GPU 0", "Ascend 1", "MTIA 17").

One place for the naming, so that the overview's device cards, the trace viewer's device groups, the memory
view and the Scalars tags say the same thing. Sources, in order:

* the trace's ``deviceProperties`` (Kineto: ``name``, ``totalGlobalMem``, ``computeMajor``/``computeMinor``,
  ``numSms``; ROCm builds of Kineto write the same fields; the Ascend readers write ``{"id", "name"}``). A process
  that sees one device lists it by the index it sees (``id`` 0, as its ``[memory]`` events say too), while the lanes
  of its work may carry the device's index on the machine (an MI300X job on device 2 of 8 with
  ``HIP_VISIBLE_DEVICES=2``): one listed device and one device with work are the same device, called by the lanes'
  index (``same_device_ids``);
* the vendor's own labels of its device lanes: MTIA's ``process_name`` "MTIA 17", an Ascend timeline's
  "Ascend Hardware" (``ingest/mindspore/ascend_layers.py``) or "Ascend 1" (``ingest/mindspore/timeline.py``), DeepLink's
  devices. A device whose lanes name no accelerator is a GPU: Kineto's CUDA and ROCm lanes are GPUs.

Only a GPU is called "GPU"; another accelerator is called by its family ("Ascend", "MTIA"...), and a view that
must speak of all devices at once says "device".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ...model.trace_model import TraceModel

GPU = "GPU"
NVIDIA, AMD = "NVIDIA", "AMD"

# Accelerator families as their lanes or properties name them (word match, any case) → the name shown.
_FAMILIES = (
    (re.compile(r"(?i)\bascend\b"), "Ascend"),
    (re.compile(r"(?i)\bmtia\b"), "MTIA"),
    (re.compile(r"(?i)\bnpu\b"), "NPU"),
    (re.compile(r"(?i)\bmlu\b"), "MLU"),
    (re.compile(r"(?i)\bxpu\b"), "XPU"),
    (re.compile(r"(?i)\bhpu\b|\bgaudi\b"), "HPU"),
    (re.compile(r"(?i)\bdipu\b"), "DIPU"),
    (re.compile(r"(?i)\btpu\b"), "TPU"),
)
# GPU makers as their devices' names say (deviceProperties "name").
_AMD_NAME = re.compile(r"(?i)\bamd\b|\bradeon\b|\binstinct\b|\bmi\d{3}[a-z]*\b|\bgfx\d")
_NVIDIA_NAME = re.compile(
    r"(?i)\bnvidia\b|\btesla\b|\bgeforce\b|\bquadro\b|\btitan\b|\b[rg]tx\b|\bjetson\b|\b(?:[abhlv]|gh|gb)\d{2,3}\b")

# c10::DeviceType numbers, as [memory] events write them in "Device Type" (c10/core/DeviceType.h).
CPU_DEVICE_TYPE = 0
_CUDA_DEVICE_TYPE, _HIP_DEVICE_TYPE = 1, 6
GPU_MEMORY_DEVICE_TYPES = (_CUDA_DEVICE_TYPE, _HIP_DEVICE_TYPE)
_MEMORY_DEVICE_FAMILIES = {12: "XPU", 13: "MPS", 15: "HPU", 19: "MTIA"}
_PRIVATE_USE_DEVICE_TYPE = 20  # torch_npu, DeepLink...: named after the device's lanes when the trace has them


@dataclass(frozen=True)
class Device:
    id: int
    label: str  # "GPU 0", "Ascend 1": what the views call it
    kind: str  # "GPU", or the accelerator's family ("Ascend", "MTIA"...)
    name: str  # the device's own name (deviceProperties), else its label
    vendor: Optional[str]  # NVIDIA, AMD, or None when the trace does not say (or not a GPU)
    properties: dict[str, Any]

    @property
    def is_gpu(self) -> bool:
        return self.kind == GPU

    @property
    def tensor_cores_known(self) -> bool:
        """Whether kernel names can tell Tensor Core use: NVIDIA's naming, on a GPU not known to be another maker's."""
        return self.is_gpu and self.vendor in (NVIDIA, None)


def device_properties(model: TraceModel) -> dict[int, dict[str, Any]]:
    """The trace's ``deviceProperties`` by device id (entries without an integer id are left out)."""
    found: dict[int, dict[str, Any]] = {}
    for entry in model.metadata.get("deviceProperties") or []:
        if isinstance(entry, dict) and isinstance(entry.get("id"), int) and not isinstance(entry.get("id"), bool):
            found[entry["id"]] = entry
    return found


def same_device_ids(model: TraceModel) -> dict[int, int]:
    """Listed device id → the id of the device with work, where the trace names one device in two ways: exactly
    one device in ``deviceProperties`` and exactly one device whose lanes hold work, under different ids."""

    def find() -> dict[int, int]:
        listed = device_properties(model)
        working = {track.device for track in model.tracks if track.kind == "gpu" and track.device is not None}
        if len(listed) == 1 and len(working) == 1:
            (listed_id,), (working_id,) = listed, working
            if listed_id != working_id:
                return {listed_id: working_id}
        return {}

    aliases: dict[int, int] = model.memo(("device_aliases",), find)
    return aliases


def _properties_of(model: TraceModel, device_id: int) -> dict[str, Any]:
    listed = device_properties(model)
    if device_id in listed:
        return listed[device_id]
    for listed_id, working_id in same_device_ids(model).items():
        if working_id == device_id:
            return listed[listed_id]
    return {}


def _family(text: str) -> Optional[str]:
    for pattern, family in _FAMILIES:
        if pattern.search(text):
            return family
    return None


def _lane_family(model: TraceModel, device: int) -> Optional[str]:
    for track in model.tracks:
        if track.kind == "gpu" and track.device == device:
            family = _family(track.process_name)
            if family is not None:
                return family
    return None


def _vendor(kind: str, name: str) -> Optional[str]:
    if kind != GPU:
        return None
    if _AMD_NAME.search(name):
        return AMD
    if _NVIDIA_NAME.search(name):
        return NVIDIA
    return None


def device(model: TraceModel, device_id: int) -> Device:
    """What the trace says of device ``device_id``."""

    same = same_device_ids(model).get(device_id)
    if same is not None:
        return device(model, same)

    def describe() -> Device:
        properties = _properties_of(model, device_id)
        own_name = properties.get("name") if isinstance(properties.get("name"), str) else ""
        kind = _lane_family(model, device_id) or _family(own_name or "") or GPU
        label = f"{kind} {device_id}"
        return Device(id=device_id, label=label, kind=kind, name=own_name or label,
                      vendor=_vendor(kind, own_name or ""), properties=properties)

    return model.memo(("device", device_id), describe)


def device_label(model: TraceModel, device_id: int) -> str:
    """What the views call device ``device_id``: "GPU 0", "Ascend 1", "MTIA 17"."""
    return device(model, device_id).label


def memory_device(model: TraceModel, device_type: int, device_id: int) -> tuple[str, Optional[int]]:
    """The label and capacity (bytes, when the trace gives it) of the device of a ``[memory]`` event."""
    if device_type == CPU_DEVICE_TYPE:
        return "CPU", None
    if device_id < 0:
        return f"device type {device_type}", None
    if device_type in (*GPU_MEMORY_DEVICE_TYPES, _PRIVATE_USE_DEVICE_TYPE):
        described = device(model, device_id)
        if device_type == _PRIVATE_USE_DEVICE_TYPE and described.is_gpu:
            return f"device {device_id}", None  # a custom backend whose lanes say nothing of it
        capacity = described.properties.get("totalGlobalMem")
        return described.label, capacity if isinstance(capacity, int) and not isinstance(capacity, bool) else None
    family = _MEMORY_DEVICE_FAMILIES.get(device_type)
    return (f"{family} {device_id}" if family else f"device type {device_type} {device_id}"), None


def devices_of_rows(model: TraceModel, rows: np.ndarray) -> list[int]:
    """The devices that slice ``rows`` ran on: their ``device`` argument, else their lane's device."""
    ids = {int(d) for d in np.unique(model.slices.device[rows]) if d >= 0}
    lanes = np.unique(model.slices.track[rows]).tolist()
    ids |= {model.tracks[t].device for t in lanes if model.tracks[t].device is not None}
    return sorted(ids)


def devices_noun(model: TraceModel, device_ids: list[int]) -> str:
    """What to call these devices together: "GPU", one accelerator family ("Ascend"), else "device"."""
    kinds = {device(model, d).kind for d in device_ids}
    if not kinds:
        return GPU
    return kinds.pop() if len(kinds) == 1 else "device"
