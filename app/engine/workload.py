"""What a learner asks the engine to plan: the request of POST /api/plan, every field optional."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from app.engine.hardware import GPU, get_gpu
from app.engine.models import Architecture, check_model_id, get_model

Precision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"]
Mode = Literal["serve", "train"]
Sharding = Literal["none", "zero1", "zero2", "zero3"]
Optimizer = Literal["adam", "adam-fp32", "sgd-momentum", "adam-8bit"]
GpuId = Literal["h100", "a100", "h200"]
# Pipeline schedules: 1F1B (PipeDream-Flush, Narayanan et al. 2021) idles (p−1)/(m+p−1) of a step; interleaved
# 1F1B with v model chunks a GPU idles (p−1)/(v·m+p−1) (Narayanan et al. 2021, "Efficient large-scale
# language model training on GPU clusters using Megatron-LM", section 2.2).
PipelineSchedule = Literal["1f1b", "interleaved"]
# The MFU sizing widgets start from when a learner has not chosen one: the middle of the 35-45 % published
# runs reach (engine-cases.md); a training plan derives its own (app.engine.training_speed).
ASSUMED_MFU = 0.4
# Activation checkpointing: none keeps every tensor the backward pass needs; selective keeps the matrix
# multiplies' outputs and recomputes norms, activations and attention (torchtitan's and Megatron's
# "selective"); full keeps each layer's input only and reruns the layer's forward in the backward pass.
Checkpointing = Literal["none", "selective", "full"]
CHECKPOINTING_MODES: tuple[str, ...] = ("none", "selective", "full")
# fp8 training against bf16 on the same H100s: torchtitan's Llama 3.1 8B on 8 H100 (FSDP, compile)
# went from 6,667 to 8,532 tokens/s a GPU with Float8 (1.28x; pytorch/torchtitan,
# benchmarks/llama3_h100_202412_torchtitan.md). Not the 2x of the fp8 peak: only the matrix multiplies
# speed up, and they pay for casts and scales.
FP8_SPEEDUP = 1.3
Fp8Speedup = Annotated[
    float,
    Field(ge=1, le=2, allow_inf_nan=False,
          description="Training in fp8: speed against bf16 at the same MFU (torchtitan measured 1.28x on H100)"),
]

# The most GPUs a plan may use: 65,536 H100s is four times Llama 3's 16,384-GPU training cluster.
MAX_GPUS = 65_536
TRAINING_PRECISIONS: tuple[str, ...] = ("fp32", "bf16", "fp16", "fp8")


def checkpointing_value(value: Any, text: bool = False) -> Any:
    """`true`/`false` (the field's old boolean form) mean full/none; names pass through.

    With `text`, as a form or a lesson's widget settings send it, "true"/"false" too.
    """
    if isinstance(value, bool):
        return "full" if value else "none"
    if text and isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return "full" if value.strip().lower() == "true" else "none"
    return value


# The schema of the field: one of the three names, or the old boolean.
CHECKPOINTING_SCHEMA = WithJsonSchema(
    {"anyOf": [{"type": "string", "enum": list(CHECKPOINTING_MODES)}, {"type": "boolean"}]}
)
CheckpointingField = Annotated[Checkpointing, CHECKPOINTING_SCHEMA]


def split_counts(arch: Architecture) -> list[int]:
    """The GPU counts a serving plan can split `arch` over: the divisors of its attention heads."""
    return [n for n in range(1, min(arch.heads, MAX_GPUS) + 1) if splits_heads(arch, n)]


def splits_heads(arch: Architecture, gpus: int) -> bool:
    """Serving splits every layer's attention heads over the GPUs (tensor parallel): does `gpus` divide them?"""
    return arch.heads % gpus == 0


def check_split(arch: Architecture, mode: str, gpus: int) -> int:
    """Refuse a serving GPU count that does not divide the attention heads, naming the counts that do (training
    is data parallel: any count)."""
    if mode != "serve" or splits_heads(arch, gpus):
        return gpus
    counts = [str(n) for n in split_counts(arch)]
    use = f"{', '.join(counts[:-1])} or {counts[-1]} GPUs" if len(counts) > 1 else "1 GPU"
    raise ValueError(
        f"Serving gives each GPU an equal share of every layer (tensor parallel); a layer of {arch.name} is "
        f"{arch.heads} attention heads that cannot be cut: use {use}."
    )


def split_field(value: int, info: ValidationInfo, mode: str | None = None) -> int:
    """The `gpus` field check of a request that names a model (and a mode, or `mode` for one that only serves):
    a serving count must divide the heads. Declare `gpus` after `model` and `mode` so both are validated first."""
    model, mode = info.data.get("model"), mode or info.data.get("mode")
    if model is None or mode is None:  # already refused: its own error says why
        return value
    return check_split(get_model(model), mode, value)


def _model_kind(value: Any) -> str:
    """Tell a catalog id from an architecture object."""
    return "id" if isinstance(value, str) else "architecture"


def _known_id(value: str | Architecture) -> str | Architecture:
    """Refuse a catalog id the catalog does not have (in every request model that takes a model)."""
    return check_model_id(value) if isinstance(value, str) else value


ModelChoice = Annotated[
    Annotated[str, Tag("id")] | Annotated[Architecture, Tag("architecture")],
    Discriminator(
        _model_kind,
        custom_error_type="model_choice",
        custom_error_message="model must be a catalog id such as 'llama-3.1-8b' or an architecture object",
    ),
    AfterValidator(_known_id),
]


class PlanRequest(BaseModel):
    """A model and a way to run it (serve or train) on some GPUs: the input of a plan."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    model: ModelChoice = Field(
        default="llama-3.1-8b",
        description="A catalog id (see GET /api/models) or an architecture object "
        "{layers, hidden, heads, kv_heads, head_dim, ffn, vocab, tied_embeddings, experts, "
        "experts_per_token}",
    )
    mode: Mode = Field(default="serve", description="serve: answer requests; train: learn the weights")
    gpu: GpuId = Field(default="h100", description="The GPU type; dgx-1 holds H100s")
    precision: Precision = Field(default="bf16", description="Storage precision of the weights")
    kv_precision: Precision = Field(default="bf16", description="Storage precision of the KV cache")
    gpus: int = Field(
        default=1,
        ge=1,
        le=MAX_GPUS,
        description="GPUs used; serving splits the model tensor-parallel over them, so the count must divide "
        "its attention heads; training runs data-parallel on any count; more than 8 means several dgx-1 nodes",
    )
    sharding: Sharding = Field(
        default="none", description="Training only: ZeRO stage sharding the training state over the GPUs"
    )
    batch_size: int = Field(
        default=1,
        ge=1,
        le=4096,
        description="Serving: sequences decoded together; training: sequences per GPU in a micro-batch",
    )
    context_tokens: int = Field(
        default=8192,
        ge=1,
        le=16_777_216,
        description="Serving: tokens a sequence keeps in the KV cache; training: sequence length",
    )
    prompt_tokens: int = Field(default=1000, ge=1, le=16_777_216, description="Serving: tokens of a prompt")
    output_tokens: int = Field(
        default=500, ge=1, le=16_777_216, description="Serving: tokens generated a request"
    )
    train_tokens: float = Field(
        default=1e9, ge=1, le=1e16, allow_inf_nan=False, description="Training: tokens the run learns from"
    )
    optimizer: Optimizer = Field(default="adam", description="Training: the optimizer and its state")
    activation_checkpointing: CheckpointingField = Field(
        default="none",
        description="Training: none keeps every activation; selective keeps the matrix multiplies' outputs "
        "and recomputes the rest; full keeps each layer's input only (8ND hardware FLOPs). true/false mean "
        "full/none",
    )
    mfu: float | None = Field(
        default=None,
        ge=0.01,
        le=1,
        allow_inf_nan=False,
        description="Share of peak FLOPS reached. null (the default): the engine works it out (training: from "
        "the step's matrix multiplies, attention, other work, communication and pipeline bubble; serving: the "
        "GPU's measured matrix-multiply share); a number is used as given",
    )
    fp8_speedup: Fp8Speedup = FP8_SPEEDUP
    tensor_parallel: int = Field(
        default=1, ge=1, le=64,
        description="Training: GPUs each layer's matrices are split over (Megatron tensor parallel with sequence "
        "parallel); must divide the attention heads",
    )
    pipeline_parallel: int = Field(
        default=1, ge=1, le=512, description="Training: pipeline stages the layers are split into"
    )
    context_parallel: int = Field(
        default=1, ge=1, le=1024, description="Training: GPUs each sequence is split over (ring attention)"
    )
    pipeline_schedule: PipelineSchedule = Field(
        default="1f1b", description="Training with pipeline stages: 1f1b or interleaved (1F1B with model chunks)"
    )
    pipeline_virtual_stages: int = Field(
        default=2, ge=1, le=64, description="Training, interleaved schedule: model chunks a GPU holds"
    )
    pipeline_microbatches: int | None = Field(
        default=None, ge=1, le=65_536,
        description="Training with pipeline stages: micro-batches a step; null: one a stage",
    )

    @model_validator(mode="after")
    def _layout(self) -> PlanRequest:
        """A training layout must tile the GPUs and split the heads and layers evenly."""
        if self.mode != "train":
            return self
        split = self.tensor_parallel * self.pipeline_parallel * self.context_parallel
        if self.gpus % split:
            raise ValueError(
                f"gpus ({self.gpus}) must be a multiple of tensor × pipeline × context parallel ({split})"
            )
        arch = self.architecture
        if arch.heads % self.tensor_parallel or arch.n_kv_heads % self.tensor_parallel and (
            self.tensor_parallel % arch.n_kv_heads
        ):
            raise ValueError(f"tensor_parallel ({self.tensor_parallel}) must divide the {arch.heads} attention heads")
        if self.pipeline_parallel > arch.layers:
            raise ValueError(f"pipeline_parallel ({self.pipeline_parallel}) exceeds the {arch.layers} layers")
        return self

    @property
    def model_parallel(self) -> int:
        """GPUs one copy of the model spans: tensor × pipeline × context parallel."""
        return self.tensor_parallel * self.pipeline_parallel * self.context_parallel

    @property
    def microbatches(self) -> int:
        """Micro-batches a step: one without pipeline stages; with them, as asked or one a stage."""
        if self.pipeline_parallel == 1:
            return 1
        return self.pipeline_microbatches or self.pipeline_parallel

    @field_validator("activation_checkpointing", mode="before")
    @classmethod
    def _checkpointing(cls, value: Any) -> Any:
        """Accept the old boolean form: true is full, false is none."""
        return checkpointing_value(value)

    @field_validator("model")
    @classmethod
    def _known_model(cls, value: str | Architecture) -> str | Architecture:
        """Refuse a catalog id the catalog does not have."""
        return check_model_id(value) if isinstance(value, str) else value

    @field_validator("precision")
    @classmethod
    def _trainable(cls, value: str, info: ValidationInfo) -> str:
        """Refuse integer weights for training."""
        if info.data.get("mode") == "train" and value not in TRAINING_PRECISIONS:
            raise ValueError(
                f"training needs fp32, bf16, fp16 or fp8 weights: {value} is a storage format for serving"
            )
        return value

    @field_validator("gpus")
    @classmethod
    def _even_split(cls, value: int, info: ValidationInfo) -> int:
        """Serving splits every layer's attention heads over the GPUs (tensor parallel): they must divide evenly."""
        return split_field(value, info)

    @property
    def architecture(self) -> Architecture:
        """The model's architecture, catalog or custom."""
        return get_model(self.model)

    @property
    def hardware(self) -> GPU:
        """The GPU the request runs on, looked up once here: the engine's helpers take it, not its id."""
        return get_gpu(self.gpu)
