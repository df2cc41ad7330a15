"""Operator categories (``model/operator_categories.py``): operator names, kernel names, and device work on real
traces, checked against TraceLens's category breakdown of the same trace."""

from __future__ import annotations

import csv
from collections import Counter

import numpy as np
import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.model.operator_categories import (
    CATEGORIES, LABELS, device_work_categories, kernel_category, operator_category)
from profscope.tb_plugin.views.quantities.work_formulas import MATRIX_OPERATORS, READERS

from conftest import real_trace


@pytest.mark.parametrize("name, category", [
    ("aten::mm", "gemm"), ("aten::addmm", "gemm"), ("aten::linear", "gemm"), ("aten::_scaled_mm", "gemm"),
    ("AddmmBackward0", "gemm"), ("aten::_grouped_mm", "grouped_gemm"), ("aten::convolution", "convolution"),
    ("aten::cudnn_convolution", "convolution"), ("aten::miopen_convolution", "convolution"),
    ("aten::convolution_backward", "convolution"), ("ConvolutionBackward0", "convolution"),
    ("aten::_scaled_dot_product_flash_attention", "attention"), ("aten::_flash_attention_forward", "attention"),
    ("flash_attn::_flash_attn_forward", "attention"), ("FlashAttnFunc", "attention"),
    ("ScaledDotProductFlashAttentionBackward0", "attention"), ("aten::native_layer_norm", "normalization"),
    ("aten::cudnn_batch_norm", "normalization"), ("aten::_fused_rms_norm", "normalization"),
    ("NativeLayerNormBackward0", "normalization"), ("aten::add_", "elementwise"), ("aten::copy_", "elementwise"),
    ("aten::gelu", "elementwise"), ("aten::sum", "reduction"), ("aten::_softmax", "reduction"),
    ("aten::norm", "reduction"), ("aten::_fused_adam_", "optimizer"), ("aten::_foreach_mul_", "optimizer"),
    ("record_param_comms", "communication"), ("nccl:all_reduce", "communication"),
    ("triton_poi_fused_add_0", "triton"), ("aten::index_select", "other"), ("aten::empty", "other"),
])
def test_operator_names(name: str, category: str) -> None:
    assert operator_category(name) == category


@pytest.mark.parametrize("name, category", [
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_"
     "cublas", "gemm"),
    ("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x64_64x6_tn_align8>", "gemm"),
    ("Cijk_Alik_Bljk_BBS_BH_MT128x128x64_MI16x16x16x1", "gemm"),
    ("void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8>",
     "convolution"),
    ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4>>", "attention"),
    ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>", "normalization"),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>", "reduction"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>", "elementwise"),
    ("void at::native::multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor>", "optimizer"),
    ("triton_poi_fused_add_mul_0", "triton"),
    ("void at::native::(anonymous namespace)::CatArrayBatchedCopy<float>", "other"),
])
def test_kernel_names(name: str, category: str) -> None:
    assert kernel_category(name) == category


def test_every_operator_with_a_formula_has_a_category() -> None:
    for name in READERS:
        category = operator_category(name)
        assert category != "other", name
        assert (category in ("gemm", "grouped_gemm", "convolution", "attention")) == (name in MATRIX_OPERATORS), name
    assert set(LABELS) == set(CATEGORIES)


# TraceLens's "ops_summary_by_category" of the Falconsai ViT trace on an H100 (tests/data/tracelens), in ms of
# kernels launched directly by operators of the category. It files the flash-attention call under "other" (its
# SDPA category names only the outer operator) and the cuDNN transposes under convolution; Profscope files device
# work by the operator that launched it, then by the kernel's name, so attention and the copies have their own.
def test_device_work_categories_of_a_real_trace_match_tracelens() -> None:
    folder = real_trace("tracelens/h100/Falconsai_nsfw_image_detection")
    model = load_trace(str(next(folder.glob("*.json.gz"))))
    category = device_work_categories(model)
    rows = np.flatnonzero(category >= 0)
    ms: Counter[str] = Counter()
    for code, dur in zip(category[rows].tolist(), model.slices.dur[rows].tolist()):
        ms[CATEGORIES[code]] += dur / 1e6
    tracelens = {r["op category"]: float(r["total_direct_kernel_time_ms"])
                 for r in csv.DictReader((folder / "perf_report_csvs" / "ops_summary_by_category.csv").open())}
    assert ms["gemm"] == pytest.approx(tracelens["GEMM"], rel=1e-4)
    assert ms["elementwise"] == pytest.approx(tracelens["elementwise"], rel=1e-4)
    assert ms["normalization"] == pytest.approx(tracelens["NORM_fwd"], rel=1e-4)
    # Convolution: TraceLens adds the memsets cuDNN launched from it (Profscope: memory copies, 2.1 + 2.3 µs).
    assert ms["convolution"] + 0.004384 == pytest.approx(tracelens["CONV_fwd"], abs=2e-6)
    # Its "other": the flash-attention kernels and the concatenation kernels.
    assert ms["attention"] + ms["other"] == pytest.approx(tracelens["other"], rel=1e-4)
    assert sum(ms.values()) == pytest.approx(sum(tracelens.values()) + ms["memory_copy"] - 0.004384, rel=1e-4)
