"""Typed contexts for pages and widgets: built from services, rendered by templates as they are."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from functools import cached_property
from typing import Any
from urllib.parse import urlencode

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.classroom.classes import ClassBanner
from app.engine.errors import EngineError
from app.engine.placement import COMPONENTS, NodeLoad, idle_node
from app.format import gb
from app.lessons.model import Lesson, Step
from app.widgets.base import ParamErrors, Widget, field_errors, parse_params

BAR_WIDTH = 200  # SVG units for 100 % of one GPU's memory

# A step's address keeps each widget's inputs under keys named after the widget: `w2.gpus=4` is input `gpus` of
# the step's second widget. Only inputs that differ from the lesson's own values are written.
LINK_KEY = re.compile(r"^w([1-9][0-9]?)\.([a-z][a-z0-9_]{0,39})$")
LINK_KEYS_MAX = 60  # keys a guess form may carry through to the revealed widget
LINK_VALUE_MAX = 200

COMPONENT_LABELS = {
    "weights": "Weights",
    "kv_cache": "KV cache",
    "activations": "Activations",
    "loss_head": "Loss head",
    "gradients": "Gradients",
    "optimizer": "Optimizer state",
    "runtime": "Runtime",
}


class Segment(BaseModel):
    component: str
    label: str
    bytes: int
    x: float
    width: float


class GpuView(BaseModel):
    index: int
    used: int
    capacity: int
    overflow: int
    utilisation: float
    power_w: float
    segments: list[Segment]
    overflow_x: float
    overflow_width: float
    parts_text: str


class PanelView(BaseModel):
    """The dgx-1 panel as the template draws it."""

    gpus: list[GpuView]
    activity: str
    why: str
    fits: bool
    power_w: float
    used: int
    capacity: int
    summary: str
    announcement: str
    legend: list[tuple[str, str]]
    bar_width: int = BAR_WIDTH

    @property
    def busy_gpus(self) -> int:
        """GPUs holding work: the folded panel's short summary on a phone says "3 of 8 GPUs"."""
        return sum(1 for g in self.gpus if g.used)

    @cached_property
    def key(self) -> str:
        """A digest of what the panel shows: a widget update re-sends the panel only when this changes."""
        return hashlib.blake2s(self.model_dump_json().encode(), digest_size=8).hexdigest()


def panel_view(node: NodeLoad | None) -> PanelView:
    """Lay out the eight GPUs: a stacked bar per GPU scaled to its capacity, overflow past the end."""
    node = node or idle_node()
    gpus = []
    for g in node.gpus:
        scale = BAR_WIDTH / g.capacity
        x, segments = 0.0, []
        for comp in COMPONENTS:
            size = g.parts.get(comp, 0)
            if size <= 0:
                continue
            width = min(size * scale, BAR_WIDTH - x) if x < BAR_WIDTH else 0.0
            label = COMPONENT_LABELS[comp]
            segments.append(Segment(component=comp, label=label, bytes=size, x=x, width=max(width, 0.0)))
            x += size * scale
        parts = ", ".join(f"{COMPONENT_LABELS[s.component].lower()} {gb(s.bytes, 1)}" for s in segments)
        gpus.append(GpuView(
            index=g.index, used=g.used, capacity=g.capacity, overflow=g.overflow, utilisation=g.utilisation,
            power_w=g.power_w, segments=segments, overflow_x=BAR_WIDTH - 12 if g.overflow else 0.0,
            overflow_width=12 if g.overflow else 0.0, parts_text=parts or "empty",
        ))
    used = sum(g.used for g in node.gpus)
    cap = sum(g.capacity for g in node.gpus)
    busy = [g for g in gpus if g.used]
    first = busy[0] if busy else gpus[0]
    over = [g for g in gpus if g.overflow]
    if over:
        announcement = (f"GPU {over[0].index} overflows: needs {gb(over[0].used, 1)} of {gb(over[0].capacity, 0)}, "
                        f"{gb(over[0].overflow, 1)} too much.")
    else:
        announcement = f"GPU {first.index}: {gb(first.used, 1)} of {gb(first.capacity, 0)}. {node.activity}."
    summary = f"{len(busy)} of {len(gpus)} GPUs in use, {gb(used, 1)} of {gb(cap, 0)}"
    if over:  # the node's total would read as room to spare: say which GPU overflows its own memory
        summary = (f"{len(busy)} of {len(gpus)} GPUs in use; does not fit: GPU {over[0].index} needs "
                   f"{gb(over[0].used, 1)} of its {gb(over[0].capacity, 0)}")
    legend = [(c, COMPONENT_LABELS[c]) for c in COMPONENTS]
    return PanelView(gpus=gpus, activity=node.activity, why=node.why, fits=not over, power_w=node.power_w,
                     used=used, capacity=cap, summary=summary, announcement=announcement, legend=legend)


