"""FLOPs and bytes of one call of each kind of operator (``views/quantities/work_formulas.py``), on hand-made calls
whose numbers are computed by hand in the comments; and calls that give no number say why."""

from __future__ import annotations

import pytest

from profscope.tb_plugin.views.quantities.work_formulas import MATRIX, VECTOR, NoNumber, call_work, unit_of

F, H, B, E4 = "float", "c10::Half", "c10::BFloat16", "c10::Float8_e4m3fn"


def work(name: str, dims: list, types: list, concrete: list | None = None) -> tuple[int, int, str, str]:
    w = call_work(name, dims, types, concrete if concrete is not None else [""] * len(dims))
    return w.flops, w.bytes, w.precision, w.unit


# ---- matrix products -----------------------------------------------------------------------------------------


def test_mm() -> None:
    # [64, 128] @ [128, 32]: 2*64*32*128 = 524288 FLOPs; (64*128 + 128*32 + 64*32) * 4 = 57344 bytes.
    assert work("aten::mm", [[64, 128], [128, 32]], [F, F]) == (524288, 57344, "fp32", MATRIX)
    # A product needs no Concrete Inputs (traces before torch 2.1 have none).
    assert call_work("aten::mm", [[64, 128], [128, 32]], [F, F], None).flops == 524288


def test_addmm_counts_the_bias() -> None:
    # + 64*32 = 2048 additions; bytes (8192 + 4096 + 2048) * 2 + 32 * 2 = 28736.
    assert work("aten::addmm", [[32], [64, 128], [128, 32], [], []], [B, B, B, "Scalar", "Scalar"],
                ["", "", "", "1", "1"]) == (526336, 28736, "bf16", MATRIX)


def test_bmm_and_baddbmm() -> None:
    # 8 x [16, 32] @ [32, 4]: 2*8*16*4*32 = 32768; 8 * (512 + 128 + 64) * 2 = 11264 bytes.
    assert work("aten::bmm", [[8, 16, 32], [8, 32, 4]], [H, H]) == (32768, 11264, "fp16", MATRIX)
    # + 8*16*4 = 512 additions; 8 * 704 * 4 + 512 * 4 = 24576 bytes.
    assert work("aten::baddbmm", [[8, 16, 4], [8, 16, 32], [8, 32, 4], [], []], [F, F, F, "Scalar", "Scalar"]) == (
        33280, 24576, "fp32", MATRIX)


def test_scaled_mm_fp8() -> None:
    dims = [[16, 32], [32, 64], [], [], [], [], [], []]
    types = [E4, E4, F, F, "", "", "", "Scalar"]
    # 2*16*64*32 = 65536; 16*32 + 32*64 bytes of 8-bit inputs, the 16x64 output in 2 bytes: 512 + 2048 + 2048.
    assert work("aten::_scaled_mm", dims, types) == (65536, 4608, "fp8", MATRIX)
    # With a bf16 bias [64]: + 16*64 = 1024 FLOPs, + 128 bytes; out_dtype 15 (bfloat16) is 2 bytes.
    dims[4], types[4] = [64], B
    assert work("aten::_scaled_mm", dims, types, ["", "", "", "", "", "", "15", "False"]) == (
        66560, 4736, "fp8", MATRIX)


def test_matmul_broadcasts_and_reads_each_operand_once() -> None:
    # [2, 3, 16, 32] @ [32, 8]: 6 products of 16x32 @ 32x8 = 2*16*8*32*6 = 49152 FLOPs;
    # bytes: 3072*4 (A) + 256*4 (B, read once) + 6*16*8*4 (out) = 12288 + 1024 + 3072 = 16384.
    assert work("aten::matmul", [[2, 3, 16, 32], [32, 8]], [F, F]) == (49152, 16384, "fp32", MATRIX)
    # A vector times a matrix: [32] @ [32, 8] = 1x32 @ 32x8: 512 FLOPs; 128 + 1024 + 32 bytes.
    assert work("aten::matmul", [[32], [32, 8]], [F, F]) == (512, 1184, "fp32", MATRIX)


