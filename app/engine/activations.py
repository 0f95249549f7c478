"""Activations: what the transformer blocks and the loss head keep for the backward pass in training, and the
prefill workspace in serving, a token at a time."""

from __future__ import annotations

import math

from app.engine.errors import EngineError
from app.engine.models import Architecture
from app.engine.workload import CHECKPOINTING_MODES

# A serving step carries at most this many tokens, decodes and prefill chunks together (chunked prefill):
# vLLM's max_num_batched_tokens and TensorRT-LLM's max_num_tokens both default to 8,192 for online serving on
# large GPUs (vLLM engine arguments; TensorRT-LLM build options). A longer prefill runs in chunks of it, so the
# prefill workspace never holds more.
STEP_TOKEN_BUDGET = 8192

# Activations and logits in serving are 16-bit (fp32 when the weights are fp32); logits are fp32.
LOGIT_BYTES = 4


def activation_bytes_per_element(precision: str) -> int:
    """Activations are 16-bit in mixed precision and with quantized weights; fp32 with fp32 weights."""
    return 4 if precision == "fp32" else 2


# One transformer block's tensors that autograd keeps for the backward pass, per token of the
# micro-batch, in a Llama-style block as it is trained today: pre-norm (RMSNorm), RoPE, FlashAttention
# (the s x s score matrix is never stored: its backward recomputes it from Q, K, V, the output and the
# softmax's log-sum-exp; Dao et al. 2022), grouped-query attention (K and V are kv_heads wide),
# a gated SwiGLU MLP, no dropout (Llama 3's attention_dropout is 0.0) and, in a mixture of experts,
# each token's k routed experts. "act" is the activation width: 2 bytes (bf16/fp16, fp8 training
# keeps bf16 activations) or 4 (fp32). d = hidden, q = heads x head_dim, kv = kv_heads x head_dim,
# f = ffn, k = experts a token. Which checkpointing mode keeps it:
#
# | tensor                                   | a token | bytes | none | selective | full |
# | block input x (norm 1 input, residual)   | d       | act   | yes  | yes       | yes  |
# | norm 1 statistic (1/rms; LayerNorm: +mean)| 1 (2)  | 4     | yes  | -         | -    |
# | norm 1 output (input of Q, K, V)         | d       | act   | yes  | -         | -    |
# | Q, K, V projections (attention inputs)   | q + 2kv | act   | yes  | yes       | -    |
# | attention output (input of O projection) | q       | act   | yes  | -         | -    |
# | softmax log-sum-exp (FlashAttention)     | heads   | 4     | yes  | -         | -    |
# | x + attention (norm 2 input, residual)   | d       | act   | yes  | yes       | -    |
# | norm 2 statistic                         | 1 (2)   | 4     | yes  | -         | -    |
# | norm 2 output (input of the MLP)         | d       | act   | yes  | -         | -    |
# | router logits (MoE only)                 | experts | 4     | yes  | yes       | -    |
# | gate projection (SwiGLU) / fc1 (GELU)    | k.f     | act   | yes  | yes       | -    |
# | up projection (SwiGLU only)              | k.f     | act   | yes  | yes       | -    |
# | SiLU(gate) / GELU(fc1)                   | k.f     | act   | yes  | -         | -    |
# | SiLU(gate) x up (input of down, SwiGLU)  | k.f     | act   | yes  | -         | -    |
#
# Llama 3.1 8B in bf16: none 168,072 B a token a layer (41 x d), selective 86,016 (21 x d), full 8,192.
# Selective keeps the matrix multiplies' outputs and recomputes the cheap element-wise parts and the
# attention (torchtitan's and Megatron's selective checkpointing); full keeps the block input and
# reruns the whole block. In the backward pass the layer being worked on holds what was recomputed:
# one layer's "none" tensors beyond what the mode keeps, counted once on top of the L layers.
#
# The textbook L·s·b·h·(34 + 5·a·s/h) (Korthikanti et al. 2022, the Ultra-Scale Playbook) is the
# pre-FlashAttention case: it stores the a x s x s score matrix and its softmax (5·a·s/h), dropout
# masks, full multi-head K and V and a 4h GELU MLP. korthikanti_activation_bytes keeps it for comparison.
Keep = tuple[bool, bool, bool]
_ALL: Keep = (True, True, True)
_SELECTIVE: Keep = (True, True, False)
_NONE_ONLY: Keep = (True, False, False)


