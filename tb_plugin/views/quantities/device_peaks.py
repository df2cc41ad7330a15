"""Peak throughput of devices: dense FLOP/s per precision, memory bandwidth and links, from the vendors'
datasheets, chosen for a trace's device from its ``deviceProperties`` (name, SM or CU count, memory size).

Every figure is the vendor's dense peak (a datasheet that gives "with sparsity" figures gives twice the dense ones:
those are halved here, and said so in the entry's note). Matrix peaks (tensor cores, matrix cores) and vector peaks
(CUDA cores, vector ALUs) are kept apart where the vendor gives both: a matrix product is held against the matrix
peak of its precision, elementwise and reduction work against the vector peak (FP64 work against the FP64 vector
peak, all other vector work against the FP32 vector peak: 16-bit packed arithmetic can reach up to twice that, but
such work is bound by memory long before).

A device the table does not list, or lists without a figure a number needs, leaves that number absent with the
reason (``Resolved.reason``). A user file (``--profscope_device_peaks FILE``, the ``profscope`` commands'
``--device-peaks FILE``) adds devices or replaces figures (measured, achievable peaks), in JSON::

    {"devices": [
      {"match": "H100 80GB HBM3",           # regular expression searched in deviceProperties' name (any case)
       "sms": 132,                          # optional: only devices with this SM/CU count (numSms)
       "name": "H100 SXM (measured)",       # optional: what the page calls it
       "tflops": {"bf16": 720, "fp8": 1300},  # any of fp64, fp64_matrix, fp32, fp32_matrix, tf32, fp16, bf16,
                                            # fp8 (TFLOP/s), int8 (TOP/s)
       "memory_bandwidth_gbps": 3000,       # optional, GB/s (1e9 bytes per second)
       "host_link": "PCIe 5.0 x16",         # optional
       "peer_link_gbps": 900,               # optional, both directions together, GB/s
       "source": "measured with ..."}       # shown beside the figures
    ]}

A file entry that matches a device the table also lists replaces only the figures it gives.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Any, Mapping, Optional, Sequence

PRECISIONS = ("fp64", "fp64_matrix", "fp32", "fp32_matrix", "tf32", "fp16", "bf16", "fp8", "int8")
# PCIe bandwidth per lane and direction in GB/s (transfer rate times the encoding's efficiency: 128b/130b from
# 3.0, FLIT mode from 6.0), PCI-SIG's specifications.
PCIE_LANE_GBPS = {"3.0": 8 * 128 / 130 / 8, "4.0": 16 * 128 / 130 / 8, "5.0": 32 * 128 / 130 / 8,
                  "6.0": 64 * 242 / 256 / 8}
_PCIE = re.compile(r"^PCIe (\d\.\d) x(\d+)$")


@dataclass(frozen=True)
class DevicePeaks:
    """One device's peaks. ``tflops`` in TFLOP/s (int8: TOP/s); bandwidths in GB/s (1e9 bytes per second)."""

    name: str
    tflops: Mapping[str, float]
    memory_bandwidth_gbps: Optional[float]
    source: str
    host_link: Optional[str] = None  # "PCIe 4.0 x16"
    peer_link_gbps: Optional[float] = None  # NVLink / Infinity Fabric / HCCS, both directions together
    note: str = ""
    match: str = ""  # regular expression searched in deviceProperties' name
    sms: tuple[int, ...] = ()  # SM/CU counts the entry stands for (any when empty)
    memory_gb: tuple[float, float] = (0.0, math.inf)  # range of totalGlobalMem, GB
    by_properties: bool = False  # also chosen by SM count and memory when the name says nothing (AMD's
    # "AMD Radeon Graphics" under some ROCm releases)
    warp_size: Optional[int] = None

    def flops_per_second(self, precision: str, unit: str) -> Optional[float]:
        """Peak FLOP/s of ``unit`` ("matrix" or "vector") work in ``precision`` (fp64, fp32, tf32, fp16, bf16, fp8,
        int8, other), or None when the entry has no such figure."""
        if unit == "vector":
            key = "fp64" if precision == "fp64" else "fp32"
            value = self.tflops.get(key)
        elif precision in ("fp64", "fp32"):
            value = self.tflops.get(f"{precision}_matrix", self.tflops.get(precision))
        else:
            value = self.tflops.get(precision)
        return value * 1e12 if value else None

    @property
    def memory_bytes_per_second(self) -> Optional[float]:
        return self.memory_bandwidth_gbps * 1e9 if self.memory_bandwidth_gbps else None

    @property
    def host_link_bytes_per_second(self) -> Optional[float]:
        """One direction of the host link (PCIe), bytes per second."""
        m = _PCIE.match(self.host_link or "")
        if not m or m.group(1) not in PCIE_LANE_GBPS:
            return None
        return PCIE_LANE_GBPS[m.group(1)] * int(m.group(2)) * 1e9

    @property
    def peer_link_bytes_per_second(self) -> Optional[float]:
        """One direction of the peer links (half the vendor's both-directions figure), bytes per second."""
        return self.peer_link_gbps * 1e9 / 2 if self.peer_link_gbps else None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "tflops": dict(self.tflops), "memory_bandwidth_gbps": self.memory_bandwidth_gbps,
                "host_link": self.host_link, "peer_link_gbps": self.peer_link_gbps, "source": self.source,
                "note": self.note}