def test_linear() -> None:
    # [4, 10, 32] x [16, 32]^T + [16]: M = 40, N = 16, K = 32: 2*40*16*32 + 40*16 = 41600;
    # (40*32 + 32*16 + 40*16) * 2 + 16 * 2 = 4896 bytes.
    assert work("aten::linear", [[4, 10, 32], [16, 32], [16]], [B, B, B]) == (41600, 4896, "bf16", MATRIX)


def test_grouped_mm() -> None:
    # [96, 64] (M jagged over 4 groups) x [4, 64, 32]: 2*96*32*64 = 393216; 12288 + 16384 + 6144 bytes.
    assert work("aten::_grouped_mm", [[96, 64], [4, 64, 32], [4], [], []], [B, B, "int", "", ""]) == (
        393216, 34816, "bf16", MATRIX)
    # [32, 256] x [256, 16] with K jagged over 4 groups: 4 outputs [32, 16]; 2*32*16*256 = 262144 FLOPs;
    # 16384 + 8192 + 4*32*16*2 = 28672 bytes.
    assert work("aten::_grouped_mm", [[32, 256], [256, 16], [4], [], []], [B, B, "int", "", ""]) == (
        262144, 28672, "bf16", MATRIX)


# ---- convolutions --------------------------------------------------------------------------------------------


def conv_args(x: list, w: list, bias: bool, stride: str, padding: str, dilation: str, transposed: str,
              output_padding: str, groups: str) -> tuple[list, list]:
    return ([x, w, [w[0] if transposed == "False" else w[1]] if bias else [], [], [], [], [], [], []],
            ["", "", "", stride, padding, dilation, transposed, output_padding, groups])


def test_convolution_with_stride_padding_and_bias() -> None:
    # [2, 3, 32, 32] * [8, 3, 3, 3], stride 2, padding 1: (32 + 2 - 2 - 1) // 2 + 1 = 16 -> out [2, 8, 16, 16]
    # = 4096 elements; 2 * 4096 * 27 + 4096 (bias) = 225280 FLOPs; (6144 + 216 + 4096 + 8) * 4 = 41856 bytes.
    dims, concrete = conv_args([2, 3, 32, 32], [8, 3, 3, 3], True, "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]",
                               "1")
    assert work("aten::convolution", dims, [F, F, F] + [""] * 6, concrete) == (225280, 41856, "fp32", MATRIX)


def test_depthwise_dilated_and_transposed_convolutions() -> None:
    # Depthwise: [1, 8, 10, 10] * [8, 1, 3, 3], groups 8: out [1, 8, 8, 8] = 512; 2 * 512 * 9 = 9216;
    # (800 + 72 + 512) * 2 = 2768 bytes.
    dims, concrete = conv_args([1, 8, 10, 10], [8, 1, 3, 3], False, "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]",
                               "8")
    assert work("aten::convolution", dims, [H, H] + [""] * 7, concrete)[:2] == (9216, 2768)
    # Dilation 2 in 1-D: (10 - 2*2 - 1) // 1 + 1 = 6 outputs of 3 taps: 36 FLOPs; one value ("[2]") stands for all.
    dims, concrete = conv_args([1, 1, 10], [1, 1, 3], False, "[1]", "[0]", "[2]", "False", "[0]", "1")
    assert work("aten::convolution", dims, [F, F] + [""] * 7, concrete)[0] == 36
    # Transposed: [1, 4, 5, 5] * [4, 2, 3, 3], stride 2, padding 1, output padding 1:
    # (5 - 1) * 2 - 2 + 2 + 1 + 1 = 10 -> out [1, 2, 10, 10]; every input element meets a 2x3x3 slice:
    # 2 * 100 * 18 = 3600 FLOPs; (100 + 72 + 200) * 4 = 1488 bytes.
    dims, concrete = conv_args([1, 4, 5, 5], [4, 2, 3, 3], False, "[2, 2]", "[1, 1]", "[1, 1]", "True", "[1, 1]",
                               "1")
    assert work("aten::convolution", dims, [F, F] + [""] * 7, concrete)[:2] == (3600, 1488)


