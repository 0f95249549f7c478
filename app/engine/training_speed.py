"""Training speed: how long a step takes on a tensor × pipeline × context × data parallel layout, and the MFU
that follows (an output of the plan, unless the request gives one).

A step of one data-parallel replica is its micro-batches; each GPU does its share of their work:

- matrix multiplies: 6·N FLOPs a token (8·N with full recomputation, which reruns the forward pass), at the
  GPU's measured matrix-multiply share (MAMF);
- attention: the causal QKᵀ and AV products, forward once and backward twice (3 × the prefill count, as
  FlashAttention's backward does), once more when selective or full recomputation reruns the forward, at
  FlashAttention-2's share of the 16-bit peak;
- other work (norms, activation functions, residuals, RoPE, casts, the loss and the optimizer step), which is
  memory-bound and grows with layers × width while the matrix multiplies grow with layers × width²: charged
  as NON_MATMUL_BYTES of HBM traffic a token, a layer and a unit of width, at the achieved HBM bandwidth. This
  is what makes small models reach a lower MFU than large ones;
- tensor parallel: with sequence parallel, an all-gather and a reduce-scatter of the activations around
  attention and around the MLP, forward and backward (and again in a full recomputation), not overlapped;
- data parallel / ZeRO / FSDP: gradient reduce-scatter (or all-reduce) and, under ZeRO-3, weight all-gathers
  forward and backward, overlapped with the compute: only what exceeds it shows;
- pipeline: the bubble of the schedule, (p−1)/(m+p−1) of the step for 1F1B, (p−1)/(v·m+p−1) interleaved;
- context parallel: ring attention passes the K/V blocks while the attention computes (overlapped; not
  charged);
- fp8 (Float8 training): the matrix multiplies and the element-wise work fused around them (casts, scales) run
  `fp8_speedup` × faster; attention stays in bf16 and communication is unchanged. torchtitan measured 1.28×
  for a whole 8B step at 8,192 tokens (workload.FP8_SPEEDUP), where those two are most of it.

MFU counts model FLOPs only: 6·N·D plus causal attention forward and backward (3 × 2·L·h·T a token), whatever
is recomputed. PaLM (Chowdhery et al. 2022, app. B) and torchtitan count attention without the causal halving
(12·L·H·Q·T a token), which reads higher at long sequences.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from app.engine import collectives
from app.engine.compute import attention_flops, training_model_flops
from app.engine.hardware import GPU, achieved_bandwidth, peak_flops
from app.engine.models import Architecture
from app.engine.training_state import training_precision
from app.engine.workload import FP8_SPEEDUP, PlanRequest

# Other (non-matmul) work, as bytes of HBM traffic per token, per layer and per unit of hidden width, fitted
# once to torchtitan's Llama 3.1 8B on 8 H100 with FSDP, 2 × 8,192 tokens, selective recomputation and
# torch.compile: 6,667 tokens a second a GPU (pytorch/torchtitan, benchmarks/llama3_h100_202412_torchtitan.md)
# leaves 64 µs a token beyond the matrix multiplies and attention at their measured shares. Every other
# training anchor on /numbers (torchtitan's 70B and 405B, Llama 3's 405B MFU) is a check of this one figure.
NON_MATMUL_BYTES = 1130.0
# Sequence-parallel collectives a layer and micro-batch: an all-gather and a reduce-scatter around attention
# and around the MLP forward (4), the same backward (4), and the forward again under full recomputation (4)
# (Korthikanti et al. 2022, "Reducing activation recomputation in large transformer models", section 4.2.2).
TP_COLLECTIVES_FORWARD = 4


class TrainingSpeed(BaseModel):
    """One training step of the plan's layout, where its time goes, and the MFU it reaches."""

    model_config = ConfigDict(frozen=True)

    data_parallel: int = Field(description="Replicas of the model: GPUs ÷ (tensor × pipeline × context)")
    microbatches: int = Field(description="Micro-batches a step (one without pipeline stages)")
    tokens_per_step: float = Field(description="Tokens a step, all replicas together")
    matmul_seconds: float = Field(description="A GPU's matrix multiplies in a step, recomputation included")
    attention_seconds: float = Field(description="A GPU's attention in a step, recomputation included")
    other_seconds: float = Field(description="A GPU's memory-bound other work in a step")
    recompute_seconds: float = Field(description="The part of the above that recomputation adds")
    tensor_parallel_seconds: float = Field(description="Tensor-parallel collectives in a step (not overlapped)")
    data_parallel_seconds: float = Field(description="Gradient and weight collectives in a step, before overlap")
    exposed_data_parallel_seconds: float = Field(description="The part of them the compute does not hide")
    bubble: float = Field(description="Share of the step the pipeline schedule leaves a GPU idle")
    step_seconds: float = Field(description="One step, all of the above")
    model_flops_per_token: float = Field(description="6·N + causal attention forward and backward, a token")
    tokens_per_second: float = Field(description="Training tokens a second, all GPUs")
    mfu: float = Field(description="Model FLOPs ÷ (time × GPUs × the peak MFU is taken against)")
    peak: float = Field(description="The peak MFU is taken against, a GPU (fp8: bf16 × fp8_speedup)")


