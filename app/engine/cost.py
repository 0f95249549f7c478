"""Cost and power: owning a dgx-1 against renting H100 hours, energy, and the break-even utilisation.

Every price is a parameter. The defaults are illustrative, dated and sourced: real quotes vary by
a factor of two or more with time, volume and provider.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.engine.hardware import DGX_H100
from app.engine.power import node_watts, watts
from app.engine.units import SECONDS_PER_YEAR

HOURS_PER_YEAR = SECONDS_PER_YEAR / 3600  # 8,766: a year of 365.25 days
# The course's one electricity price: about the US commercial average in 2023 (EIA, Electric Power Monthly,
# table 5.3: 12.7 cents a kWh). Every widget that prices energy starts from it.
ELECTRICITY_USD_PER_KWH = 0.13
# The course's one price of a dgx-1: SemiAnalysis' estimate of a DGX H100's sale price (May 2023), as cited by
# Epoch AI's training-cost-trends.
DGX_PRICE_USD = 270_000
# Support and maintenance a year as a share of the purchase price (supercluster.blog, "NVIDIA DGX H100
# hardware", 2024: about 20 % a year).
SUPPORT_SHARE_PER_YEAR = 0.20


def energy_kwh(watts: float, hours: float) -> float:
    """Energy in kilowatt-hours: watts × hours ÷ 1,000 (dgx-1 at 10.2 kW for 24 h = 244.8 kWh)."""
    return watts * hours / 1000


def power_cost(watts: float, hours: float, price_per_kwh: float, pue: float = 1.0) -> float:
    """Cost of the energy, with the facility's overhead (PUE: facility power ÷ IT power)."""
    return energy_kwh(watts, hours) * pue * price_per_kwh


class CostAssumptions(BaseModel):
    """Prices and running figures for owning or renting; every default is illustrative."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    purchase_usd: float = Field(
        default=DGX_PRICE_USD,
        ge=0,
        le=1e9,
        allow_inf_nan=False,
        description="Price of one dgx-1. Illustrative: $270,000, SemiAnalysis' estimate of a DGX H100's "
        "sale price (May 2023), as cited by Epoch AI's training-cost-trends",
    )
    support_usd_per_year: float = Field(
        default=SUPPORT_SHARE_PER_YEAR * DGX_PRICE_USD,
        ge=0,
        le=1e9,
        allow_inf_nan=False,
        description="Support and maintenance a year. Illustrative: about 20 % of the purchase price a year "
        "(supercluster.blog, 'NVIDIA DGX H100 hardware', 2024), here of the same $270,000",
    )
    years: float = Field(
        default=4,
        ge=0.5,
        le=20,
        allow_inf_nan=False,
        description="Years over which the purchase is written off",
    )
    rent_usd_per_gpu_hour: float = Field(
        default=3.00,
        ge=0.01,
        le=1000,
        allow_inf_nan=False,
        description="Rent of one H100 SXM for an hour. Illustrative: the middle of the $2.49-3.99 on-demand "
        "range at specialty clouds, early 2026 (pricegpu.pages.dev, 'H100 vs A100 cloud pricing')",
    )
    electricity_usd_per_kwh: float = Field(
        default=ELECTRICITY_USD_PER_KWH,
        ge=0,
        le=10,
        allow_inf_nan=False,
        description="Price of electricity. Illustrative: about the US commercial average in 2023 "
        "(EIA, Electric Power Monthly)",
    )
    pue: float = Field(
        default=1.58,
        ge=1,
        le=5,
        allow_inf_nan=False,
        description="Power usage effectiveness of the data centre. Illustrative: the 2023 average in the "
        "Uptime Institute Global Data Center Survey",
    )
    idle_watts: float = Field(
        default=node_watts(0.0),
        ge=0,
        le=DGX_H100.max_power_watts,
        allow_inf_nan=False,
        description="Node power when idle. Illustrative: app.engine.power's rule, 8 H100s holding weights at "
        "140 W plus the server's non-GPU share",
    )
    busy_watts: float = Field(
        default=node_watts(1.0),
        ge=0,
        le=DGX_H100.max_power_watts,
        allow_inf_nan=False,
        description="Node power when busy. Illustrative: app.engine.power's rule, 8 H100s at their 700 W TDP "
        "plus the non-GPU share (8.4 kW measured on an HGX H100 training, Latif et al. 2025)",
    )


class OwnVsRent(BaseModel):
    """A year of one dgx-1's worth of GPU hours, owned or rented, at a utilisation."""

    utilisation: float = Field(description="Share of the year the 8 GPUs do useful work")
    own_usd_per_year: float = Field(description="Write-off + support + energy (busy and idle)")
    rent_usd_per_year: float = Field(description="8 GPUs × busy hours × hourly rent")
    own_usd_per_busy_gpu_hour: float | None = Field(description="Owning cost ÷ GPU hours used; null at 0 %")
    energy_kwh_per_year: float = Field(description="Energy the node draws in a year, before PUE")
    break_even_utilisation: float | None = Field(
        description="Utilisation above which owning is cheaper; null if renting is always cheaper"
    )
    cheaper: Literal["own", "rent"] = Field(description="Which is cheaper at this utilisation")
    sentence: str = Field(description="The comparison in a sentence")


