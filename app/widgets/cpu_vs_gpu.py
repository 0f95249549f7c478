"""CPU vs GPU: dgx-1's two Xeons against its H100s, as specifications or as the same work timed on each."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, field_validator

from app.engine.chips import (
    CPU_PEAK_NAMES,
    ChipSpecs,
    CpuPeak,
    Workload,
    WorkloadTiming,
    chip_specs,
    cpu_peak,
    workload_timing,
)
from app.engine.hardware import HBM_ACHIEVED_SHARE
from app.engine.models import check_model_id
from app.engine.text import flops_rate, gb, gb_s, seconds, tb_s
from app.widgets._fields import MODEL_OPTIONS
from app.widgets.base import Widget, one_of

BAR_LEFT, BAR_RIGHT, BAR_WIDTH_UNITS = 96, 356, 360  # SVG units: labels, then bars up to BAR_RIGHT


WORKLOADS: list[tuple[str, str]] = [
    ("prefill", "A prompt's prefill"),
    ("train-step", "One training step"),
    ("decode", "Decode steps (generating tokens)"),
]


class Params(BaseModel):
    """Which view, and for the timing the work, its size and the CPU peak compared."""

    view: Literal["specs", "timing"] = Field(
        default="specs", description="specs: the chips; timing: the same work on each"
    )
    cpu_peak: CpuPeak = Field(default="avx512-fp32", description="Which CPU peak: AVX-512 FP32 or AMX BF16")
    gpus: Annotated[int, one_of(1, 8)] = Field(
        default=1, description="GPUs on the GPU side: one, or all eight"
    )
    model: str = Field(default="llama-3.1-8b", description="Catalog model id (timing)")
    workload: Workload = Field(
        default="prefill",
        description="The work (timing): a prompt's prefill, one training step, or decode steps",
    )
    tokens: int = Field(
        default=2048,
        ge=1,
        le=131_072,
        description="Tokens a sequence (timing): the prompt, the training sequence, or the tokens generated",
    )
    batch: int = Field(default=1, ge=1, le=4096, description="Sequences at once (timing)")

    @field_validator("model")
    @classmethod
    def _known(cls, value: str) -> str:
        return check_model_id(value)


class Bar(BaseModel):
    """A labelled horizontal bar."""

    key: str
    label: str
    value: str
    y: float
    width: float
    css: str
    text_x: float
    inside: bool = Field(description="The value is written inside the bar (long bars), else after it")


class BarGroup(BaseModel):
    """Bars on one linear scale, with a caption for screen readers."""

    title: str
    bars: list[Bar]
    height: float
    caption: str


class Result(BaseModel):
    """What the template shows for either view."""

    view: str
    models: list[tuple[str, str]] = Field(default=MODEL_OPTIONS, description="Catalog models to pick from")
    peak_options: list[tuple[str, str]] = [(k, f"{v}") for k, v in CPU_PEAK_NAMES.items()]
    workload_options: list[tuple[str, str]] = WORKLOADS
    gpu_options: list[tuple[str, str]] = [("1", "one H100"), ("8", "all eight H100s")]
    specs: ChipSpecs
    timing: WorkloadTiming
    work: str = Field(description="The timed work in words: The prefill of one prompt of 2,048 tokens")
    pace: str = Field(description="What sets the pace on each side, in a sentence")
    capacity_note: str = Field(description="When the weights outgrow one H100 or all eight, that said plainly")
    gpus: int
    cpu_peak_name: str
    cpu_peak_flops: float
    gpu_side_flops: float
    gpu_side_bandwidth: float
    flops_ratio: float = Field(description="The GPU side's bf16 tensor-core peak ÷ the compared CPU peak")
    like_ratio: float = Field(
        description="Like for like: fp32 vector peak ÷ fp32 vector peak, or bf16 matrix ÷ bf16 matrix (AMX)"
    )
    bandwidth_ratio: float
    refusal: str = Field(description="Timing, when the weights do not fit one H100: that, said first; else empty")
    one_gpu_runs: bool = Field(description="The weights fit in one H100's memory")
    node_runs: bool = Field(description="The weights fit in all of dgx-1's H100s together")
    groups: list[BarGroup]
    decode_read: WorkloadTiming = Field(description="One decode step of one sequence: one token's read of the weights")
    achieved_share: float = Field(default=HBM_ACHIEVED_SHARE, description="Share of peak HBM bandwidth achieved")
    bar_left: int = BAR_LEFT
    track_width: int = BAR_RIGHT - BAR_LEFT
    chart_width: int = BAR_WIDTH_UNITS


def _bars(title: str, rows: list[tuple[str, str, float, str, str]], caption: str) -> BarGroup:
    """Rows of (key, label, value, text, css) drawn to scale against the largest value."""
    top = max(v for _, _, v, _, _ in rows) or 1.0
    bars = []
    for i, (key, label, value, text, css) in enumerate(rows):
        width = round(max(1.0, (BAR_RIGHT - BAR_LEFT) * value / top), 2)
        inside = width > (BAR_RIGHT - BAR_LEFT) * 0.6
        text_x = BAR_LEFT + width - 6 if inside else BAR_LEFT + width + 6
        bars.append(Bar(key=key, label=label, value=text, y=8 + i * 30, width=width, css=css, text_x=text_x,
                        inside=inside))
    return BarGroup(title=title, bars=bars, height=8 + len(rows) * 30, caption=caption)


def _rate(value: float) -> str:
    """FLOP/s with a decimal when the figure is small (14.3 TFLOPS), none when large (989 TFLOPS)."""
    return flops_rate(value, 0 if 1e14 <= value < 1e15 else 1)


def _spec_groups(s: ChipSpecs, which: CpuPeak, gpus: int, gpu_flops: float, gpu_bw: float) -> list[BarGroup]:
    side = "1 × H100" if gpus == 1 else "8 × H100"
    whole = "one H100" if gpus == 1 else "dgx-1's eight H100s"
    peak = cpu_peak(which)
    flops = _bars("Peak FLOPS", [
        ("cpu", f"CPUs ({'AVX-512' if which == 'avx512-fp32' else 'AMX'})", peak, _rate(peak), "bar-cpu"),
        ("gpu", side, gpu_flops, _rate(gpu_flops), "bar-gpu"),
    ], f"The CPUs' {CPU_PEAK_NAMES[which]}: {_rate(peak)}; {whole} in bf16: {_rate(gpu_flops)}.")
    bandwidth = _bars("Memory bandwidth", [
        ("cpu", "CPUs", s.cpu_bandwidth, gb_s(s.cpu_bandwidth), "bar-cpu"),
        ("gpu", side, gpu_bw, tb_s(gpu_bw), "bar-gpu"),
    ], f"The CPUs' DDR5: {gb_s(s.cpu_bandwidth)}; {whole}: {tb_s(gpu_bw)}.")
    return [flops, bandwidth]


def _work(t: WorkloadTiming) -> str:
    """The timed work in words, as the start of a sentence."""
    if t.workload == "prefill":
        prompts = "one prompt" if t.batch == 1 else f"{t.batch:,} prompts"
        return f"The prefill of {prompts} of {t.tokens:,} tokens"
    if t.workload == "train-step":
        return f"One training step on {t.batch:,} {'sequence' if t.batch == 1 else 'sequences'} of {t.tokens:,} tokens"
    each = "one sequence" if t.batch == 1 else f"each of {t.batch:,} sequences at once"
    return f"Generating {t.tokens:,} {'token' if t.tokens == 1 else 'tokens'} for {each} (one decode step a token)"


def _pace(t: WorkloadTiming) -> str:
    """Which bound sets each side's time."""
    words = {"compute": "the maths", "memory-bandwidth": "reading the weights"}
    if t.cpu.binds == t.gpu.binds == "compute":
        return "Maths sets the pace on both sides: the time is the maths to do (FLOPs) ÷ the rate (FLOPS)."
    if t.cpu.binds == t.gpu.binds:
        return ("Reading the weights sets the pace on both sides, so the GPU leads by its bandwidth, not its "
                "FLOPS; a bigger batch does more maths for each read.")
    return f"On the CPUs {words[t.cpu.binds]} sets the pace; on one H100 {words[t.gpu.binds]} does."


