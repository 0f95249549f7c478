"""The hardware and model catalogs: spec-sheet figures and parameter counts computed from architectures."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.engine.errors import EngineError, UnknownModel
from app.engine.hardware import DGX_H100, GPUS, NETWORK_400G, compute_precision, get_gpu, node, peak_flops
from app.engine.models import CATALOG, Architecture, get_model
from app.engine.units import GB, TB, TFLOPS, GiB, MiB, TiB

# Published counts: Hugging Face model cards / safetensors totals (Llama 3.1, Mistral 7B v0.1).
PUBLISHED = {
    "llama-3.1-8b": 8_030_261_248,
    "llama-3.1-70b": 70_553_706_496,
    "llama-3.1-405b": 405_853_388_800,
    "mistral-7b": 7_241_732_096,
}


@pytest.mark.parametrize(("model_id", "count"), PUBLISHED.items())
def test_dense_parameter_counts_match_the_published_counts_exactly(model_id: str, count: int) -> None:
    """V·d·2 + L·(d·h·hd + 2·d·kv·hd + h·hd·d + 3·d·ff + 2·d) + d (engine-cases.md)."""
    assert get_model(model_id).parameters == count
    assert get_model(model_id).active_parameters == count


def test_mixtral_holds_46_7_b_parameters_but_uses_12_9_b_a_token() -> None:
    """Mixtral paper (Jiang et al. 2024): 46.7 B total, 12.9 B active; router weights counted. 0.5 %."""
    mixtral = get_model("mixtral-8x7b")
    assert mixtral.parameters == pytest.approx(46.7e9, rel=0.005)  # the model card rounds
    assert mixtral.active_parameters == pytest.approx(12.9e9, rel=0.005)  # the model card rounds


def test_gpt_3_lands_near_175_b_with_a_two_matrix_mlp_biases_and_learned_positions() -> None:
    """Brown et al. 2020, table 2.1: 175.0 B. Tolerance 1 %."""
    gpt3 = get_model("gpt-3-175b")
    assert not gpt3.gated_mlp and gpt3.biases and gpt3.position_embeddings == 2048
    assert gpt3.parameters == pytest.approx(175e9, rel=0.01)  # the paper rounds


def test_lessons_find_the_attributes_they_rely_on() -> None:
    """docs/lesson-format.md: model(id) gives name, parameters, …, context."""
    m = get_model("llama-3.1-8b")
    assert (m.name, m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.ffn, m.vocab, m.context) == (
        "Llama 3.1 8B",
        32,
        4096,
        32,
        8,
        128,
        14_336,
        128_256,
        131_072,
    )


def test_an_unknown_model_id_is_refused_with_the_known_ids() -> None:
    with pytest.raises(UnknownModel, match="llama-3.1-8b"):
        get_model("gpt-5")


def test_a_custom_architecture_is_accepted_wherever_an_id_is() -> None:
    arch = Architecture(layers=2, hidden=64, heads=4, ffn=128, vocab=100)
    assert get_model(arch) is arch
    assert arch.kv_heads == 4 and arch.head_dim == 16


def test_an_architecture_as_the_api_returns_it_validates_again() -> None:
    dumped = get_model("mixtral-8x7b").model_dump()
    assert Architecture.model_validate(dumped).parameters == get_model("mixtral-8x7b").parameters


def test_a_changed_copy_recounts_its_parameters() -> None:
    base = get_model("llama-3.1-8b")
    assert base.model_copy(update={"layers": 16}).parameters < base.parameters


@pytest.mark.parametrize(
    ("fields", "words"),
    [({"kv_heads": 3}, "multiple of kv_heads"), ({"experts": 2, "experts_per_token": 3}, "cannot exceed")],
)
def test_an_impossible_architecture_is_refused_in_words(fields: dict[str, int], words: str) -> None:
    with pytest.raises(ValidationError, match=words):
        Architecture(layers=2, hidden=64, heads=4, ffn=128, vocab=100, **fields)


def test_the_catalog_holds_the_six_models_of_the_issue() -> None:
    assert set(CATALOG) == {
        "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "mistral-7b", "mixtral-8x7b", "gpt-3-175b"
    }


def test_h100_figures_are_the_datasheet_dense_figures() -> None:
    """H100 SXM5 datasheet: 80 GB, 3.35 TB/s, 989 / 1,979 / 495 / 67 TFLOPS dense, 700 W, 132 SMs."""
    h100 = get_gpu("h100")
    assert (h100.memory_bytes, h100.bandwidth, h100.tdp_watts, h100.sms) == (80 * GB, 3.35 * TB, 700, 132)
    assert h100.peak_flops["bf16"] == 989 * TFLOPS and h100.peak_flops["fp8"] == 1979 * TFLOPS
    assert h100.peak_flops["tf32"] == 495 * TFLOPS and h100.peak_flops["fp32"] == 67 * TFLOPS
    assert h100.nvlink_bandwidth == 450 * GB
    assert h100.pcie_bandwidth == pytest.approx(63e9, rel=0.01)  # the datasheet rounds


def test_every_gpu_has_the_fields_lessons_use() -> None:
    for gpu in GPUS.values():
        assert gpu.name and gpu.memory_bytes > 0 and gpu.bandwidth > 0 and gpu.peak_flops["bf16"] > 0
        assert gpu.tdp_watts > 0 and gpu.nvlink_bandwidth > gpu.pcie_bandwidth > 0


def test_generations_differ_where_the_datasheets_say() -> None:
    """A100: 2.039 TB/s, 312 TFLOPS bf16, no FP8; H200: 141 GB at 4.8 TB/s with H100 compute."""
    a100, h100, h200 = get_gpu("a100"), get_gpu("h100"), get_gpu("h200")
    assert a100.bandwidth < h100.bandwidth < h200.bandwidth
    assert h200.peak_flops == h100.peak_flops and h200.memory_bytes == 141 * GB
    assert "fp8" not in a100.peak_flops and compute_precision(a100, "fp8") == "fp16"


def test_int4_weights_compute_at_the_16_bit_rate_and_fp32_as_tf32() -> None:
    h100 = get_gpu("h100")
    assert peak_flops(h100, "int4") == 989 * TFLOPS
    assert peak_flops(h100, "fp32") == 495 * TFLOPS


def test_an_unknown_gpu_is_refused_in_words() -> None:
    with pytest.raises(EngineError, match="Known GPUs: h100, a100, h200"):
        get_gpu("b200")


def test_an_80gb_card_holds_80_gib_and_cuda_sees_81_559_mib_but_plans_use_80_gb() -> None:
    """The box's "80GB" is binary; the planning budget is a named 80 × 10⁹ bytes (hardware.py says why)."""
    h100 = node().gpu
    assert (h100.physical_memory_bytes, h100.cuda_memory_bytes) == (80 * GiB, 81_559 * MiB)
    assert h100.physical_memory_bytes / GB == pytest.approx(85.9, abs=0.05)  # to the 0.1 GB printed
    assert h100.cuda_memory_bytes / GB == pytest.approx(85.5, abs=0.05)
    assert h100.memory_bytes == 80 * GB < h100.cuda_memory_bytes < h100.physical_memory_bytes