def layer_tensors(arch: Architecture, precision: str) -> list[tuple[str, int, Keep]]:
    """(tensor, bytes a token, kept by none/selective/full) for one block, as the table above lists them."""
    act = activation_bytes_per_element(precision)
    d, heads = arch.hidden, arch.heads
    q, kv = heads * arch.n_head_dim, arch.n_kv_heads * arch.n_head_dim
    stat = 4 * (2 if arch.norm == "layernorm" else 1)
    kf = arch.experts_per_token * arch.ffn
    rows: list[tuple[str, int, Keep]] = [
        ("block input", d * act, _ALL),
        ("norm 1 statistic", stat, _NONE_ONLY),
        ("norm 1 output", d * act, _NONE_ONLY),
        ("Q, K, V projections", (q + 2 * kv) * act, _SELECTIVE),
        ("attention output", q * act, _NONE_ONLY),
        ("softmax log-sum-exp", heads * 4, _NONE_ONLY),
        ("x + attention", d * act, _SELECTIVE),
        ("norm 2 statistic", stat, _NONE_ONLY),
        ("norm 2 output", d * act, _NONE_ONLY),
    ]
    if arch.experts > 1:
        rows.append(("router logits", arch.experts * 4, _SELECTIVE))
    if arch.gated_mlp:
        rows += [
            ("gate projection", kf * act, _SELECTIVE),
            ("up projection", kf * act, _SELECTIVE),
            ("SiLU(gate)", kf * act, _NONE_ONLY),
            ("SiLU(gate) x up", kf * act, _NONE_ONLY),
        ]
    else:
        rows += [("fc1 output", kf * act, _SELECTIVE), ("GELU(fc1)", kf * act, _NONE_ONLY)]
    return rows


def layer_activation_bytes(arch: Architecture, precision: str, checkpointing: str) -> int:
    """Bytes a token that one block keeps for the backward pass under a checkpointing mode."""
    i = _checkpointing_index(checkpointing)
    return sum(nbytes for _, nbytes, keep in layer_tensors(arch, precision) if keep[i])


def _checkpointing_index(checkpointing: str) -> int:
    """0, 1, 2 for none, selective, full."""
    try:
        return CHECKPOINTING_MODES.index(checkpointing)
    except ValueError:
        raise EngineError(
            f"Unknown activation checkpointing '{checkpointing}'. Known: {', '.join(CHECKPOINTING_MODES)}."
        ) from None


def training_activation_bytes(
    arch: Architecture, seq: int, batch: int, checkpointing: str, precision: str
) -> int:
    """Activations of the transformer blocks kept for the backward pass on one GPU.

    L layers keep what the mode keeps (the table above); the layer the backward pass is working on
    also holds what its recomputation rebuilt: (L - 1) x kept + one layer's "none" tensors, a token.
    """
    kept = layer_activation_bytes(arch, precision, checkpointing)
    working = layer_activation_bytes(arch, precision, "none")
    return (arch.layers - 1) * kept * seq * batch + working * seq * batch


# The loss head, per token of the micro-batch, at its peak (end of the forward pass and start of the
# backward pass; checkpointing wraps the blocks, not the head, so every mode keeps it):
#
# | tensor                                     | a token | bytes        |
# | final norm input and output (LM head input)| 2 x d   | act          |
# | logits from the LM head                    | vocab   | act (16-bit) |
# | fp32 logits / log-probabilities (the loss) | vocab   | 4            |
# | their gradient, fp32                       | vocab   | 4            |
#
# Llama 3.1 8B, 32,768 tokens: 32,768 x 128,256 x 4 B = 16.8 GB of fp32 logits and as much again for
# their gradient (torchtitan computes cross-entropy on pred.float()).
LOSS_FP32_BYTES = 4


def loss_head_bytes(arch: Architecture, seq: int, batch: int, precision: str) -> int:
    """Final norm, logits in 16 and 32 bits, and the logits' fp32 gradient for every token of a micro-batch."""
    act = activation_bytes_per_element(precision)
    per_token = 2 * arch.hidden * act + arch.vocab * (act + 2 * LOSS_FP32_BYTES)
    return per_token * seq * batch


def korthikanti_activation_bytes(arch: Architecture, seq: int, batch: int, recompute: bool) -> int:
    """The pre-FlashAttention textbook: L·s·b·h·(34 + 5·a·s/h) bytes, or 2·s·b·h·L with full recomputation.

    Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models"; the
    Ultra-Scale Playbook. It stores the attention score matrix (5·a·s/h), dropout masks, full multi-head
    K/V and a 4h MLP: 16-bit activations of a GPT-style block of 2022.
    """
    L, s, b, h, a = arch.layers, seq, batch, arch.hidden, arch.heads
    per = 2.0 if recompute else 34 + 5 * a * s / h
    return math.ceil(L * s * b * h * per)


def serving_workspace_bytes(arch: Architecture, batch: int, prompt: int, tp: int, precision: str) -> int:
    """Transient activations while the whole batch's prompts are prefilled at once, on one GPU.

    One layer's activations at a time: the residual stream and its normalised copy (2·d a token, on
    every GPU) and the Q/K/V/output projections and MLP hidden layer (split across tensor-parallel
    GPUs), plus fp32 logits of the last token of each sequence. Prefill runs in chunks of at most
    STEP_TOKEN_BUDGET tokens (chunked prefill), so the workspace holds one chunk.
    """
    q, kv = arch.heads * arch.n_head_dim, arch.n_kv_heads * arch.n_head_dim
    mlp = arch.experts_per_token * arch.ffn * (2 if arch.gated_mlp else 1)
    per_token = 2 * arch.hidden + math.ceil((q + 2 * kv + arch.hidden + mlp) / tp)
    tokens = min(batch * prompt, STEP_TOKEN_BUDGET)
    logits = batch * math.ceil(arch.vocab / tp) * LOGIT_BYTES
    return tokens * per_token * activation_bytes_per_element(precision) + logits