def test_convolution_backward_counts_the_gradients_asked_for() -> None:
    dims = [[2, 8, 16, 16], [2, 3, 32, 32], [8, 3, 3, 3]] + [[]] * 8
    types = [F, F, F] + [""] * 8
    concrete = ["", "", "", "[8]", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, True]"]
    # Input and weight gradients: 221184 FLOPs each (the forward without bias); bias gradient: 4096.
    # Bytes: (4096 + 216 + 6144) per gradient, twice, + (4096 + 8) for the bias: 25016 elements * 4.
    assert work("aten::convolution_backward", dims, types, concrete) == (446464, 100064, "fp32", MATRIX)
    concrete[10] = "[False, True, False]"  # the first layer: no input gradient, no bias
    assert work("aten::convolution_backward", dims, types, concrete)[:2] == (221184, 41824)


# ---- attention -----------------------------------------------------------------------------------------------


def test_sdpa_forward_causal_halves_the_work() -> None:
    q = [2, 4, 128, 64]
    dims, types = [q, q, q, [], [], [], []], [B, B, B, "Scalar", "Scalar", "Scalar", "Scalar"]
    # 2 * B H N_q N_kv (d_qk + d_v) = 2 * 2*4 * 128*128 * 128 = 33554432; causal: half.
    # Bytes: q, k, v, out of 2*4*128*64 = 65536 elements each, 2 bytes: 524288.
    plain = work("aten::_scaled_dot_product_flash_attention", dims, types, ["", "", "", "0.", "False", "False", ""])
    causal = work("aten::_scaled_dot_product_flash_attention", dims, types, ["", "", "", "0.", "True", "False", ""])
    assert plain == (33554432, 524288, "bf16", MATRIX)
    assert causal == (16777216, 524288, "bf16", MATRIX)
    # The same call as the flash kernel's own operator sees it: [B, N, H, d], is_causal at 8.
    bnhd = [2, 128, 4, 64]
    assert work("aten::_flash_attention_forward", [bnhd, bnhd, bnhd] + [[]] * 8, [B] * 3 + [""] * 8,
                [""] * 8 + ["True", "False", ""])[:2] == (16777216, 524288)
    # Memory-efficient attention says causal with custom_mask_type 1.
    assert work("aten::_efficient_attention_forward", [bnhd, bnhd, bnhd] + [[]] * 11, [B] * 3 + [""] * 11,
                [""] * 9 + ["1"] + [""] * 4)[0] == 16777216


def test_attention_backward_with_grouped_query_heads() -> None:
    q, kv = [1, 8, 64, 32], [1, 2, 64, 32]
    dims = [q, q, kv, kv, q, [1, 8, 64]] + [[]] * 9
    types = [B] * 5 + [F] + [""] * 9
    concrete = [""] * 11 + ["False"] + [""] * 3
    # Each score-sized product: 2 * 1*8 * 64*64 * 32 = 2097152; recompute + dV + dP + dQ + dK = 5 of them;
    # 8 query heads share each of 2 key/value heads: 1*64*32*(8/2 - 1) = 6144 additions for dV and for dK.
    # Bytes: (2 * (q + k + v) + grad_out) elements: 2 * (16384 + 4096 + 4096) + 16384 = 65536, 2 bytes each.
    assert work("aten::_scaled_dot_product_flash_attention_backward", dims, types, concrete) == (
        5 * 2097152 + 2 * 6144, 131072, "bf16", MATRIX)


def test_variable_length_attention_has_no_number() -> None:
    packed = [300, 4, 64]  # [total tokens, heads, d] with cum_seq_q: the sequence lengths are not recorded
    with pytest.raises(NoNumber, match="variable-length"):
        call_work("aten::_flash_attention_forward", [packed, packed, packed, [3], [3]] + [[]] * 6,
                  [B] * 3 + ["int", "int"] + [""] * 6, [""] * 11)


# ---- normalization -------------------------------------------------------------------------------------------