_NV_V100 = "NVIDIA Tesla V100 GPU Accelerator datasheet (images.nvidia.com/content/technologies/volta/pdf/" \
           "volta-v100-datasheet-update-us-1165301-r5.pdf)"
_NV_A100 = "NVIDIA A100 Tensor Core GPU datasheet (www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/" \
           "pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf)"
_NV_H100 = "NVIDIA H100 Tensor Core GPU datasheet (resources.nvidia.com/en-us-tensor-core/" \
           "nvidia-tensor-core-gpu-datasheet)"
_NV_H200 = "NVIDIA H200 Tensor Core GPU datasheet (nvdam.widen.net/s/nb5zzzsjdf/" \
           "hpc-datasheet-sc23-h200-datasheet-3002446)"
_NV_B200 = "NVIDIA HGX B200 specifications (www.nvidia.com/en-us/data-center/hgx/), 8-GPU figures divided by 8"
_NV_L4 = "NVIDIA L4 Tensor Core GPU datasheet (resources.nvidia.com/en-us-data-center-overview/l4-gpu-datasheet)"
_NV_L40S = "NVIDIA L40S GPU datasheet (resources.nvidia.com/en-us-l40s/l40s-datasheet-28413)"
_AMD_MI250 = "AMD Instinct MI250 accelerator datasheet (www.amd.com/en/products/accelerators/instinct/mi200/" \
             "mi250.html), package figures divided by its 2 GCDs"
_AMD_MI250X = "AMD Instinct MI250X accelerator datasheet (www.amd.com/en/products/accelerators/instinct/mi200/" \
              "mi250x.html), package figures divided by its 2 GCDs"
_AMD_MI300X = "AMD Instinct MI300X accelerator datasheet (www.amd.com/content/dam/amd/en/documents/" \
              "instinct-tech-docs/data-sheets/amd-instinct-mi300x-data-sheet.pdf)"
_AMD_MI325X = "AMD Instinct MI325X accelerator datasheet (www.amd.com/en/products/accelerators/instinct/mi300/" \
              "mi325x.html)"
_HALVED = "dense figures: half the datasheet's \"with sparsity\" tensor figures"
_GCD = "one GCD, which PyTorch sees as one device: half the package's figures"


def _peaks(name: str, match: str, source: str, memory: Optional[float], **kw: Any) -> DevicePeaks:
    tflops = {k: kw.pop(k) for k in PRECISIONS if k in kw}
    return DevicePeaks(name=name, tflops=tflops, memory_bandwidth_gbps=memory, source=source, match=match, **kw)