def attention_forward_flops_per_token(arch: Architecture, context: int) -> float:
    """Causal attention forward a token, averaged over a sequence of `context`: 4 × width × context ÷ 2 a layer
    (the prefill count of app.engine.compute.attention_flops ÷ tokens)."""
    return attention_flops(arch, context) / context


def model_flops_per_token(arch: Architecture, context: int) -> float:
    """What MFU counts a token: 6·N plus causal attention, forward and backward (compute.training_model_flops)."""
    return training_model_flops(arch, 1, context)


def bubble(req: PlanRequest) -> float:
    """Idle share of a step: (p−1)/(m+p−1) for 1F1B, (p−1)/(v·m+p−1) interleaved; 0 without stages."""
    p, m = req.pipeline_parallel, req.microbatches
    if p == 1:
        return 0.0
    v = req.pipeline_virtual_stages if req.pipeline_schedule == "interleaved" else 1
    return (p - 1) / (v * m + p - 1)


def _data_parallel_seconds(arch: Architecture, req: PlanRequest, working: str) -> float:
    """Gradient reduce-scatter (ZeRO-2/3) or all-reduce (none, ZeRO-1), and ZeRO-3's weight all-gathers
    forward and backward, over the GPUs that hold the same part of the model."""
    group = (req.gpus // req.model_parallel) * req.context_parallel
    if group <= 1:
        return 0.0
    width = 4 if working == "fp32" else 2
    nbytes = arch.parameters / (req.tensor_parallel * req.pipeline_parallel) * width
    if req.sharding in ("zero2", "zero3"):
        grads = collectives.seconds("reduce-scatter", nbytes, group)
    else:
        grads = collectives.seconds("all-reduce", nbytes, group)
    gathers = 2 * collectives.seconds("all-gather", nbytes, group) if req.sharding == "zero3" else 0.0
    return grads + gathers


def training_speed(arch: Architecture, req: PlanRequest, gpu: GPU) -> TrainingSpeed:
    """The step time of the request's layout on `gpu`, where it goes, and the MFU it reaches."""
    working = training_precision(req.optimizer, req.precision)
    fp8 = working == "fp8" and "fp8" in gpu.peak_flops
    sixteen = peak_flops(gpu, "fp32" if working == "fp32" else "bf16")
    peak = sixteen * (req.fp8_speedup if fp8 else 1.0)
    ckpt = req.activation_checkpointing
    m = req.microbatches
    split = req.model_parallel  # GPUs sharing one replica's work
    replica_tokens = req.batch_size * req.context_tokens * m
    share = replica_tokens / split  # a GPU's share of the replica's tokens, in token-equivalents of work

    speedup = req.fp8_speedup if fp8 else 1.0
    forward_mm = 2 * arch.active_parameters * share / (sixteen * gpu.matmul_efficiency)
    matmul = forward_mm * (4 if ckpt == "full" else 3)
    attn_forward = attention_forward_flops_per_token(arch, req.context_tokens) * share / (
        sixteen * gpu.attention_efficiency
    )
    attention = attn_forward * (3 if ckpt == "none" else 4)
    other_forward = NON_MATMUL_BYTES * arch.layers * arch.hidden * share / 3 / achieved_bandwidth(gpu)
    other = other_forward * (4 if ckpt == "full" else 3)
    recompute = (forward_mm + other_forward if ckpt == "full" else 0.0) + (attn_forward if ckpt != "none" else 0.0)

    tp = 0.0
    if req.tensor_parallel > 1:
        act = 4 if working == "fp32" else 2
        nbytes = req.batch_size * req.context_tokens / req.context_parallel * arch.hidden * act
        calls = TP_COLLECTIVES_FORWARD * (3 if ckpt == "full" else 2) // 2
        pair = collectives.seconds("all-gather", nbytes, req.tensor_parallel) + collectives.seconds(
            "reduce-scatter", nbytes, req.tensor_parallel
        )
        tp = calls * pair * arch.layers / req.pipeline_parallel * m

    sped = (forward_mm + other_forward if ckpt == "full" else 0.0) * (1 / speedup - 1)
    matmul, other, recompute = matmul / speedup, other / speedup, recompute + sped
    work = matmul + attention + other + tp
    idle = bubble(req)
    dp = _data_parallel_seconds(arch, req, working)
    exposed = max(0.0, dp - work)
    step = work / (1 - idle) + exposed
    tokens_per_step = replica_tokens * (req.gpus // split)
    per_token = model_flops_per_token(arch, req.context_tokens)
    rate = tokens_per_step / step
    return TrainingSpeed(
        data_parallel=req.gpus // split, microbatches=m, tokens_per_step=tokens_per_step, matmul_seconds=matmul,
        attention_seconds=attention, other_seconds=other, recompute_seconds=recompute, tensor_parallel_seconds=tp,
        data_parallel_seconds=dp, exposed_data_parallel_seconds=exposed, bubble=idle, step_seconds=step,
        model_flops_per_token=per_token, tokens_per_second=rate, mfu=rate * per_token / (req.gpus * peak),
        peak=peak,
    )


__all__ = ["FP8_SPEEDUP", "TrainingSpeed", "bubble", "model_flops_per_token", "training_speed"]
