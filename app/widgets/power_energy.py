"""Power and energy of dgx-1 nodes: the draw against a room's budget, and a period's energy, cost and CO₂."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.engine.facility import Facility, FacilityRequest, facility
from app.widgets.base import Widget

BAR_WIDTH = 300


class Params(BaseModel):
    """Nodes, load and period; the room, price and grid factor appear when the lesson gives them."""

    nodes: int = Field(default=1, ge=1, le=64, description="dgx-1 nodes")
    load: float = Field(
        default=1.0, ge=0, le=1, allow_inf_nan=False, description="Share of each node's maximum power"
    )
    room_kw: float | None = Field(
        default=None, gt=0, le=10_000, allow_inf_nan=False, description="What the room can feed and cool, kW"
    )
    days: float = Field(default=30, gt=0, le=366, allow_inf_nan=False, description="Days running")
    price_per_kwh: float | None = Field(
        default=None, ge=0, le=10, allow_inf_nan=False, description="Electricity price, $/kWh (illustrative)"
    )
    kg_co2_per_kwh: float | None = Field(
        default=None, ge=0, le=2, allow_inf_nan=False, description="Grid emissions, kg CO₂/kWh (illustrative)"
    )

    def request(self) -> FacilityRequest:
        return FacilityRequest(
            nodes=self.nodes,
            load=self.load,
            room_kw=self.room_kw,
            days=self.days,
            price_per_kwh=self.price_per_kwh,
            kg_co2_per_kwh=self.kg_co2_per_kwh,
        )


class PowerView(BaseModel):
    f: Facility
    power_width: float
    room_x: float | None
    energy_width: float
    bar_width: int = BAR_WIDTH
    label_x: int = 96
    view_width: int = 96 + BAR_WIDTH + 10
    room_line_x: float | None
    load_share: float


def compute(params: Params) -> PowerView:
    """The engine's facility figures, the power bar scaled to the larger of draw and room."""
    f = facility(params.request())
    top = max(f.watts, f.room_watts or 0, 1.0)
    room_x = None if f.room_watts is None else round(BAR_WIDTH * f.room_watts / top, 2)
    return PowerView(
        f=f,
        power_width=round(BAR_WIDTH * f.watts / top, 2),
        room_x=room_x,
        room_line_x=None if room_x is None else 96 + room_x,
        energy_width=round(BAR_WIDTH * (f.energy_kwh / f.max_energy_kwh if f.max_energy_kwh else 0), 2),
        load_share=params.load,
    )


WIDGET = Widget(
    name="power-energy",
    title="Power and energy of dgx-1",
    params=Params,
    compute=compute,
    template="widgets/power-energy.html",
    description="dgx-1 nodes at a load: power against a room, energy over a period, its cost and CO₂.",
)