def _capacity_note(t: WorkloadTiming, s: ChipSpecs) -> str:
    """Timing is arithmetic; said first, when the weights would not even fit on the GPU side."""
    one, node = s.gpu_memory_bytes, s.gpu_memory_bytes * s.gpus_in_node
    if t.weight_bytes <= one:
        return ""
    if t.weight_bytes <= node:
        return (f"{t.model}'s {gb(t.weight_bytes)} of weights do not fit in one H100's {gb(one, 0)}, so it does not "
                f"run on one H100: that time is arithmetic only. Split over all {s.gpus_in_node} they "
                "fit.")
    return (f"{t.model}'s {gb(t.weight_bytes)} of weights do not fit even in all {s.gpus_in_node} H100s "
            f"({gb(node, 0)} together), so it runs on neither: the GPU times are arithmetic only.")


def _timing_groups(t: WorkloadTiming, one_runs: bool, node_runs: bool) -> list[BarGroup]:
    work = _work(t)
    cannot = [side for side, runs in (("one H100", one_runs), (f"{t.node_gpus} H100s", node_runs)) if not runs]
    arithmetic = f" (arithmetic only for {' and '.join(cannot)}: the weights do not fit)" if cannot else ""
    times = _bars(f"{work}: time on each{arithmetic}", [
        ("cpu", "CPUs", t.cpu.seconds, seconds(t.cpu.seconds), "bar-cpu"),
        ("gpu", "1 × H100", t.gpu.seconds, seconds(t.gpu.seconds), "bar-gpu"),
        ("node", f"{t.node_gpus} × H100", t.node.seconds, seconds(t.node.seconds), "bar-node"),
    ], f"CPUs ({t.cpu_peak_name}) {seconds(t.cpu.seconds)}; one H100 "
       f"{seconds(t.gpu.seconds)}; {t.node_gpus} H100s {seconds(t.node.seconds)}.")
    times_read = "once" if t.weight_reads == 1 else f"{t.weight_reads:,} times"
    reads = _bars(f"Reading the weights {times_read}, at each memory's datasheet peak{arithmetic}", [
        ("cpu", "CPUs", t.cpu.memory_seconds, seconds(t.cpu.memory_seconds), "bar-cpu"),
        ("gpu", "1 × H100", t.gpu.memory_seconds, seconds(t.gpu.memory_seconds), "bar-gpu"),
    ], f"At each memory's bandwidth: CPUs {seconds(t.cpu.memory_seconds)}; one H100 "
       f"{seconds(t.gpu.memory_seconds)}.")
    return [times, reads]


