"""Request timeline: one prefill, then one decode step per output token, drawn to scale."""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

from app.engine.models import CATALOG, check_model_id
from app.engine.placement import NodeLoad
from app.engine.plan import Plan, PlanRequest, make_plan
from app.engine.plan import node_load as plan_node_load
from app.engine.text import seconds
from app.engine.workload import splits_heads
from app.widgets._chart import Tick, nice_step, ticks
from app.widgets._fields import MODEL_OPTIONS
from app.widgets.base import Widget

CACHE_TOKENS = 8192  # tokens of KV cache the server keeps for a request (more if the request is longer)
SPLITS = (1, 2, 4, 8, 16)  # tensor-parallel splits tried, fewest GPUs first
WIDTH, LEFT, RIGHT = 480, 8, 16  # SVG units: each row's label sits above its bar, so bars use the width
ROW_HEIGHT, ROW_GAP, LABEL, TOP = 24, 10, 20, 4
MIN_TICK_GAP = 4.0  # SVG units between decode-step marks; closer marks are thinned to every k-th step


class Params(BaseModel):
    """One request: the model, the prompt's length and the answer's."""

    model: str = Field(default="llama-3.1-8b", description="Catalog model id")
    prompt_tokens: int = Field(default=1000, ge=1, le=65_536, description="Tokens in the prompt")
    output_tokens: int = Field(default=500, ge=1, le=16_384, description="Tokens in the answer")

    @field_validator("model")
    @classmethod
    def _known(cls, value: str) -> str:
        return check_model_id(value)


class Row(BaseModel):
    """One request drawn on the shared time axis."""

    key: str
    label: str
    prompt_tokens: int
    output_tokens: int
    cache_tokens: int = Field(description="Tokens of KV cache each decode step reads: 8,192, or the whole request")
    prefill_seconds: float
    step_seconds: float
    decode_seconds: float
    total_seconds: float
    y: float
    text_y: float
    prefill_width: float
    decode_x: float
    decode_width: float
    marks: str = Field(description="SVG path of the marks between decode steps (every `mark_every`-th)")
    mark_every: int


class Result(BaseModel):
    """The three requests, the axis and the sentences the template shows."""

    model_name: str
    models: list[tuple[str, str]] = Field(default=MODEL_OPTIONS, description="Catalog models to pick from")
    gpus: int
    nodes: int
    precision: str
    cache_tokens: int
    default_cache_tokens: int = Field(default=CACHE_TOKENS, description="The cache a request gets unless longer")
    rows: list[Row]
    width: int = WIDTH
    height: float
    row_height: int = ROW_HEIGHT
    axis_y: float
    axis_ticks: list[Tick]
    left: float = LEFT
    axis_label_x: float = (LEFT + WIDTH - RIGHT) / 2
    right: float = WIDTH - RIGHT
    decode_binds: str
    share_decode: float = Field(description="Share of the request's time spent decoding")
    longer_answer_extra: float
    longer_prompt_extra: float
    ratio: float = Field(description="How many times more the doubled answer adds than the doubled prompt")
    node: NodeLoad


def _plan(model: str, prompt: int, output: int) -> Plan:
    """The request on the fewest GPUs (of 1, 2, 4, 8, 16) that hold the model, tensor parallel."""
    context = max(CACHE_TOKENS, prompt + output)
    plan = None
    for gpus in (n for n in SPLITS if splits_heads(CATALOG[model], n)):  # counts that divide the heads
        plan = make_plan(PlanRequest(model=model, gpus=gpus, prompt_tokens=prompt, output_tokens=output,
                                     context_tokens=context))
        if plan.fits:
            return plan
    assert plan is not None
    return plan


def _row(key: str, label: str, plan: Plan, index: int, scale: float) -> Row:
    """Place one request: prefill block, decode band, marks between steps (thinned when too close)."""
    s, req = plan.serve, plan.request
    assert s is not None
    y = TOP + LABEL + index * (LABEL + ROW_HEIGHT + ROW_GAP)
    pre_w = s.prefill_seconds * scale
    step_w = s.decode_seconds_per_token * scale
    every = 1 if step_w >= MIN_TICK_GAP else max(1, round(nice_step(MIN_TICK_GAP / step_w, 1)))
    xs = [LEFT + pre_w + k * step_w for k in range(every, req.output_tokens, every)]
    marks = " ".join(f"M{x:.2f} {y:.1f}v{ROW_HEIGHT}" for x in xs)
    return Row(
        key=key, label=label, prompt_tokens=req.prompt_tokens, output_tokens=req.output_tokens,
        cache_tokens=req.context_tokens, prefill_seconds=s.prefill_seconds, step_seconds=s.decode_seconds_per_token,
        decode_seconds=s.decode_seconds_per_token * req.output_tokens, total_seconds=s.request_seconds, y=y,
        text_y=y - 6, prefill_width=round(pre_w, 2), decode_x=round(LEFT + pre_w, 2),
        decode_width=round(step_w * req.output_tokens, 2), marks=marks, mark_every=every,
    )


def compute(params: Params) -> Result:
    """This request, the same with the prompt doubled, and with the answer doubled, on one time scale."""
    p, o = params.prompt_tokens, params.output_tokens
    plans = [
        ("this", "This request", _plan(params.model, p, o)),
        ("prompt2", "Prompt × 2", _plan(params.model, 2 * p, o)),
        ("answer2", "Answer × 2", _plan(params.model, p, 2 * o)),
    ]
    longest = max(pl.serve.request_seconds for _, _, pl in plans if pl.serve is not None)
    scale = (WIDTH - RIGHT - LEFT) / longest
    rows = [_row(k, label, pl, i, scale) for i, (k, label, pl) in enumerate(plans)]
    axis_y = TOP + len(rows) * (LABEL + ROW_HEIGHT + ROW_GAP) - ROW_GAP + 4
    base, prompt2, answer2 = rows
    req = plans[0][2].request
    answer_extra = answer2.total_seconds - base.total_seconds
    prompt_extra = prompt2.total_seconds - base.total_seconds
    return Result(
        model_name=CATALOG[params.model].name,
        gpus=req.gpus, nodes=(req.gpus + 7) // 8, precision=req.precision, cache_tokens=req.context_tokens,
        rows=rows, height=axis_y + 40, axis_y=axis_y,
        axis_ticks=[Tick(pos=round(LEFT + t * scale, 2), label=seconds(t) if t else "0")
                    for t in ticks(0, longest, 5)],
        decode_binds=plans[0][2].bottleneck,
        share_decode=base.decode_seconds / base.total_seconds,
        longer_answer_extra=answer_extra, longer_prompt_extra=prompt_extra,
        ratio=answer_extra / max(prompt_extra, 1e-12),
        node=plan_node_load(plans[0][2]),
    )


def node_load(params: Params, result: Result) -> NodeLoad:
    """The model resident on the GPUs that serve this request."""
    return result.node


WIDGET = Widget(
    name="request-timeline",
    title="Follow one request",
    params=Params,
    compute=compute,
    template="widgets/request-timeline.html",
    node_load=node_load,
    description="One prefill, then one decode step per output token, drawn to scale; doubling the answer "
    "against doubling the prompt.",
)