# Most specific entries first: the first entry whose name pattern matches (and whose SM count and memory range
# fit, where the trace gives them) is the device's.
TABLE: tuple[DevicePeaks, ...] = (
    _peaks("NVIDIA V100S PCIe", r"V100S", _NV_V100, 1134, fp64=8.2, fp32=16.4, fp16=130,
           host_link="PCIe 3.0 x16", sms=(80,)),
    _peaks("NVIDIA V100 PCIe", r"V100.*PCI", _NV_V100, 900, fp64=7.0, fp32=14.0, fp16=112,
           host_link="PCIe 3.0 x16", sms=(80,)),
    _peaks("NVIDIA V100 SXM2", r"V100", _NV_V100, 900, fp64=7.8, fp32=15.7, fp16=125, host_link="PCIe 3.0 x16",
           peer_link_gbps=300, sms=(80,), note="also the V100 of DGX Station (DGXS), clocked as the SXM2"),
    _peaks("NVIDIA A100 PCIe 80 GB", r"A100.*PCI", _NV_A100, 1935, fp64=9.7, fp64_matrix=19.5, fp32=19.5, tf32=156,
           fp16=312, bf16=312, int8=624, host_link="PCIe 4.0 x16", peer_link_gbps=600, sms=(108,),
           memory_gb=(60, 90), note=_HALVED),
    _peaks("NVIDIA A100 PCIe 40 GB", r"A100.*PCI", _NV_A100, 1555, fp64=9.7, fp64_matrix=19.5, fp32=19.5, tf32=156,
           fp16=312, bf16=312, int8=624, host_link="PCIe 4.0 x16", peer_link_gbps=600, sms=(108,),
           memory_gb=(0, 60), note=_HALVED),
    _peaks("NVIDIA A100 SXM 80 GB", r"A100", _NV_A100, 2039, fp64=9.7, fp64_matrix=19.5, fp32=19.5, tf32=156,
           fp16=312, bf16=312, int8=624, host_link="PCIe 4.0 x16", peer_link_gbps=600, sms=(108,),
           memory_gb=(60, 90), note=_HALVED),
    _peaks("NVIDIA A100 SXM 40 GB", r"A100", _NV_A100, 1555, fp64=9.7, fp64_matrix=19.5, fp32=19.5, tf32=156,
           fp16=312, bf16=312, int8=624, host_link="PCIe 4.0 x16", peer_link_gbps=600, sms=(108,),
           memory_gb=(0, 60), note=_HALVED + "; also the A100 boards named by their part (A100-PG509-200)"),
    _peaks("NVIDIA H100 PCIe", r"H100.*PCI", _NV_H100, 2000, fp64=26, fp64_matrix=51, fp32=51, tf32=378, fp16=756.5,
           bf16=756.5, fp8=1513, int8=1513, host_link="PCIe 5.0 x16", peer_link_gbps=600, sms=(114,), note=_HALVED),
    _peaks("NVIDIA H100 NVL", r"H100.*NVL", _NV_H100, 3900, fp64=30, fp64_matrix=60, fp32=60, tf32=417.5, fp16=835.5,
           bf16=835.5, fp8=1670.5, int8=1670.5, host_link="PCIe 5.0 x16", peer_link_gbps=600, sms=(132,),
           note=_HALVED),
    _peaks("NVIDIA H100 SXM", r"H100", _NV_H100, 3350, fp64=34, fp64_matrix=67, fp32=67, tf32=494.5, fp16=989.5,
           bf16=989.5, fp8=1979, int8=1979, host_link="PCIe 5.0 x16", peer_link_gbps=900, sms=(132,),
           memory_gb=(0, 88), note=_HALVED),
    _peaks("NVIDIA H100 NVL", r"H100", _NV_H100, 3900, fp64=30, fp64_matrix=60, fp32=60, tf32=417.5, fp16=835.5,
           bf16=835.5, fp8=1670.5, int8=1670.5, host_link="PCIe 5.0 x16", peer_link_gbps=600, sms=(132,),
           memory_gb=(88, 120), note=_HALVED + "; an H100 of 132 SMs with 94 GB is the NVL"),
    _peaks("NVIDIA H100 PCIe", r"H100", _NV_H100, 2000, fp64=26, fp64_matrix=51, fp32=51, tf32=378, fp16=756.5,
           bf16=756.5, fp8=1513, int8=1513, host_link="PCIe 5.0 x16", peer_link_gbps=600, sms=(114,), note=_HALVED),
    _peaks("NVIDIA H200 NVL", r"H200.*NVL", _NV_H200, 4800, fp64=30, fp64_matrix=60, fp32=60, tf32=417.5,
           fp16=835.5, bf16=835.5, fp8=1670.5, int8=1670.5, host_link="PCIe 5.0 x16", peer_link_gbps=900,
           note=_HALVED),
    _peaks("NVIDIA H200 SXM", r"H200", _NV_H200, 4800, fp64=34, fp64_matrix=67, fp32=67, tf32=494.5, fp16=989.5,
           bf16=989.5, fp8=1979, int8=1979, host_link="PCIe 5.0 x16", peer_link_gbps=900, sms=(132,), note=_HALVED),
    _peaks("NVIDIA B200", r"B200", _NV_B200, 8000, fp64=37, fp32=75, tf32=1125, fp16=2250, bf16=2250, fp8=4500,
           int8=4500, host_link="PCIe 5.0 x16", peer_link_gbps=1800, note=_HALVED),
    _peaks("NVIDIA L40S", r"L40S", _NV_L40S, 864, fp32=91.6, tf32=183, fp16=362.05, bf16=362.05, fp8=733, int8=733,
           host_link="PCIe 4.0 x16", sms=(142,), note="dense figures as the datasheet gives them"),
    _peaks("NVIDIA L4", r"\bL4\b", _NV_L4, 300, fp32=30.3, tf32=60, fp16=121, bf16=121, fp8=242.5, int8=242.5,
           host_link="PCIe 4.0 x16", sms=(58,), note=_HALVED + "; the datasheet gives no FP64 figure"),
    _peaks("AMD Instinct MI250X (one GCD)", r"MI250X", _AMD_MI250X, 1638.4, fp64=23.95, fp64_matrix=47.85,
           fp32=23.95, fp32_matrix=47.85, fp16=191.5, bf16=191.5, int8=191.5, host_link="PCIe 4.0 x16",
           sms=(110,), memory_gb=(50, 80), by_properties=True, warp_size=64, note=_GCD),
    _peaks("AMD Instinct MI250 (one GCD)", r"MI250", _AMD_MI250, 1638.4, fp64=22.65, fp64_matrix=45.25, fp32=22.65,
           fp32_matrix=45.25, fp16=181.05, bf16=181.05, int8=181.05, host_link="PCIe 4.0 x16", sms=(104,),
           memory_gb=(50, 80), by_properties=True, warp_size=64, note=_GCD),
    _peaks("AMD Instinct MI325X", r"MI325X", _AMD_MI325X, 6000, fp64=81.7, fp64_matrix=163.4, fp32=163.4,
           fp32_matrix=163.4, tf32=653.7, fp16=1307.4, bf16=1307.4, fp8=2614.9, int8=2614.9,
           host_link="PCIe 5.0 x16", peer_link_gbps=896, sms=(304,), memory_gb=(230, 300), by_properties=True,
           warp_size=64, note="dense figures as the datasheet gives them"),
    _peaks("AMD Instinct MI300X", r"MI300X", _AMD_MI300X, 5300, fp64=81.7, fp64_matrix=163.4, fp32=163.4,
           fp32_matrix=163.4, tf32=653.7, fp16=1307.4, bf16=1307.4, fp8=2614.9, int8=2614.9,
           host_link="PCIe 5.0 x16", peer_link_gbps=896, sms=(304,), memory_gb=(150, 230), by_properties=True,
           warp_size=64, note="dense figures as the datasheet gives them"),
    _peaks("Huawei Ascend 910B", r"910B", "no per-processor datasheet is published by Huawei; the figures of its "
           "Atlas 800T A2 training server (8 processors, 2.5 PFLOPS FP16) divided by 8, and the 64 GB HBM2e at "
           "1.6 TB/s commonly cited for the 910B3", 1600, fp16=313, bf16=313, int8=626,
           note="unofficial: the 910B variants (B1-B4) differ; give measured figures with --profscope_device_peaks"),
)