def test_layer_norm_forward_and_backward() -> None:
    x = [4, 10, 32]  # E = 1280 elements, C = 32
    # 6 C + 5 E = 192 + 6400 = 6592; 2 E * 4 + (mean, variance, weight, bias, 2 statistics) 6 C * 4 = 11008.
    assert work("aten::native_layer_norm", [x, [], [32], [32], []], [F, "ScalarList", F, F, "Scalar"],
                ["", "[32]", "", "", "1e-05"]) == (6592, 11008, "fp32", VECTOR)
    # Without weight and bias: 4 C instead of 6 C.
    assert work("aten::native_layer_norm", [x, [], [], [], []], [F, "ScalarList", "", "", "Scalar"],
                ["", "[32]", "", "", "1e-05"])[1] == 10752
    # Backward with all gradients: 4 E + 5 E = 11520 FLOPs; grad E*4, input 2 E*4, statistics C*4, weight C*4,
    # weight and bias gradients 2 C*4: 5120 + 10240 + 128 + 128 + 256 = 15872 bytes.
    assert work("aten::native_layer_norm_backward", [x, x, [], [4, 10, 1], [4, 10, 1], [32], [32], []],
                [F, F, "ScalarList", F, F, F, F, ""], ["", "", "[32]", "", "", "", "", "[True, True, True]"]) == (
        11520, 15872, "fp32", VECTOR)


def test_batch_norm_reads_training_from_the_call() -> None:
    x = [8, 16, 4, 4]  # E = 2048, C = 16
    dims, types = [x, [16], [16], [16], [16], [], [], []], [B, B, B, F, F, "Scalar", "Scalar", "Scalar"]
    # Training: 6 C + 5 E = 10336; 2 E * 2 + 6 C * 2 = 8384 bytes.
    assert work("aten::native_batch_norm", dims, types, ["", "", "", "", "", "True", "0.1", "1e-05"]) == (
        10336, 8384, "bf16", VECTOR)
    # Inference: 6 C + 2 E = 4192; 2 E * 2 + 4 C * 2 = 8320 bytes.
    assert work("aten::native_batch_norm", dims, types, ["", "", "", "", "", "False", "0.1", "1e-05"])[:2] == (
        4192, 8320)
    # Backward in training with every gradient, float: 9 E = 18432 FLOPs;
    # E*4 + 2 E*4 + C*4 + C*4 + 2 C*4 = 8192 + 16384 + 64 + 64 + 128 = 24832 bytes.
    xf = [8, 16, 4, 4]
    assert work("aten::native_batch_norm_backward", [xf, xf, [16], [16], [16], [16], [16], [], [], []],
                [F] * 7 + ["Scalar", "Scalar", ""], [""] * 7 + ["True", "1e-05", "[True, True, True]"])[:2] == (
        18432, 24832)


def test_rms_norm() -> None:
    # [2, 8, 64], normalized over 64 with a weight: 16 rows * (2*64 + 2) + 2 * 1024 = 4128 FLOPs;
    # 2 * 1024 * 2 + 64 * 2 = 4224 bytes.
    assert work("aten::_fused_rms_norm", [[2, 8, 64], [], [64], []], [B, "ScalarList", B, "Scalar"],
                ["", "[64]", "", "1e-06"]) == (4128, 4224, "bf16", VECTOR)


# ---- elementwise and reductions ------------------------------------------------------------------------------


def test_elementwise() -> None:
    assert work("aten::relu", [[1000]], [F]) == (1000, 8000, "fp32", VECTOR)  # read and write 1000 floats
    # [4, 1, 8] + [1, 6, 8] broadcast to [4, 6, 8] = 192: 32*2 + 48*2 + 192*2 = 544 bytes.
    assert work("aten::add", [[4, 1, 8], [1, 6, 8], []], [H, H, "Scalar"])[:2] == (192, 544)
    # A Python scalar operand counts as one 4-byte element: 400 + 4 + 400.
    assert work("aten::mul", [[10, 10], []], [F, "Scalar"])[:2] == (100, 804)
    # where(bool [10], float [10], float [10]): 10 + 40 + 40 + 40 (output as wide as the widest tensor).
    assert work("aten::where", [[10], [10], [10]], ["bool", F, F])[:2] == (10, 130)
    # copy_ of 100 floats into halves: 200 + 400 bytes.
    assert work("aten::copy_", [[100], [100], []], [H, F, "Scalar"])[:2] == (100, 600)