def _node_watts(a: CostAssumptions, utilisation: float) -> float:
    """Average node power: idle plus the busy share of the difference (the one rule of app.engine.power)."""
    return watts(utilisation, a.idle_watts, a.busy_watts)


def own_usd_per_year(a: CostAssumptions, utilisation: float) -> float:
    """Owning a dgx-1 for a year: write-off, support and electricity."""
    energy = power_cost(_node_watts(a, utilisation), HOURS_PER_YEAR, a.electricity_usd_per_kwh, a.pue)
    return a.purchase_usd / a.years + a.support_usd_per_year + energy


def rent_usd_per_year(a: CostAssumptions, utilisation: float) -> float:
    """Renting the GPU hours the same work uses."""
    return DGX_H100.gpus * HOURS_PER_YEAR * utilisation * a.rent_usd_per_gpu_hour


def break_even_utilisation(a: CostAssumptions) -> float | None:
    """The utilisation where owning and renting cost the same, or None if renting always wins.

    Owning is fixed + u × energy_slope, renting u × rent_slope; they cross at fixed ÷ (rent − energy).
    """
    fixed = own_usd_per_year(a, 0.0)
    energy_slope = own_usd_per_year(a, 1.0) - fixed
    rent_slope = rent_usd_per_year(a, 1.0)
    if rent_slope <= energy_slope or fixed > rent_slope - energy_slope:
        return None
    return fixed / (rent_slope - energy_slope)


def _per_hour(usd: float, hours: float) -> float | None:
    """Dollars an hour, or None at no hours or so few (a subnormal utilisation) that the quotient overflows."""
    per_hour = usd / hours if hours else math.inf
    return per_hour if math.isfinite(per_hour) else None


def own_vs_rent(utilisation: float, a: CostAssumptions | None = None) -> OwnVsRent:
    """Owning against renting at a utilisation, with the break-even point."""
    a = a or CostAssumptions()
    own, rent = own_usd_per_year(a, utilisation), rent_usd_per_year(a, utilisation)
    even = break_even_utilisation(a)
    busy_hours = DGX_H100.gpus * HOURS_PER_YEAR * utilisation
    cheaper: Literal["own", "rent"] = "own" if own < rent else "rent"
    where = (
        f"owning pays above {even * 100:.0f} % utilisation"
        if even is not None
        else "renting always costs less"
    )
    return OwnVsRent(
        utilisation=utilisation,
        own_usd_per_year=own,
        rent_usd_per_year=rent,
        own_usd_per_busy_gpu_hour=_per_hour(own, busy_hours),
        energy_kwh_per_year=energy_kwh(_node_watts(a, utilisation), HOURS_PER_YEAR),
        break_even_utilisation=even,
        cheaper=cheaper,
        sentence=f"At {utilisation * 100:.0f} % utilisation owning costs ${own:,.0f} a year and renting "
        f"${rent:,.0f}: {where} (illustrative prices).",
    )
