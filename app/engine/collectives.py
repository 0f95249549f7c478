"""Collectives: all-reduce, all-gather and reduce-scatter over dgx-1's GPUs, as NCCL's ring runs them.

A call costs latency + bytes on the bus ÷ achieved bus bandwidth, under NCCL's three protocols, and NCCL
picks the fastest (its tuner, NVIDIA/nccl src/graph/tuning.cc, does the same sum):

- LL (low latency): flags travel with every 8-byte line, so half the wire carries data; cheapest to start.
- LL128: a flag in each 128-byte line, 120 of 128 bytes carry data; a little dearer to start.
- Simple: the whole wire, the dearest start.

Latencies (NVIDIA/nccl src/graph/tuning.cc, Ring): a base cost a call of 6.6 / 14.0 / 8.4 µs (LL / LL128 /
Simple), plus a hop cost a ring step of 0.6 / 1.9 / 3.4 µs over NVLink and 2.7 / 4.0 / 14.0 µs for a step that
crosses the network. A ring all-reduce has 2·(n−1) steps and moves 2·(n−1)/n of the buffer through each GPU;
all-gather and reduce-scatter have n−1 steps and move (n−1)/n (nccl-tests doc/PERFORMANCE.md: "bus bandwidth").

The bus bandwidth is what a large message reaches: about 370 GB/s over NVLink 4 (jax-ml scaling-book, GPU
chapter), not the 450 GB/s line rate; beyond one node the ring crosses the eight 400 Gb/s rails, at the same
achieved share of their 400 GB/s (an assumption: no published multi-node dgx figure checked).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.engine.hardware import DGX_H100, NVLINK_4, NVLINK_4_ACHIEVED

Kind = Literal["all-reduce", "all-gather", "reduce-scatter"]
KINDS: tuple[Kind, ...] = ("all-reduce", "all-gather", "reduce-scatter")
Protocol = Literal["LL", "LL128", "Simple"]


class ProtocolCost(BaseModel):
    """NCCL's cost of one protocol on a ring: a base latency a call, a latency a step, a share of the bus."""

    model_config = ConfigDict(frozen=True)

    name: Protocol
    base_seconds: float = Field(description="Latency of a call, whatever its size")
    nvlink_step_seconds: float = Field(description="Latency of a ring step over NVLink")
    network_step_seconds: float = Field(description="Latency of a ring step that crosses the network")
    bus_share: float = Field(description="Share of the bus bandwidth that carries data")


PROTOCOLS: tuple[ProtocolCost, ...] = (
    ProtocolCost(name="LL", base_seconds=6.6e-6, nvlink_step_seconds=0.6e-6, network_step_seconds=2.7e-6,
                 bus_share=0.5),
    ProtocolCost(name="LL128", base_seconds=14.0e-6, nvlink_step_seconds=1.9e-6, network_step_seconds=4.0e-6,
                 bus_share=120 / 128),
    ProtocolCost(name="Simple", base_seconds=8.4e-6, nvlink_step_seconds=3.4e-6, network_step_seconds=14.0e-6,
                 bus_share=1.0),
)
NVLINK_ACHIEVED_SHARE = NVLINK_4_ACHIEVED / NVLINK_4.bandwidth


class Collective(BaseModel):
    """One collective call: its time and what set it."""

    model_config = ConfigDict(frozen=True)

    kind: Kind
    nbytes: float = Field(description="Buffer size in bytes (the whole buffer, as nccl-tests counts it)")
    gpus: int
    protocol: Protocol = Field(description="The protocol NCCL's tuner would pick: the fastest")
    latency_seconds: float = Field(description="Base latency plus the ring steps' latencies")
    transfer_seconds: float = Field(description="Bytes on the bus ÷ the protocol's share of the bus bandwidth")
    seconds: float = Field(description="latency + transfer")
    bus_bandwidth: float = Field(description="Achieved bus bandwidth of a large message, bytes a second")

    @property
    def busbw(self) -> float:
        """Bus bandwidth as nccl-tests reports it: bytes on the bus ÷ time."""
        return bus_factor(self.kind, self.gpus) * self.nbytes / self.seconds if self.seconds else 0.0


