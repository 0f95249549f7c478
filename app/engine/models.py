"""The model catalog: transformer architectures and the parameter counts that follow from them."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from app.engine.errors import UnknownModel


class Architecture(BaseModel):
    """A decoder-only transformer, described the way its config.json describes it."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    id: str = Field(default="custom", max_length=64, description="Catalog id, or 'custom'")
    name: str = Field(default="Custom model", max_length=80, description="Name to show a learner")
    layers: int = Field(ge=1, le=1024, description="Transformer blocks")
    hidden: int = Field(ge=1, le=131_072, description="Width of the residual stream (d_model)")
    heads: int = Field(ge=1, le=1024, description="Attention (query) heads")
    kv_heads: int | None = Field(
        default=None, ge=1, le=1024, description="Key/value heads (grouped-query attention); default: heads"
    )
    head_dim: int | None = Field(
        default=None, ge=1, le=1024, description="Width of one head; default: hidden ÷ heads"
    )
    ffn: int = Field(ge=1, le=1_048_576, description="Width of the MLP's hidden layer (intermediate_size)")
    vocab: int = Field(ge=1, le=4_194_304, description="Vocabulary size")
    context: int = Field(
        default=8192, ge=1, le=16_777_216, description="Longest context the model was trained for"
    )
    tied_embeddings: bool = Field(
        default=False, description="Input embedding and output head share one matrix"
    )
    experts: int = Field(default=1, ge=1, le=1024, description="MLP experts a layer (1 = dense model)")
    experts_per_token: int = Field(default=1, ge=1, le=1024, description="Experts each token is routed to")
    gated_mlp: bool = Field(default=True, description="SwiGLU MLP with 3 matrices (False: 2-matrix GELU MLP)")
    biases: bool = Field(default=False, description="Linear layers carry bias vectors (GPT-2/3 style)")
    norm: Literal["rmsnorm", "layernorm"] = Field(
        default="rmsnorm", description="RMSNorm (a scale) or LayerNorm (a scale and a bias)"
    )
    position_embeddings: int = Field(
        default=0, ge=0, le=16_777_216, description="Rows of learned position embeddings (0 with RoPE)"
    )
    sliding_window: int | None = Field(
        default=None,
        ge=1,
        le=16_777_216,
        description="Tokens each layer attends to (sliding-window attention); null: the whole context. "
        "The KV cache keeps at most this many tokens a sequence",
    )

    @model_validator(mode="before")
    @classmethod
    def _drop_counts(cls, data: Any) -> Any:
        """Accept an architecture as this API returns it: its computed counts are ignored on input."""
        if isinstance(data, dict) and ("parameters" in data or "active_parameters" in data):
            return {k: v for k, v in data.items() if k not in ("parameters", "active_parameters")}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        """Fill the defaults that depend on other fields and refuse impossible shapes."""
        if self.kv_heads is None:
            object.__setattr__(self, "kv_heads", self.heads)
        if self.head_dim is None:
            object.__setattr__(self, "head_dim", max(1, self.hidden // self.heads))
        if self.heads % self.n_kv_heads:
            raise ValueError(f"heads ({self.heads}) must be a multiple of kv_heads ({self.n_kv_heads}).")
        if self.experts_per_token > self.experts:
            raise ValueError(
                f"experts_per_token ({self.experts_per_token}) cannot exceed experts ({self.experts})."
            )
        return self

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A validated copy: the counts are cached, so a copy with changes must be built afresh."""
        return self.model_validate({**self.model_dump(), **(update or {})})

    @cached_property
    def n_kv_heads(self) -> int:
        """Key/value heads, resolved."""
        return self.kv_heads if self.kv_heads is not None else self.heads

    @cached_property
    def n_head_dim(self) -> int:
        """Head width, resolved."""
        return self.head_dim if self.head_dim is not None else max(1, self.hidden // self.heads)

    @cached_property
    def attention_parameters(self) -> int:
        """Weights of one layer's attention: Q, K, V and output projections (and their biases)."""
        d, q, kv = self.hidden, self.heads * self.n_head_dim, self.n_kv_heads * self.n_head_dim
        bias = q + 2 * kv + d if self.biases else 0
        return d * q + 2 * d * kv + q * d + bias

    @cached_property
    def expert_parameters(self) -> int:
        """Weights of one MLP (one expert): 3 matrices with SwiGLU, 2 without."""
        d, f = self.hidden, self.ffn
        matrices = 3 if self.gated_mlp else 2
        bias = ((2 if self.gated_mlp else 1) * f + d) if self.biases else 0
        return matrices * d * f + bias

    @cached_property
    def norm_parameters(self) -> int:
        """Weights of one normalisation: a scale, plus a bias for LayerNorm."""
        return self.hidden * (2 if self.norm == "layernorm" else 1)

    @cached_property
    def router_parameters(self) -> int:
        """Weights of one layer's router (a d × experts matrix), 0 for a dense model."""
        return self.hidden * self.experts if self.experts > 1 else 0

    @cached_property
    def embedding_parameters(self) -> int:
        """Token embedding, output head (unless tied) and learned position embeddings."""
        heads = 1 if self.tied_embeddings else 2
        return self.vocab * self.hidden * heads + self.position_embeddings * self.hidden

    def _count(self, experts: int) -> int:
        """Parameters with `experts` MLPs in each layer."""
        layer = self.attention_parameters + experts * self.expert_parameters
        layer += self.router_parameters + 2 * self.norm_parameters
        return self.embedding_parameters + self.layers * layer + self.norm_parameters

    @computed_field(description="Parameters held in memory: every expert counts")  # type: ignore[prop-decorator]
    @cached_property
    def parameters(self) -> int:
        """Parameters held in memory: every expert counts."""
        return self._count(self.experts)

    @computed_field(description="Parameters one token uses: only its routed experts")  # type: ignore[prop-decorator]
    @cached_property
    def active_parameters(self) -> int:
        """Parameters one token passes through: the routed experts only."""
        return self._count(self.experts_per_token)

    @cached_property
    def block_matrices(self) -> int:
        """Weight matrices inside the transformer blocks: attention projections and MLP (expert) matrices.

        These are what real fp8, int8 and int4 checkpoints quantize; embeddings, LM head, norms,
        biases and MoE routers stay 16-bit (see memory.QUANTIZED_PARTS).
        """
        return self.layers * (4 + self.experts * (3 if self.gated_mlp else 2))

    @cached_property
    def block_matrix_parameters(self) -> int:
        """Parameters of the block matrices (biases excluded)."""
        d, q, kv = self.hidden, self.heads * self.n_head_dim, self.n_kv_heads * self.n_head_dim
        mlp = (3 if self.gated_mlp else 2) * d * self.ffn
        return self.layers * (d * q + 2 * d * kv + q * d + self.experts * mlp)

    @cached_property
    def block_matrix_rows(self) -> int:
        """Output rows of the block matrices (for per-channel quantization scales)."""
        q, kv = self.heads * self.n_head_dim, self.n_kv_heads * self.n_head_dim
        mlp_rows = (2 * self.ffn if self.gated_mlp else self.ffn) + self.hidden
        return self.layers * (q + 2 * kv + self.hidden + self.experts * mlp_rows)

    @cached_property
    def weight_matrices(self) -> int:
        """Number of weight matrices (for per-tensor quantization scales)."""
        per_layer = 4 + self.experts * (3 if self.gated_mlp else 2) + (1 if self.experts > 1 else 0)
        return self.layers * per_layer + (1 if self.tied_embeddings else 2)

    @cached_property
    def weight_rows(self) -> int:
        """Output rows of all weight matrices (for per-channel quantization scales)."""
        q, kv = self.heads * self.n_head_dim, self.n_kv_heads * self.n_head_dim
        mlp_rows = (2 * self.ffn if self.gated_mlp else self.ffn) + self.hidden
        per_layer = (
            q + 2 * kv + self.hidden + self.experts * mlp_rows + (self.experts if self.experts > 1 else 0)
        )
        return self.layers * per_layer + self.vocab * (1 if self.tied_embeddings else 2)


def _llama(
    id_: str, name: str, layers: int, hidden: int, heads: int, ffn: int, vocab: int, context: int,
    sliding_window: int | None = None,
) -> Architecture:
    """A Llama-family model: SwiGLU, RMSNorm, RoPE, 8 KV heads of width 128, untied embeddings."""
    return Architecture(
        id=id_,
        name=name,
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=8,
        head_dim=128,
        ffn=ffn,
        vocab=vocab,
        context=context,
        sliding_window=sliding_window,
    )


# Each architecture is copied from the model's config.json on Hugging Face (meta-llama/Llama-3.1-*,
# mistralai/Mistral-7B-v0.1, mistralai/Mixtral-8x7B-v0.1); GPT-3 from Brown et al. 2020, table 2.1.
# Mistral 7B v0.1's config.json sets "sliding_window": 4096 (Jiang et al. 2023, "Mistral 7B", section 2:
# a rolling buffer cache of W = 4,096 tokens); every other model here attends to its whole context
# (Llama 3.1 and Mixtral v0.1 configs: sliding_window null or absent).
CATALOG: dict[str, Architecture] = {
    m.id: m
    for m in (
        _llama("llama-3.1-8b", "Llama 3.1 8B", 32, 4096, 32, 14_336, 128_256, 131_072),
        _llama("llama-3.1-70b", "Llama 3.1 70B", 80, 8192, 64, 28_672, 128_256, 131_072),
        _llama("llama-3.1-405b", "Llama 3.1 405B", 126, 16_384, 128, 53_248, 128_256, 131_072),
        _llama("mistral-7b", "Mistral 7B", 32, 4096, 32, 14_336, 32_000, 32_768, sliding_window=4096),
        Architecture(
            id="mixtral-8x7b",
            name="Mixtral 8x7B",
            layers=32,
            hidden=4096,
            heads=32,
            kv_heads=8,
            head_dim=128,
            ffn=14_336,
            vocab=32_000,
            context=32_768,
            experts=8,
            experts_per_token=2,
        ),
        # GPT-3 175B: 2-matrix GELU MLP (ffn = 4h), LayerNorm, biases, tied embeddings and 2,048
        # learned positions; no grouped-query attention (KV heads = heads).
        Architecture(
            id="gpt-3-175b",
            name="GPT-3 175B",
            layers=96,
            hidden=12_288,
            heads=96,
            kv_heads=96,
            head_dim=128,
            ffn=49_152,
            vocab=50_257,
            context=2048,
            tied_embeddings=True,
            gated_mlp=False,
            biases=True,
            norm="layernorm",
            position_embeddings=2048,
        ),
    )
}


# Where each catalog architecture comes from (for /numbers).
SOURCES: dict[str, str] = {
    "llama-3.1-8b": "meta-llama/Llama-3.1-8B config.json (Hugging Face)",
    "llama-3.1-70b": "meta-llama/Llama-3.1-70B config.json (Hugging Face)",
    "llama-3.1-405b": "meta-llama/Llama-3.1-405B config.json (Hugging Face)",
    "mistral-7b": "mistralai/Mistral-7B-v0.1 config.json (Hugging Face), sliding_window 4096",
    "mixtral-8x7b": "mistralai/Mixtral-8x7B-v0.1 config.json (Hugging Face)",
    "gpt-3-175b": "Brown et al. 2020, 'Language Models are Few-Shot Learners', table 2.1",
}


def get_model(model: str | Architecture) -> Architecture:
    """A catalog model by id, or a custom architecture as given."""
    if isinstance(model, Architecture):
        return model
    try:
        return CATALOG[model]
    except KeyError:
        raise UnknownModel(model, list(CATALOG)) from None


def check_model_id(model_id: str) -> str:
    """The id unchanged if the catalog has it; else a learner-readable error."""
    if model_id not in CATALOG:
        raise UnknownModel(model_id, list(CATALOG))
    return model_id
