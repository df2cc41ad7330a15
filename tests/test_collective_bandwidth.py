"""Collective bandwidth (``views/quantities/collective_bandwidth.py``): numbers computed by hand, and the cross-rank
figures of AMD TraceLens's NCCL analysis of a real 8-rank job (its published table)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from profscope.tb_plugin.views.quantities.collective_bandwidth import (
    bus_factor, collective_family, message_bytes, rank_bandwidth, transfer_bandwidth)


@pytest.mark.parametrize("name, family", [
    ("allreduce", "all_reduce"), ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "all_reduce"),
    ("allreduce_coalesced", "all_reduce"), ("_allgather_base", "spread"), ("all_gather_into_tensor", "spread"),
    ("ncclDevKernel_AllGather_RING_LL", "spread"), ("_reduce_scatter_base", "spread"),
    ("reduce_scatter_tensor_coalesced", "spread"), ("all_to_all", "spread"), ("alltoall_base", "spread"),
    ("gather", "spread"), ("scatter", "spread"), ("broadcast", "one"), ("ncclDevKernel_Broadcast_RING_LL", "one"),
    ("reduce", "one"), ("send", "one"), ("recv", "one"), ("ncclDevKernel_SendRecv", "one"), ("barrier", "none"),
    ("gloo:all_reduce", "all_reduce"), ("something_else", None),
])
def test_collective_families(name: str, family: str) -> None:
    assert collective_family(name) == family


def test_bus_factors_by_hand() -> None:
    n = np.array([1, 2, 8, 0])
    assert bus_factor("allreduce", n)[:3].tolist() == [0.0, 1.0, 2 * 7 / 8]
    assert bus_factor("allgather", n)[:3].tolist() == [0.0, 0.5, 7 / 8]
    assert bus_factor("broadcast", n)[:3].tolist() == [1.0, 1.0, 1.0]
    assert math.isnan(bus_factor("allreduce", n)[3])  # group size unknown
    assert np.isnan(bus_factor("barrier", n)).all()


def test_rank_bandwidth_by_hand() -> None:
    # An all-reduce of 1e9 bytes in 10 ms over 8 ranks: 1e11 B/s algorithm, 1.75e11 B/s bus bandwidth; an unknown
    # size or a zero duration has none.
    bw = rank_bandwidth("allreduce", np.array([10**9, -1, 10**9]), np.array([10_000_000, 10_000_000, 0]),
                        np.array([8, 8, 8]))
    assert bw.algorithm[0] == pytest.approx(1e11, rel=1e-15)
    assert bw.bus[0] == pytest.approx(1.75e11, rel=1e-15)
    assert np.isnan(bw.algorithm[1:]).all() and np.isnan(bw.bus[1:]).all()
    # An all-gather's message is the gathered buffer: 4 ranks of 1 MB give 4 MB, in 1 ms: 4e9 B/s, bus 3e9 B/s.
    size = message_bytes(np.array([10**6]), np.array([4 * 10**6]))
    bw = rank_bandwidth("_allgather_base", size, np.array([1_000_000]), np.array([4]))
    assert (bw.algorithm[0], bw.bus[0]) == (pytest.approx(4e9), pytest.approx(3e9))
    assert np.isnan(rank_bandwidth("barrier", np.array([0]), np.array([5]), np.array([8])).algorithm).all()


def test_transfer_bandwidth_uses_the_fastest_rank() -> None:
    # Two ranks, three collectives; rank 1 did not record the third. The latency is the shortest duration.
    durations = np.array([[10_000, 30_000, 5_000], [20_000, 15_000, 0]])
    sizes = np.array([[8_000, 8_000, 4_000], [8_000, 8_000, -1]])
    bw = transfer_bandwidth("allreduce", sizes, durations, np.array([2, 2, 2]))
    assert bw.duration_ns.tolist() == [10_000, 15_000, 5_000]
    assert bw.algorithm.tolist() == pytest.approx([8e8, 8_000 / 15e-6, 8e8])
    assert bw.bus.tolist() == pytest.approx([8e8, 8_000 / 15e-6, 8e8])  # 2 (n - 1) / n = 1 for two ranks
    with pytest.raises(ValueError):
        transfer_bandwidth("allreduce", sizes[:, :2], durations, np.array([2, 2, 2]))


# AMD TraceLens's NCCL analysis of an 8-rank Llama-70B FSDP job on MI300X (tests/traces/mi300/llama_70b_fsdp/
# nccl_analysis_report_csvs/nccl_summary_long.csv at AMD-AGI/TraceLens 171dd74): per collective, the "Full msg
# size" in MiB, the latency (shortest duration over the ranks) in µs, algorithm and bus bandwidth in GiB/s (its GB
# is 2**30 bytes). Two rows of its table, as published: the shortest latency over the collectives of that size and
# the highest bandwidths (those of the same collective).
_TRACELENS_ROWS = [
    # collective, full size (MiB), latency (µs), algo bw (GiB/s), bus bw (GiB/s)
    ("_allgather_base", 1632.03125, 5609.464, 284.12349514643915, 248.60805825313426),
    ("_reduce_scatter_base", 8016.03125, 22954.712, 341.0260829052495, 298.3978225420933),
]


@pytest.mark.parametrize("name, mib, latency_us, algbw_gib, busbw_gib", _TRACELENS_ROWS)
def test_transfer_bandwidth_agrees_with_tracelens(name: str, mib: float, latency_us: float, algbw_gib: float,
                                                 busbw_gib: float) -> None:
    # One collective seen by 8 ranks, the fastest at TraceLens's latency.
    size = int(mib * 2**20)
    fastest = int(round(latency_us * 1000))
    durations = np.array([[fastest + 1000 * r] for r in range(8)])
    bw = transfer_bandwidth(name, np.full((8, 1), size), durations, np.array([8]))
    assert bw.algorithm[0] / 2**30 == pytest.approx(algbw_gib, rel=1e-6)
    assert bw.bus[0] / 2**30 == pytest.approx(busbw_gib, rel=1e-6)
