"""Typed contexts for pages and widgets: built from services, rendered by templates as they are."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic
from urllib.parse import urlencode

from pydantic import BaseModel, ConfigDict, Field

from app.classroom.seat import ClassBanner
from app.classroom.sheets import Sheet
from app.engine.placement import COMPONENT_LABELS, COMPONENTS, NodeLoad, idle_node
from app.engine.text import gb
from app.lessons.model import Block, Lesson, Step
from app.pages.drills import DrillView
from app.widgets.base import P, R, Widget
from app.widgets.service import USED_PREFIX, W_MAX, WidgetInstance, as_text, render

BAR_WIDTH = 200  # SVG units for 100 % of one GPU's memory

# A step's address keeps each widget's inputs under keys named after the widget: `w2.gpus=4` is input `gpus` of
# the step's second widget. Only inputs that differ from the lesson's own values are written.
# The widget numbers are those of WidgetAddress.w: 1 to W_MAX (99).
LINK_KEY = re.compile(rf"^w([1-9][0-9]{{0,{len(str(W_MAX)) - 1}}})\.([a-z][a-z0-9_]{{0,39}})$")
LINK_KEYS_MAX = 60  # keys a guess form may carry through to the revealed widget
LINK_VALUE_MAX = 200



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
    """The dgx-1 panel as the template draws it (templates/panel.html)."""

    key: str = Field(description="Digest of the placed load it is drawn from (panel_key): the page sends it back")
    gpus: list[GpuView] = Field(description="The eight GPUs, each with its memory bar, busy share and power")
    activity: str = Field(description="What dgx-1 is doing, in words ('training Llama 3.1 8B (bf16) on 8 GPUs')")
    why: str = Field(description="Why the work does not fit, or ''")
    shown_by: str = Field(default="", description="The widget whose work the panel shows, by its title; '' when idle")
    fits: bool = Field(description="Every GPU's share fits in its memory")
    power_w: float = Field(description="The GPUs' power draw, watts (the one power rule)")
    server_power_w: float = Field(default=0.0, description="The whole server's draw, GPUs and the rest, watts")
    used: int = Field(description="Bytes held on the fullest GPU")
    capacity: int = Field(description="Bytes one GPU holds")
    summary: str = Field(description="The folded panel's one line")
    announcement: str = Field(description="What a screen reader hears when the panel changes")
    legend: list[tuple[str, str]] = Field(description="The memory bar's colours: (part, label)")
    bar_width: int = Field(default=BAR_WIDTH, description="Width of a GPU's memory bar, in SVG units")

    @property
    def busy_gpus(self) -> int:
        """GPUs holding work: the folded panel's short summary on a phone says "3 of 8 GPUs"."""
        return sum(1 for g in self.gpus if g.used)



def panel_key(node: NodeLoad) -> str:
    """The panel's one digest: of the placed load, its only input. A widget update re-sends the panel only when
    it differs from the key the page sent (app/web/templating.py keeps the rendered panel by it)."""
    return hashlib.blake2s(node.model_dump_json().encode(), digest_size=8).hexdigest()


class PanelUpdate(BaseModel):
    """The panel an answer sends out of band: its key and the load it is drawn from. It is laid out (`view`) only
    when drawn: the rendered panel is kept by its key (app.web.templating.Templates.panel), so a widget moved back
    and forth between a few values pays for neither the layout nor the render again."""

    key: str = Field(description="The placed load's digest (panel_key)")
    node: NodeLoad = Field(description="The work placed on dgx-1")

    def view(self) -> PanelView:
        return panel_view(self.node, self.key)


def changed_panel(node: NodeLoad | None, shown: str | None) -> PanelUpdate | None:
    """The panel for an answer's out-of-band copy: None when the answer placed no work or the page shows it."""
    if node is None:
        return None
    key = panel_key(node)
    return None if key == shown else PanelUpdate(key=key, node=node)


def panel_view(node: NodeLoad | None, key: str = "") -> PanelView:
    """Lay out the eight GPUs: a stacked bar per GPU scaled to its capacity, overflow past the end."""
    node = node or idle_node()
    key = key or panel_key(node)
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
    return PanelView(key=key, gpus=gpus, activity=node.activity, why=node.why, fits=not over, power_w=node.power_w,
                     shown_by=node.shown_by,
                     server_power_w=node.server_power_w, used=used, capacity=cap, summary=summary,
                     announcement=announcement, legend=legend)


class PredictView(BaseModel):
    """A widget's question before the reveal, or the guess beside the engine's answer after it."""

    key: str
    question: str
    unit: str
    choice_label: str = ""
    choices: list[tuple[str, str]] = Field(default_factory=list)
    pending: bool = Field(description="True until the learner commits a guess: the widget stays closed")
    guess: str = Field(default="", description="The committed guess, for display")
    actual: str = Field(default="", description="The engine's answer, for display")
    verdict: str = Field(default="", description="How close the guess came, in a sentence")
    typed: str = Field(default="", description="What was typed, kept when it was refused")
    choice: str = ""
    error: str = ""
    choice_error: str = ""