def compute(params: Params) -> Result:
    """Specs and the work's timing from the engine, with bars to scale."""
    s = chip_specs()
    t = workload_timing(params.model, params.workload, params.tokens, params.batch, params.cpu_peak)
    gpu_flops = s.gpu_peak_bf16 * params.gpus
    gpu_bw = s.gpu_bandwidth * params.gpus
    like = (s.gpu_peak_fp32 if params.cpu_peak == "avx512-fp32" else s.gpu_peak_bf16) * params.gpus
    one_runs = t.weight_bytes <= s.gpu_memory_bytes
    node_runs = t.weight_bytes <= s.gpu_memory_bytes * s.gpus_in_node
    groups = (_spec_groups(s, params.cpu_peak, params.gpus, gpu_flops, gpu_bw) if params.view == "specs"
              else _timing_groups(t, one_runs, node_runs))
    note = _capacity_note(t, s)
    return Result(
        view=params.view, specs=s, timing=t,
        work=_work(t), pace=_pace(t), capacity_note=note, gpus=params.gpus,
        cpu_peak_name=CPU_PEAK_NAMES[params.cpu_peak], cpu_peak_flops=t.cpu_peak_flops,
        gpu_side_flops=gpu_flops, gpu_side_bandwidth=gpu_bw, flops_ratio=gpu_flops / t.cpu_peak_flops,
        like_ratio=like / t.cpu_peak_flops, bandwidth_ratio=gpu_bw / s.cpu_bandwidth, groups=groups,
        refusal=note if params.view == "timing" else "", one_gpu_runs=one_runs, node_runs=node_runs,
        decode_read=workload_timing(params.model, "decode", 1, 1, params.cpu_peak),
    )


WIDGET = Widget(
    name="cpu-vs-gpu",
    title="dgx-1's CPUs against its GPUs",
    params=Params,
    compute=compute,
    template="widgets/cpu-vs-gpu.html",
    description="Cores against lanes, peak FLOPS and memory bandwidth side by side (view: specs), or "
    "the same prefill, training step or decode batch timed on each (view: timing): FLOPs ÷ FLOPS, "
    "floored by the time to read the weights, naming the CPU peak compared.",
)
