"""The roofline's and the compute-time chart's geometry stays inside their plots, whatever the inputs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.widgets import compute_time, decode_speed, roofline

MODELS = st.sampled_from(["llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "gpt-3-175b"])
PRECISIONS = st.sampled_from(["fp32", "bf16", "fp8", "int8", "int4"])


@settings(max_examples=40, deadline=None, derandomize=True)
@given(model=MODELS, precision=PRECISIONS, batch=st.integers(1, 1024), ctx=st.integers(0, 131_072))
def test_decode_points_sit_on_or_under_the_roof_inside_the_plot(
    model: str, precision: str, batch: int, ctx: int
) -> None:
    view = roofline.compute(
        roofline.Params(model=model, precision=precision, batch_size=batch, context_tokens=ctx)
    )
    c = view.chart
    for dot in c.dots:
        assert 0 <= dot.x <= c.width and 0 <= dot.y <= c.height
        assert dot.y >= c.peak_y - 0.01  # never above the flat roof
    assert 0 < c.ridge_x < c.width
    assert (len(c.dots) == 2) == (ctx > 0)


def test_a_bigger_batch_never_moves_decode_left() -> None:
    xs = [roofline.compute(roofline.Params(batch_size=b)).chart.dots[0].x for b in (1, 2, 8, 64, 512, 1024)]
    assert xs == sorted(xs)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(mfu=st.floats(0.05, 1.0), gpus=st.integers(1, 100_000), tokens=st.floats(1e6, 1e16))
def test_the_mfu_marker_lies_on_the_drawn_curve(mfu: float, gpus: int, tokens: float) -> None:
    view = compute_time.compute(compute_time.Params(tokens=tokens, gpus=gpus, mfu=mfu))
    c = view.chart
    assert 0 <= c.marker_x <= c.width and 0 <= c.marker_y <= c.height
    points = [tuple(map(float, p.split(","))) for p in c.points.split()]
    assert all(0 <= y <= c.height for _, y in points)
    if mfu >= 0.1:
        nearest = min(points, key=lambda p: abs(p[0] - c.marker_x))
        assert abs(nearest[1] - c.marker_y) < c.height * 0.05


@settings(max_examples=30, deadline=None, derandomize=True)
@given(model=MODELS, precision=PRECISIONS, ctx=st.integers(1, 131_072))
def test_decode_bars_fit_their_axis_and_the_solid_part_never_exceeds_the_ceiling(
    model: str, precision: str, ctx: int
) -> None:
    view = decode_speed.compute(decode_speed.Params(model=model, precision=precision, context_tokens=ctx))
    for bar in view.bars:
        assert 0 < bar.with_kv_width <= bar.weights_width <= view.bar_width + 0.01
    assert sum(b.selected for b in view.bars) == 1