class WidgetView(WidgetInstance[P, R], Generic[P, R]):
    """One widget instance on a page or in an htmx response (templates/widgets/*.html): the widget computed
    (WidgetInstance: values, errors, used, params, result, node) and where it sits."""

    wid: str = Field(description="DOM id prefix of this instance, e.g. w1")
    index: int = Field(description="The widget's number on its step, from 1 (`w`)")
    lesson: str = Field(default="", description="The lesson's slug; empty on the widget's own page")
    step: int = Field(default=0, description="The step's number; 0 on the widget's own page")
    action: str = Field(description="The form's address without JavaScript: the step, or the widget's page")
    predict: PredictView | None = Field(default=None, description="The guess asked for first, or beside the answer")
    sheet: Sheet | None = Field(default=None, description="The learner's workload sheet, for the widgets showing it")
    carry: dict[str, str] = Field(
        default_factory=dict, description="The step's other widgets' changed inputs, as link keys (w2.gpus)"
    )

    def value(self, name: str) -> str:
        return self.values.get(name, "")

    @property
    def stale(self) -> bool:
        """The result is for the last valid value of a refused field, not for the form as shown."""
        return bool(self.errors)

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

    def url_with(self, changes: Mapping[str, object]) -> str:
        """This instance's address (its step inside a lesson) with some inputs changed: a shareable link."""
        values = {**self.values, **{k: as_text(v) for k, v in changes.items() if k in self.values}}
        if not self.lesson:  # the widget's own page reads plain keys
            return f"{self.action}?" + urlencode({"w": self.index, **values})
        return _address(self.action, _in_order({**self.carry, **self.own_keys(values)}))


if TYPE_CHECKING:
    AnyWidgetView = WidgetView[Any, Any]  # any widget's view, for the pages that hold several widgets
else:
    AnyWidgetView = WidgetView  # the class itself at run time, so pydantic keeps a view rather than copying it


def _in_order(keys: Mapping[str, str]) -> dict[str, str]:
    """Link keys sorted by widget (w2 before w10), each widget's inputs in their own order."""
    def widget(key: str) -> int:
        match = LINK_KEY.match(key)
        return int(match[1]) if match else 0

    return {k: keys[k] for k in sorted(keys, key=widget)}


def _address(action: str, keys: Mapping[str, str]) -> str:
    return f"{action}?{urlencode(keys)}" if keys else action


def widget_query(query: Mapping[str, str], index: int) -> dict[str, str]:
    """What a step's address says for its widget `index`: the keys named after it (`w2.gpus=4`), then plain keys
    (`w=2&gpus=4`, an old link or a form sent without JavaScript, with its `used.gpus` values; no `w` means the
    first widget), which win."""
    prefix = f"w{index}."
    typed = {k.removeprefix(prefix): str(v) for k, v in query.items() if k.startswith(prefix)}
    if str(query.get("w", "1")) == str(index):
        typed.update({k: str(v) for k, v in query.items() if "." not in k or k.startswith(USED_PREFIX)})
    return typed


def link_keys(form: Mapping[str, object]) -> dict[str, str]:
    """The widget inputs a form carries as link keys (w2.gpus), well formed and few; the values are checked later,
    by the widgets, like any other address."""
    keys = {k: v for k, v in form.items() if isinstance(v, str) and len(v) <= LINK_VALUE_MAX and LINK_KEY.match(k)}
    return _in_order(dict(list(keys.items())[:LINK_KEYS_MAX]))


def widget_view(
    widget: Widget[P, R], defaults: Mapping[str, object], query: Mapping[str, str], *, index: int,
    lesson: str = "", step: int = 0,
) -> WidgetView[P, R]:
    """One widget instance on a step (or on its own page when `lesson` is empty), as the template shows it."""
    inst = render(widget, defaults, query)
    action = f"/lessons/{lesson}/{step}" if lesson else f"/widgets/{widget.name}"
    # The instance was validated as it was built: the view adds its place without validating it again.
    return WidgetView.model_construct(**dict(inst), wid=f"w{index}", index=index, lesson=lesson, step=step,
                                      action=action)


class StepPage(BaseModel):
    """Everything the step template shows."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    lesson: Lesson = Field(description="The lesson the step belongs to")
    step: Step = Field(description="The step: its prose (engine expressions evaluated) and blocks")
    widgets: dict[int, AnyWidgetView] = Field(description="The widget blocks, computed, by position")
    panel: PanelView = Field(description="The dgx-1 panel, showing the step's plan or nothing")
    done: set[int] = Field(description="The numbers of the steps this learner has done")
    minutes_left: int = Field(description="About how many minutes the steps after this one take")
    cheatsheet: list[Step] = Field(
        default_factory=list, description="Every step of the lesson, for a cheat-sheet block to list their formulas"
    )
    drills: dict[int, DrillView] = Field(default_factory=dict, description="The drill blocks, by position")
    classroom: ClassBanner | None = Field(default=None, description="The learner's class banner, when in a class")

    @property
    def revealed(self) -> bool:
        """Every "predict first" widget on the step has its guess: reveal blocks may show."""
        return not any(v.predict is not None and v.predict.pending for v in self.widgets.values())

    @property
    def locked(self) -> bool:
        """The learner's class is held at an earlier step: this one shows a message instead."""
        return self.classroom is not None and self.classroom.locked

    def block_widgets(self) -> list[tuple[int, Block]]:
        return list(enumerate(self.step.blocks))