def nodes(gpus: int) -> int:
    """dgx-1 nodes a group of `gpus` spans."""
    return math.ceil(gpus / DGX_H100.gpus)


def bus_bandwidth(gpus: int) -> float:
    """Achieved bus bandwidth of a large message: NVLink's 370 GB/s in a node; across nodes the lesser of that
    and the eight rails (8 × 50 GB/s) at the same achieved share."""
    if gpus <= DGX_H100.gpus:
        return NVLINK_4_ACHIEVED
    rails = DGX_H100.network.links * DGX_H100.network.link.bandwidth * NVLINK_ACHIEVED_SHARE
    return min(NVLINK_4_ACHIEVED, rails)


def bus_factor(kind: Kind, gpus: int) -> float:
    """Bytes on the bus per byte of buffer: 2·(n−1)/n for all-reduce, (n−1)/n for the other two."""
    if gpus <= 1:
        return 0.0
    return (2 if kind == "all-reduce" else 1) * (gpus - 1) / gpus


def steps(kind: Kind, gpus: int) -> tuple[int, int]:
    """Ring steps of a call: (over NVLink, crossing the network); a ring over k nodes crosses 2k links an
    all-reduce (k a gather or scatter)."""
    total = (2 if kind == "all-reduce" else 1) * (gpus - 1)
    k = nodes(gpus)
    crossing = 0 if k == 1 else (2 if kind == "all-reduce" else 1) * k
    return total - crossing, crossing


def achieved_over(line_rate: float) -> float:
    """The bus bandwidth a ring reaches over a link of this line rate (bytes a second, each way): NVLink's
    achieved share of its line rate (370 of 450 GB/s), assumed for every link as it is for the rails."""
    return line_rate * NVLINK_ACHIEVED_SHARE


def protocol_seconds(p: ProtocolCost, kind: Kind, nbytes: float, gpus: int,
                     bus: float | None = None) -> tuple[float, float]:
    """(latency, transfer) of one call under protocol `p`; `bus` replaces dgx-1's achieved bus bandwidth (a ring
    over another link, `achieved_over`)."""
    nv, net = steps(kind, gpus)
    latency = p.base_seconds + nv * p.nvlink_step_seconds + net * p.network_step_seconds
    return latency, bus_factor(kind, gpus) * nbytes / ((bus or bus_bandwidth(gpus)) * p.bus_share)


def _fastest(kind: Kind, nbytes: float, gpus: int, bus: float | None = None) -> tuple[ProtocolCost, float, float]:
    """The protocol NCCL would pick and its (latency, transfer): plain arithmetic, no models built."""
    best, latency, transfer = PROTOCOLS[0], math.inf, 0.0
    for p in PROTOCOLS:
        lat, xfer = protocol_seconds(p, kind, nbytes, gpus, bus)
        if lat + xfer < latency + transfer:
            best, latency, transfer = p, lat, xfer
    return best, latency, transfer


def collective(kind: Kind, nbytes: float, gpus: int) -> Collective:
    """One call over `gpus` of dgx-1's GPUs (several nodes past 8), with the protocol NCCL would pick."""
    if gpus <= 1:
        return Collective(kind=kind, nbytes=nbytes, gpus=gpus, protocol="LL", latency_seconds=0.0,
                          transfer_seconds=0.0, seconds=0.0, bus_bandwidth=bus_bandwidth(1))
    best, latency, transfer = _fastest(kind, nbytes, gpus)
    return Collective(
        kind=kind, nbytes=nbytes, gpus=gpus, protocol=best.name, latency_seconds=latency,
        transfer_seconds=transfer, seconds=latency + transfer, bus_bandwidth=bus_bandwidth(gpus),
    )


def seconds(kind: Kind, nbytes: float, gpus: int, bus: float | None = None) -> float:
    """Time of one call (over dgx-1's links, or a ring whose achieved bus bandwidth is `bus`)."""
    if gpus <= 1:
        return 0.0
    _, latency, transfer = _fastest(kind, nbytes, gpus, bus)
    return latency + transfer