@dataclass(frozen=True)
class Resolved:
    """A device's peaks, or why there are none."""

    peaks: Optional[DevicePeaks]
    reason: str = ""


def _number(properties: Mapping[str, Any], key: str) -> Optional[float]:
    value = properties.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _fits(entry: DevicePeaks, sms: Optional[float], memory_gb: Optional[float], warp: Optional[float]) -> bool:
    if entry.sms and sms is not None and int(sms) not in entry.sms:
        return False
    if memory_gb is not None and not entry.memory_gb[0] <= memory_gb < entry.memory_gb[1]:
        return False
    return not (entry.warp_size and warp is not None and int(warp) != entry.warp_size)


def resolve(properties: Mapping[str, Any], overrides: Sequence[DevicePeaks] = ()) -> Resolved:
    """The peaks of the device ``properties`` describes (one ``deviceProperties`` entry: ``name``, ``numSms``,
    ``totalGlobalMem``, ``warpSize``...), the user's entries (``overrides``) first."""
    name = properties.get("name") if isinstance(properties.get("name"), str) else ""
    sms, warp = _number(properties, "numSms"), _number(properties, "warpSize")
    memory = _number(properties, "totalGlobalMem")
    memory_gb = memory / 1e9 if memory else None
    builtin = next((e for e in TABLE if re.search(e.match, name, re.IGNORECASE) and _fits(e, sms, memory_gb, warp)),
                   None)
    if builtin is None and sms is not None and memory_gb is not None:
        # A name that says nothing ("AMD Radeon Graphics"): the SM/CU count, memory and warp size together.
        builtin = next((e for e in TABLE if e.by_properties and e.sms and _fits(e, sms, memory_gb, warp)
                        and int(sms) in e.sms), None)
    user = next((e for e in overrides if re.search(e.match, name, re.IGNORECASE) and _fits(e, sms, None, None)),
                None)
    if user is not None:
        return Resolved(_merge(builtin, user) if builtin is not None else user)
    if builtin is not None:
        return Resolved(builtin)
    described = f'"{name}"' if name else "without a name"
    count = f" with {int(sms)} SMs" if sms is not None else ""
    return Resolved(None, f"the trace describes this device {described}{count}, which the table of peaks does not "
                          "list: give its peaks with --profscope_device_peaks FILE")


