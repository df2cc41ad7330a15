"""Device peaks (``views/quantities/device_peaks.py``): the devices of the real traces are recognised from their
``deviceProperties``, figures are the datasheets' dense peaks, unknown devices say why, and the user's file adds
devices or replaces figures (or says what is wrong with it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.views.quantities.devices import device_properties
from profscope.tb_plugin.views.quantities.device_peaks import (
    PRECISIONS, TABLE, PeaksFileError, load_peaks_file, parse_peaks_file, resolve)

from conftest import real_trace


@pytest.mark.parametrize("relative, expected", [
    ("kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz", "NVIDIA V100 SXM2"),
    ("hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", "NVIDIA V100 SXM2"),
    ("hta/nccl_parser_config/nccl_data.json.gz", "NVIDIA A100 SXM 40 GB"),  # "NVIDIA A100-PG509-200"
    ("hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz", "AMD Instinct MI250 (one GCD)"),  # "AMD Radeon
    # Graphics": recognised by its 104 CUs, 64 GB and 64-wide wavefronts
    ("tracelens/h100/gaunernst_bert-small-uncased/gaunernst_bert-small-uncased__1016001.json.gz", "NVIDIA H100 SXM"),
    ("tracelens/mi300/resnet_act_checkpoint/resnet_act_checkpoint.json.gz", "AMD Instinct MI300X"),
])
def test_devices_of_real_traces(relative: str, expected: str) -> None:
    properties = device_properties(load_trace(str(real_trace(relative))))
    assert properties
    for entry in properties.values():
        resolved = resolve(entry)
        assert resolved.peaks is not None and resolved.peaks.name == expected, (entry, resolved)


@pytest.mark.parametrize("properties, expected", [
    ({"name": "NVIDIA A100-SXM4-80GB", "numSms": 108, "totalGlobalMem": 85_100_000_000}, "NVIDIA A100 SXM 80 GB"),
    ({"name": "NVIDIA A100 80GB PCIe", "numSms": 108, "totalGlobalMem": 85_100_000_000}, "NVIDIA A100 PCIe 80 GB"),
    ({"name": "NVIDIA A100-PCIE-40GB", "numSms": 108, "totalGlobalMem": 42_300_000_000}, "NVIDIA A100 PCIe 40 GB"),
    ({"name": "NVIDIA H100 PCIe", "numSms": 114, "totalGlobalMem": 85_000_000_000}, "NVIDIA H100 PCIe"),
    ({"name": "NVIDIA H100 NVL", "numSms": 132, "totalGlobalMem": 100_000_000_000}, "NVIDIA H100 NVL"),
    ({"name": "NVIDIA H100", "numSms": 132, "totalGlobalMem": 100_000_000_000}, "NVIDIA H100 NVL"),
    ({"name": "NVIDIA H200", "numSms": 132, "totalGlobalMem": 150_000_000_000}, "NVIDIA H200 SXM"),
    ({"name": "NVIDIA H200 NVL", "numSms": 132}, "NVIDIA H200 NVL"),
    ({"name": "NVIDIA B200", "numSms": 148}, "NVIDIA B200"),
    ({"name": "NVIDIA L4", "numSms": 58}, "NVIDIA L4"),
    ({"name": "NVIDIA L40S", "numSms": 142}, "NVIDIA L40S"),
    ({"name": "Tesla V100-PCIE-32GB", "numSms": 80}, "NVIDIA V100 PCIe"),
    ({"name": "Tesla V100S-PCIE-32GB", "numSms": 80}, "NVIDIA V100S PCIe"),
    ({"name": "AMD Instinct MI250X", "numSms": 110, "totalGlobalMem": 68_700_000_000}, "AMD Instinct MI250X (one GCD)"),
    ({"name": "AMD Instinct MI325X", "numSms": 304, "totalGlobalMem": 274_800_000_000}, "AMD Instinct MI325X"),
    ({"name": "AMD Radeon Graphics", "numSms": 304, "totalGlobalMem": 206_100_000_000, "warpSize": 64},
     "AMD Instinct MI300X"),
    ({"name": "Ascend910B3"}, "Huawei Ascend 910B"),
])
def test_names_and_properties(properties: dict, expected: str) -> None:
    resolved = resolve(properties)
    assert resolved.peaks is not None and resolved.peaks.name == expected


def test_unknown_devices_say_why() -> None:
    resolved = resolve({"name": "NVIDIA GeForce RTX 4090", "numSms": 128, "warpSize": 32})
    assert resolved.peaks is None
    assert '"NVIDIA GeForce RTX 4090" with 128 SMs' in resolved.reason
    assert "--profscope_device_peaks" in resolved.reason
    assert resolve({"id": 0, "name": "Ascend 0"}).peaks is None  # an Ascend timeline names no processor model
    assert "without a name" in resolve({}).reason


def test_figures_are_the_datasheets_dense_peaks() -> None:
    h100 = resolve({"name": "NVIDIA H100 80GB HBM3", "numSms": 132, "totalGlobalMem": 85_000_000_000}).peaks
    assert h100 is not None
    assert h100.flops_per_second("bf16", "matrix") == 989.5e12  # 1979 "with sparsity" / 2
    assert h100.flops_per_second("fp8", "matrix") == 1979e12
    assert h100.flops_per_second("tf32", "matrix") == 494.5e12
    assert h100.flops_per_second("fp64", "matrix") == 67e12  # FP64 tensor cores
    assert h100.flops_per_second("fp32", "matrix") == 67e12  # no tensor cores for FP32 without TF32
    assert h100.flops_per_second("bf16", "vector") == 67e12  # vector work: the FP32 vector peak
    assert h100.flops_per_second("fp64", "vector") == 34e12
    assert h100.memory_bytes_per_second == 3350e9
    assert h100.host_link_bytes_per_second == pytest.approx(16 * 32 * 128 / 130 / 8 * 1e9)  # PCIe 5.0 x16, one way
    assert h100.peer_link_bytes_per_second == 450e9  # NVLink 900 GB/s both ways
    v100 = resolve({"name": "Tesla V100-SXM2-32GB", "numSms": 80}).peaks
    assert v100 is not None and v100.flops_per_second("bf16", "matrix") is None  # no BF16 on Volta
    assert v100.flops_per_second("fp16", "matrix") == 125e12


def test_every_entry_names_its_source_and_has_sane_figures() -> None:
    for entry in TABLE:
        assert entry.source and entry.match and entry.name
        assert set(entry.tflops) <= set(PRECISIONS)
        assert all(0 < v < 10_000 for v in entry.tflops.values()), entry.name
        assert entry.memory_bandwidth_gbps and 100 < entry.memory_bandwidth_gbps < 20_000
        # Matrix units are never slower than the vector units of the same precision.
        for precision in ("fp64", "fp32"):
            if f"{precision}_matrix" in entry.tflops:
                assert entry.tflops[f"{precision}_matrix"] >= entry.tflops[precision]


def test_the_users_file_adds_devices_and_replaces_figures(tmp_path: Path) -> None:
    path = tmp_path / "peaks.json"
    path.write_text(json.dumps({"devices": [
        {"match": "RTX 4090", "name": "GeForce RTX 4090", "tflops": {"fp16": 165.2, "fp32": 82.6},
         "memory_bandwidth_gbps": 1008, "host_link": "PCIe 4.0 x16", "source": "my measurements"},
        {"match": "H100", "sms": 132, "tflops": {"bf16": 700}, "source": "achievable, measured"},
    ]}))
    overrides = load_peaks_file(str(path))
    rtx = resolve({"name": "NVIDIA GeForce RTX 4090", "numSms": 128}, overrides).peaks
    assert rtx is not None and rtx.flops_per_second("fp16", "matrix") == 165.2e12 and rtx.source == "my measurements"
    h100 = resolve({"name": "NVIDIA H100 80GB HBM3", "numSms": 132, "totalGlobalMem": 85_000_000_000}, overrides).peaks
    assert h100 is not None
    assert h100.flops_per_second("bf16", "matrix") == 700e12  # replaced
    assert h100.flops_per_second("fp8", "matrix") == 1979e12  # kept from the table
    assert "achievable, measured" in h100.source and "H100" in h100.source
    # An entry for other SM counts does not apply.
    assert resolve({"name": "NVIDIA H100 PCIe", "numSms": 114}, overrides).peaks.flops_per_second(  # type: ignore
        "bf16", "matrix") == 756.5e12


@pytest.mark.parametrize("document, message", [
    ([], '"devices" list'),
    ({"devices": [{"name": "x"}]}, '"match" must be'),
    ({"devices": [{"match": "("}]}, "not a regular expression"),
    ({"devices": [{"match": "x", "tflops": {"fp4": 1}}]}, '"tflops" must map'),
    ({"devices": [{"match": "x", "tflops": {"bf16": -1}}]}, '"tflops" must map'),
    ({"devices": [{"match": "x", "memory_bandwidth_gbps": "fast"}]}, "positive number"),
    ({"devices": [{"match": "x", "host_link": "NVLink"}]}, "PCIe 4.0 x16"),
    ({"devices": [{"match": "x", "color": "red"}]}, "unknown field"),
])
def test_bad_peaks_files_say_what_is_wrong(document: object, message: str) -> None:
    with pytest.raises(PeaksFileError, match=message):
        parse_peaks_file(document)


def test_unreadable_peaks_files(tmp_path: Path) -> None:
    with pytest.raises(PeaksFileError, match="cannot be read"):
        load_peaks_file(str(tmp_path / "missing.json"))
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(PeaksFileError, match="is not JSON"):
        load_peaks_file(str(tmp_path / "bad.json"))


def test_a_device_listed_under_another_id_than_its_lanes_has_the_listed_peaks() -> None:
    # TraceLens's MI300X bert trace lists one device, id 0 ("AMD Instinct MI300X VF"), while its kernels run on the
    # lanes of device 2 (devices.same_device_ids): the work on device 2 is held against the MI300X's roofs.
    from profscope.tb_plugin.views.quantities.efficiency import Roofs, efficiency_overview, work_summary

    folder = real_trace("tracelens/mi300/gaunernst_bert-small-uncased")
    model = load_trace(str(next(folder.glob("*.json.gz"))))
    roofs = Roofs.of(model)
    assert roofs.get(2).peaks is not None and roofs.get(2).peaks.name == "AMD Instinct MI300X"  # type: ignore
    mfu = efficiency_overview(model, work_summary(model), roofs)["mfu"]
    assert mfu["devices"] == [2] and mfu["mean"] is not None and mfu["mean"] > 0