def test_dgx_1_is_eight_h100s_two_xeons_2_tib_and_10_2_kw() -> None:
    """NVIDIA DGX BasePOD reference architecture ("2 TB", 32 × 64 GiB DIMMs = 2 TiB); DGX H100 user guide."""
    dgx = node()
    assert dgx is DGX_H100 and dgx.id == "dgx-1"
    assert (dgx.gpus, dgx.gpu.id, dgx.system_memory_bytes, dgx.max_power_watts) == (8, "h100", 2 * TiB, 10_200)
    assert dgx.network.links == 8 and dgx.network.link.bandwidth == NETWORK_400G.bandwidth == 50 * GB
    assert dgx.nvme.data_drives == 8


def test_the_xeon_peaks_are_the_arithmetic_ones_for_two_sockets() -> None:
    """56 cores × 1,024 (AMX) or 64 (AVX-512) FLOPs/cycle × 2.0 GHz; 8 × 4,400 MT/s × 8 B, per socket.

    DDR5-4800 runs at 4,400 MT/s with two DIMMs a channel, as the DGX H100's 32 DIMMs are.
    """
    cpu = node().cpu
    assert cpu.cores == 112
    assert cpu.peak_flops_bf16_amx == pytest.approx(2 * 115e12, rel=0.01)  # the datasheet rounds
    assert cpu.peak_flops_fp32_avx512 == pytest.approx(2 * 7.2e12, rel=0.01)  # the datasheet rounds
    assert cpu.memory_bandwidth == pytest.approx(563.2e9, rel=0.001)  # 2 × 8 channels × 4,400 MT/s × 8 B, exact