def _merge(builtin: DevicePeaks, user: DevicePeaks) -> DevicePeaks:
    return replace(builtin, name=user.name or builtin.name, tflops={**builtin.tflops, **user.tflops},
                   memory_bandwidth_gbps=user.memory_bandwidth_gbps or builtin.memory_bandwidth_gbps,
                   host_link=user.host_link or builtin.host_link,
                   peer_link_gbps=user.peer_link_gbps or builtin.peer_link_gbps,
                   source=f"{user.source} (figures given); {builtin.source} (the others)")


class PeaksFileError(ValueError):
    """A peaks file that cannot be used; the message says what is wrong, in the user's words."""


def parse_peaks_file(document: Any, origin: str = "the device peaks file") -> tuple[DevicePeaks, ...]:
    """The entries of a decoded peaks file (format in the module docstring)."""
    entries = document.get("devices") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise PeaksFileError(f'{origin}: expected an object with a "devices" list')
    out = []
    for i, entry in enumerate(entries):
        where = f"{origin}: device {i + 1}"
        if not isinstance(entry, dict):
            raise PeaksFileError(f"{where} is not an object")
        unknown = set(entry) - {"match", "sms", "name", "tflops", "memory_bandwidth_gbps", "host_link",
                                "peer_link_gbps", "source"}
        if unknown:
            raise PeaksFileError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
        match = entry.get("match")
        if not isinstance(match, str) or not match:
            raise PeaksFileError(f'{where}: "match" must be a regular expression for the device name')
        try:
            re.compile(match)
        except re.error as error:
            raise PeaksFileError(f'{where}: "match" is not a regular expression ({error})') from None
        tflops = entry.get("tflops", {})
        if not isinstance(tflops, dict) or any(k not in PRECISIONS or not _positive(v) for k, v in tflops.items()):
            raise PeaksFileError(f'{where}: "tflops" must map {", ".join(PRECISIONS)} to positive numbers')
        for key in ("memory_bandwidth_gbps", "peer_link_gbps"):
            if key in entry and not _positive(entry[key]):
                raise PeaksFileError(f'{where}: "{key}" must be a positive number')
        sms = entry.get("sms")
        if sms is not None and (not isinstance(sms, int) or isinstance(sms, bool) or sms <= 0):
            raise PeaksFileError(f'{where}: "sms" must be a positive integer')
        host_link = entry.get("host_link")
        if host_link is not None and (not isinstance(host_link, str) or not _PCIE.match(host_link)):
            raise PeaksFileError(f'{where}: "host_link" must read like "PCIe 4.0 x16"')
        for key in ("name", "source"):
            if key in entry and not isinstance(entry[key], str):
                raise PeaksFileError(f'{where}: "{key}" must be text')
        out.append(DevicePeaks(
            name=entry.get("name", ""), tflops={k: float(v) for k, v in tflops.items()},
            memory_bandwidth_gbps=float(entry["memory_bandwidth_gbps"]) if "memory_bandwidth_gbps" in entry else None,
            source=entry.get("source") or origin, host_link=host_link,
            peer_link_gbps=float(entry["peer_link_gbps"]) if "peer_link_gbps" in entry else None,
            match=match, sms=(sms,) if sms else ()))
    return tuple(out)


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def load_peaks_file(path: str) -> tuple[DevicePeaks, ...]:
    """Read and check a peaks file (``PeaksFileError`` says what is wrong)."""
    import json

    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except OSError as error:
        raise PeaksFileError(f"the device peaks file {path} cannot be read ({error.strerror})") from None
    except ValueError as error:
        raise PeaksFileError(f"the device peaks file {path} is not JSON ({error})") from None
    return parse_peaks_file(document, f"the device peaks file {path}")

