"""Power, cooling and energy of dgx-1 nodes: the draw at a load, the room's budget, a period's energy."""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

from app.engine.cost import energy_kwh, power_cost
from app.engine.hardware import DGX_H100
from app.engine.power import node_watts


class FacilityRequest(BaseModel):
    """Some dgx-1 nodes at a load for some days; prices and factors are illustrative parameters."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    nodes: int = Field(default=1, ge=1, le=10_000, description="dgx-1 nodes")
    load: float = Field(
        default=1.0, ge=0, le=1,
        description="How busy each node's GPUs are, 0 to 1 (app.engine.power: weights loaded, idle to TDP)",
    )
    room_kw: float | None = Field(default=None, gt=0, le=1e6, description="Power the room feeds, cools: kW")
    days: float = Field(default=30, gt=0, le=3660, description="Days running")
    price_per_kwh: float | None = Field(default=None, ge=0, le=10, description="Electricity price, $/kWh")
    kg_co2_per_kwh: float | None = Field(default=None, ge=0, le=2, description="Grid emissions, kg CO₂/kWh")
    pue: float = Field(default=1.0, ge=1, le=5, description="Facility power ÷ IT power (1 = no overhead)")


class Facility(BaseModel):
    """What the nodes draw and use, against the room."""

    node_max_watts: float = Field(description="One node's rated maximum (DGX H100 user guide: 10.2 kW), to provision")
    gpu_watts_at_max: float = Field(description="Its eight GPUs at TDP, part of the maximum")
    node_watts: float = Field(description="One node's draw at the load (app.engine.power.node_watts)")
    watts: float = Field(description="All nodes at the chosen load")
    running_nodes: int = Field(description="Nodes that run: all of them, or as many as the room feeds and cools")
    fits_room: bool | None = Field(description="Power within the room's budget; null without a room")
    room_watts: float | None
    over_watts: float = Field(description="Watts beyond the room's budget (0 when it fits)")
    nodes_room_holds: int | None = Field(description="Nodes at this load the room can feed and cool")
    hours: float
    energy_kwh: float = Field(
        description="Energy over the period of the nodes that run (the room's share when it cannot feed them all), "
        "before facility overhead"
    )
    max_energy_kwh: float = Field(description="The same nodes at maximum power: the upper bound")
    facility_kwh: float = Field(description="Energy with the facility's overhead (× PUE)")
    cost_usd: float | None = Field(description="Energy cost with PUE; null without a price")
    co2_kg: float | None = Field(description="Emissions with PUE; null without a factor")


def facility(req: FacilityRequest) -> Facility:
    """Power of the nodes at a load, the room's verdict, and the energy, cost and emissions of the period."""
    node_max = DGX_H100.max_power_watts
    per_node = node_watts(req.load)
    watts = req.nodes * per_node
    hours = req.days * 24
    room = req.room_kw * 1000 if req.room_kw is not None else None
    # per_node is at least an idle node's draw (app.engine.power), never 0, so the ratio stays finite
    holds = None if room is None else math.floor(room / per_node + 1e-9)
    running = req.nodes if holds is None else min(req.nodes, holds)
    drawn = running * per_node  # what the room lets run: the rest would throttle or trip
    kwh = energy_kwh(drawn, hours)
    return Facility(
        node_max_watts=node_max, gpu_watts_at_max=DGX_H100.gpus * DGX_H100.gpu.tdp_watts, node_watts=per_node,
        watts=watts, running_nodes=running,
        fits_room=None if room is None else watts <= room, room_watts=room,
        over_watts=0.0 if room is None else max(0.0, watts - room), nodes_room_holds=holds, hours=hours,
        energy_kwh=kwh, max_energy_kwh=energy_kwh(req.nodes * node_max, hours), facility_kwh=kwh * req.pue,
        cost_usd=None if req.price_per_kwh is None else power_cost(drawn, hours, req.price_per_kwh, req.pue),
        co2_kg=None if req.kg_co2_per_kwh is None else kwh * req.pue * req.kg_co2_per_kwh,
    )