class WidgetView(BaseModel):
    """One widget instance on a page or in an htmx response."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    title: str
    wid: str = Field(description="DOM id prefix of this instance, e.g. w1")
    index: int
    lesson: str = ""
    step: int = 0
    action: str
    values: dict[str, str]
    errors: dict[str, str]
    params: Any = None
    result: Any = None
    node: NodeLoad | None = None
    extra: dict[str, Any] = Field(default_factory=dict)
    defaults: dict[str, str] = Field(
        default_factory=dict, description="The lesson's own values as text: a link names only what differs"
    )
    carry: dict[str, str] = Field(
        default_factory=dict, description="The step's other widgets' changed inputs, as link keys (w2.gpus)"
    )

    def value(self, name: str) -> str:
        return self.values.get(name, "")

    def error(self, name: str) -> str:
        return self.errors.get(name, "")

    def field_names(self) -> list[str]:
        return list(self.values)

    def own_keys(self, values: Mapping[str, str] | None = None) -> dict[str, str]:
        """This widget's inputs (its current ones unless given) that differ from the lesson's, as link keys."""
        values = self.values if values is None else values
        return {f"{self.wid}.{k}": v for k, v in values.items() if self.defaults.get(k) != v}

    def link_keys(self) -> dict[str, str]:
        """Every changed input of the step, this widget's and the others', as link keys in widget order."""
        return _in_order({**self.carry, **self.own_keys()})

    def share_url(self) -> str:
        """The address of this widget's inputs on its step (X-Share-Url); the fragment names the widget, and
        static/app.js merges the keys into the address bar, keeping the other widgets' keys there."""
        return _address(self.action, self.own_keys()) + f"#{self.wid}"

    def url_with(self, changes: Mapping[str, Any]) -> str:
        """This instance's address (its step inside a lesson) with some inputs changed: a shareable link."""
        values = {**self.values, **{k: _text(v) for k, v in changes.items() if k in self.values}}
        if not self.lesson:  # the widget's own page reads plain keys
            return f"{self.action}?" + urlencode({"w": self.index, **values})
        return _address(self.action, _in_order({**self.carry, **self.own_keys(values)}))


def _in_order(keys: Mapping[str, str]) -> dict[str, str]:
    """Link keys sorted by widget (w2 before w10), each widget's inputs in their own order."""
    def widget(key: str) -> int:
        match = LINK_KEY.match(key)
        return int(match[1]) if match else 0

    return {k: keys[k] for k in sorted(keys, key=widget)}


def _address(action: str, keys: Mapping[str, str]) -> str:
    return f"{action}?{urlencode(keys)}" if keys else action


def widget_query(query: Mapping[str, Any], index: int) -> dict[str, str]:
    """What a step's address says for its widget `index`: the keys named after it (`w2.gpus=4`), then plain keys
    (`w=2&gpus=4`, an old link or a form sent without JavaScript; no `w` means the first widget), which win."""
    prefix = f"w{index}."
    typed = {k.removeprefix(prefix): str(v) for k, v in query.items() if k.startswith(prefix)}
    if str(query.get("w", "1")) == str(index):
        typed.update({k: str(v) for k, v in query.items() if "." not in k})
    return typed


