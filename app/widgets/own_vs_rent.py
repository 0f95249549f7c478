"""Own vs rent: a dgx-1 bought and run, against the same GPU-hours rented, at a chosen utilisation."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.engine.cost import CostAssumptions, OwnVsRent, own_usd_per_year, own_vs_rent, rent_usd_per_year
from app.engine.text import pct, plural, usd
from app.widgets._chart import Frame, Plot, nice_max
from app.widgets._fields import engine_range
from app.widgets.base import Widget

DEFAULTS = CostAssumptions()
TABLE_UTILISATIONS = (0.1, 0.25, 0.5, 0.75, 1.0)


class Params(BaseModel):
    """How busy the GPUs will be, and your own prices (the defaults are illustrative)."""

    utilisation: float = Field(
        default=0.6, ge=0, le=1, allow_inf_nan=False, description="Share of the year busy"
    )
    rent_per_gpu_hour: float = Field(
        default=DEFAULTS.rent_usd_per_gpu_hour,
        **engine_range(CostAssumptions, "rent_usd_per_gpu_hour"),
        allow_inf_nan=False,
        description="US$ per H100-hour",
    )
    purchase_price: float = Field(
        default=DEFAULTS.purchase_usd, **engine_range(CostAssumptions, "purchase_usd"), allow_inf_nan=False,
        description="US$ for one dgx-1",
    )
    years: float = Field(
        default=DEFAULTS.years, **engine_range(CostAssumptions, "years"), allow_inf_nan=False,
        description="Years to write it off",
    )
    power_price: float = Field(
        default=DEFAULTS.electricity_usd_per_kwh, **engine_range(CostAssumptions, "electricity_usd_per_kwh"),
        allow_inf_nan=False, description="US$ per kWh"
    )


class Source(BaseModel):
    """One assumption: what it is, the value used, and where the default comes from."""

    name: str
    value: str
    note: str
    yours: bool = Field(description="True when the learner changed it from the illustrative default")


class Row(BaseModel):
    """Owning and renting at one utilisation."""

    utilisation: float
    own: float
    rent: float
    chosen: bool

    @property
    def cheaper(self) -> str:
        return "own" if self.own < self.rent else "rent"


class Result(BaseModel):
    """The comparison, its chart and its sources."""

    answer: OwnVsRent
    assumptions: CostAssumptions
    frame: Frame
    own_points: str
    rent_points: str
    chosen_x: float
    even_x: float | None
    even_y: float | None
    own_y: float
    rent_y: float
    rows: list[Row]
    sources: list[Source]
    caption: str


def _assumptions(p: Params) -> CostAssumptions:
    return CostAssumptions(
        rent_usd_per_gpu_hour=p.rent_per_gpu_hour, purchase_usd=p.purchase_price, years=p.years,
        electricity_usd_per_kwh=p.power_price,
    )


def _sources(a: CostAssumptions) -> list[Source]:
    """Each price with its value and the engine's note on where the default comes from."""
    fields = CostAssumptions.model_fields
    shown = [
        ("purchase_usd", "Price of one dgx-1", usd(a.purchase_usd)),
        ("rent_usd_per_gpu_hour", "Rent of one H100 for an hour", usd(a.rent_usd_per_gpu_hour, 2)),
        ("electricity_usd_per_kwh", "Electricity", f"{usd(a.electricity_usd_per_kwh, 2)} a kWh"),
        ("years", "Written off over", plural(a.years, "year")),
        ("support_usd_per_year", "Support a year", usd(a.support_usd_per_year)),
        ("pue", "Data-centre overhead (PUE)", f"{a.pue:g}"),
        ("idle_watts", "Power when idle", f"{a.idle_watts:,.0f} W"),
        ("busy_watts", "Power when busy", f"{a.busy_watts:,.0f} W"),
    ]
    return [
        Source(name=name, value=value, note=fields[key].description or "",
               yours=getattr(a, key) != getattr(DEFAULTS, key))
        for key, name, value in shown
    ]


def compute(params: Params) -> Result:
    """The engine's comparison at the chosen utilisation, and both costs across 0-100 % for the chart."""
    a = _assumptions(params)
    answer = own_vs_rent(params.utilisation, a)
    top = nice_max(max(own_usd_per_year(a, 1.0), rent_usd_per_year(a, 1.0)), 4)
    plot = Plot(480, 240, x_max=1.0, y_max=top, left=70, right=26)
    frame = plot.frame("Utilisation (share of the year the GPUs are busy)", "US$ a year", pct, _thousands)
    even = answer.break_even_utilisation
    rows = [Row(utilisation=u, own=own_usd_per_year(a, u), rent=rent_usd_per_year(a, u), chosen=False)
            for u in TABLE_UTILISATIONS if abs(u - params.utilisation) > 1e-9]
    u = params.utilisation
    rows.append(Row(utilisation=u, own=answer.own_usd_per_year, rent=answer.rent_usd_per_year, chosen=True))
    rows.sort(key=lambda r: r.utilisation)
    where = (
        f"The lines cross at {pct(even)}."
        if even is not None
        else "The lines never cross: renting is cheaper."
    )
    return Result(
        answer=answer, assumptions=a, frame=frame,
        own_points=plot.points([0, 1], [own_usd_per_year(a, 0), own_usd_per_year(a, 1)]),
        rent_points=plot.points([0, 1], [rent_usd_per_year(a, 0), rent_usd_per_year(a, 1)]),
        chosen_x=plot.x(params.utilisation), even_x=plot.x(even) if even is not None else None,
        even_y=plot.y(own_usd_per_year(a, even)) if even is not None else None,
        own_y=plot.y(answer.own_usd_per_year), rent_y=plot.y(answer.rent_usd_per_year), rows=rows,
        sources=_sources(a),
        caption=f"Cost a year against utilisation: owning (solid) starts at {usd(own_usd_per_year(a, 0))} "
        f"and rises slowly with the power bill; renting (dashed) rises from $0 to "
        f"{usd(rent_usd_per_year(a, 1))}. {where}",
    )


def _thousands(value: float) -> str:
    return f"${value / 1000:,.0f}k" if value else "$0"


WIDGET = Widget(
    name="own-vs-rent",
    title="Own a dgx-1 or rent the hours?",
    params=Params,
    compute=compute,
    template="widgets/own-vs-rent.html",
    description="Owning a dgx-1 against renting the same H100-hours at a chosen utilisation, with the "
    "break-even utilisation; every default price illustrative, dated and sourced.",
)