def test_reductions() -> None:
    x = [4, 8, 16]  # 512 elements
    # Over dimension 1: 64 outputs; 512 FLOPs, 512*4 + 64*4 = 2304 bytes (keepdim gives the same count).
    assert work("aten::sum", [x, [], [], []], [F, "ScalarList", "Scalar", ""], ["", "[1]", "False", ""])[:2] == (
        512, 2304)
    assert work("aten::sum", [x, [], [], []], [F, "ScalarList", "Scalar", ""], ["", "[1]", "True", ""])[1] == 2304
    assert work("aten::sum", [x, []], [F, ""], ["", ""])[1] == 2052  # everything: one output
    assert work("aten::mean", [x, [], [], []], [F, "ScalarList", "Scalar", ""], ["", "[-1]", "False", ""])[1] == 2176
    # norm(x, p=2, dim=[1]): p is no dimension.
    assert work("aten::norm", [x, [], [], []], [F, "Scalar", "ScalarList", "Scalar"],
                ["", "2", "[1]", "False"])[1] == 2304
    # Softmax: 3 operations per element, the shape kept: 96 FLOPs, 128 + 128 bytes.
    assert work("aten::_softmax", [[4, 8], [], []], [F, "Scalar", "Scalar"], ["", "-1", "False"])[:2] == (96, 256)


# ---- calls without a number ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name, dims, types, concrete, reason", [
    ("aten::mm", [[2, 3]], [F], [""], "argument 1 has no tensor shape"),
    ("aten::mm", [[2, 3, 4], [4, 5]], [F, F], ["", ""], "3 dimensions, expected 2"),
    ("aten::mm", [[2, 3], [3, 4]], ["c10::SomethingNew", F], ["", ""], "element size of argument 0"),
    ("aten::convolution", [[1, 3, 4, 4], [8, 3, 9, 9], [], [], [], [], [], [], []], [F, F] + [""] * 7,
     ["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"], "output would be empty"),
    ("aten::convolution", [[1, 3, 4, 4], [8, 3, 1, 1], [], [], [], [], [], [], []], [F, F] + [""] * 7,
     ["", "", "", "stride", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"], "not a list of integers"),
    ("aten::add", [[3, 4], [5, 4]], [F, F], ["", ""], "do not broadcast"),
    ("aten::native_layer_norm", [[4, 8], [], [], [], []], [F, "ScalarList", "", "", "Scalar"], [""] * 5,
     "normalized_shape"),
    ("aten::convolution", [[1, 3, 4, 4], [8, 3, 1, 1], [], [], [], [], [], [], []], [F, F] + [""] * 7, None,
     "does not record the stride"),
    ("aten::sum", [[4, 8], []], [F, "ScalarList"], None, "does not record the reduced dimensions"),
    ("aten::mm", [[2, 3], [3, 4]], None, None, "no Input type"),
    ("aten::mm", [[10**12, 10**12], [10**12, 10**12]], [F, F], ["", ""], "more work than any call"),
    ("aten::mm", [[2, -3], [3, 4]], [F, F], ["", ""], "no tensor shape"),
    ("aten::mm", [[2, 3.5], [3, 4]], [F, F], ["", ""], "no tensor shape"),
    ("aten::not_an_operator", [[1]], [F], [""], "no formula"),
    ("aten::mm", "[[2, 3]]", [F], [""], "not lists"),
])
def test_calls_without_a_number_say_why(name: str, dims: object, types: object, concrete: object,
                                        reason: str) -> None:
    with pytest.raises(NoNumber, match=reason):
        call_work(name, dims, types, concrete)


def test_units() -> None:
    assert unit_of("aten::mm") == MATRIX and unit_of("aten::convolution_backward") == MATRIX
    assert unit_of("aten::native_layer_norm") == VECTOR and unit_of("aten::add_") == VECTOR
    assert unit_of("aten::empty") is None