def link_keys(form: Mapping[str, Any]) -> dict[str, str]:
    """The widget inputs a form carries as link keys (w2.gpus), well formed and few; the values are checked later,
    by the widgets, like any other address."""
    keys = {k: v for k, v in form.items() if isinstance(v, str) and len(v) <= LINK_VALUE_MAX and LINK_KEY.match(k)}
    return _in_order(dict(list(keys.items())[:LINK_KEYS_MAX]))


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) >= 1e6:
        return f"{value:.6g}".replace("e+", "e")  # 1.56e13, as a person types it
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)


def widget_view(
    widget: Widget, defaults: Mapping[str, Any], query: Mapping[str, Any], *, index: int,
    lesson: str = "", step: int = 0,
) -> WidgetView:
    """Validate, compute and describe one widget instance; invalid input keeps the typed values."""
    action = f"/lessons/{lesson}/{step}" if lesson else f"/widgets/{widget.name}"
    fields = widget.params.model_fields
    base = {k: _text(v.default) for k, v in fields.items()}
    base.update({k: _text(v) for k, v in defaults.items() if k in fields})
    typed = {k: str(v) for k, v in query.items() if k in fields}
    view = WidgetView(name=widget.name, title=widget.title, wid=f"w{index}", index=index, lesson=lesson,
                      step=step, action=action, values={**base, **typed}, errors={}, defaults=base)
    changed = {k: v for k, v in typed.items() if base.get(k) != v}
    try:
        params = parse_params(widget, defaults, typed)
        view.result, view.node = _computed(widget, params)
    except ParamErrors as exc:
        view.errors = exc.errors
    except (EngineError, ValidationError) as exc:  # the engine refuses what the Params let through
        view.errors = engine_errors(widget, exc, changed)
    if view.errors:  # show the lesson's own result beside the messages
        params = parse_params(widget, defaults)
        view.result, view.node = _computed(widget, params)
    view.params = params
    if widget.form_state is not None:
        view.values.update(widget.form_state(view.result))  # a live run's start time travels with the page
    return view


def _computed(widget: Widget, params: Any) -> tuple[Any, NodeLoad | None]:
    result = widget.compute(params)
    return result, widget.node_load(params, result) if widget.node_load is not None else None


def engine_errors(widget: Widget, exc: EngineError | ValidationError, changed: Mapping[str, str]) -> dict[str, str]:
    """The engine's refusal as a message beside a field: the field it names when the widget has one, else the
    first input the learner changed."""
    if isinstance(exc, ValidationError):
        return field_errors(widget, exc, changed)
    fields = list(widget.params.model_fields)
    named = getattr(exc, "field", "")
    key = named if named in fields else next((k for k in fields if k in changed), fields[0])
    return {key: str(exc)}


class StepPage(BaseModel):
    """Everything the step template shows."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    lesson: Lesson
    step: Step
    widgets: dict[int, WidgetView]
    panel: PanelView
    done: set[int]
    minutes_left: int
    cheatsheet: list[Step] = Field(default_factory=list)
    drills: dict[int, Any] = Field(default_factory=dict, description="app.web.drills.DrillView by block")
    classroom: ClassBanner | None = Field(default=None, description="The learner's class banner, when in a class")

    @property
    def revealed(self) -> bool:
        """Every "predict first" widget on the step has its guess: reveal blocks may show."""
        return not any(getattr(v.extra.get("predict"), "pending", False) for v in self.widgets.values())

    @property
    def locked(self) -> bool:
        """The learner's class is held at an earlier step: this one shows a message instead."""
        return self.classroom is not None and self.classroom.locked

    def block_widgets(self) -> list[tuple[int, Any]]:
        return list(enumerate(self.step.blocks))
