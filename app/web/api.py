"""The JSON API under /api: thin handlers over the engine, documented in OpenAPI.

POST /api/plan            a plan (the contract of issue 3)
GET  /api/models          the model catalog with parameter counts
GET  /api/hardware        GPUs, links and the dgx-1 node
GET  /api/roofline        a GPU's roofline at a precision, with one intensity placed under it
POST /api/training-run    a training run's state at a simulated time (POST: the run may carry a model object)
POST /api/serving-run     a serving run's state at a simulated time
POST /api/cost            owning a dgx-1 against renting H100 hours

Invalid input answers 422 with the field and a sentence; an EngineError from the engine does too.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, FastAPI, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from app.engine.compute import Roofline, roofline
from app.engine.cost import CostAssumptions, OwnVsRent, own_vs_rent
from app.engine.errors import EngineError
from app.engine.hardware import GPU, GPUS, LINKS, Link, Node, node
from app.engine.models import CATALOG, Architecture
from app.engine.plan import Plan, PlanRequest, make_plan
from app.engine.serving_run import ServingRun, ServingSnapshot, simulate_serving
from app.engine.training_run import TrainingRun, TrainingSnapshot, simulate_training
from app.engine.workload import GpuId, Precision
from app.web.responses import problem, unprocessable

router = APIRouter(prefix="/api", tags=["engine"])

ERRORS: dict[int | str, dict[str, object]] = {
    400: {"description": "The body is not valid JSON"},
    422: {"description": "Invalid input: the field and a sentence"},
}


class Hardware(BaseModel):
    """Every GPU, link and node the engine knows."""

    gpus: list[GPU] = Field(description="GPUs for comparison: H100 (dgx-1's), A100, H200")
    links: list[Link] = Field(description="NVLink, PCIe and the 400 Gb/s network")
    node: Node = Field(description="dgx-1, a DGX H100")


class SimulatedTime(BaseModel):
    """When to look at a simulation, and its seed."""

    model_config = ConfigDict(strict=True)

    seed: int = Field(default=0, ge=0, le=2**63 - 1, description="Seed of the run's randomness")
    elapsed_seconds: float = Field(
        default=0, ge=0, le=1e10, allow_inf_nan=False, description="Simulated seconds since the start"
    )


class TrainingRunRequest(TrainingRun, SimulatedTime):
    """A training run, its seed and the simulated time to look at."""


class ServingRunRequest(ServingRun, SimulatedTime):
    """A serving run, its seed and the simulated time to look at."""


class CostRequest(CostAssumptions):
    """Prices (illustrative defaults) and the utilisation to compare at."""

    utilisation: float = Field(
        default=0.5, ge=0, le=1, allow_inf_nan=False, description="Share of the year busy"
    )


@router.post("/plan", response_model=Plan, responses=ERRORS)
async def plan(req: Annotated[PlanRequest | None, Body()] = None) -> Plan:
    """Plan a model on GPUs: memory per GPU, whether it fits, speed, bottleneck and explanation."""
    return make_plan(req or PlanRequest())


@router.get("/models", response_model=list[Architecture])
async def models() -> list[Architecture]:
    """The model catalog: architectures from config.json, parameters computed from them."""
    return list(CATALOG.values())


@router.get("/hardware", response_model=Hardware)
async def hardware() -> Hardware:
    """GPUs, links and dgx-1, each figure from its spec sheet."""
    return Hardware(gpus=list(GPUS.values()), links=list(LINKS.values()), node=node())


@router.get("/roofline", response_model=Roofline, responses=ERRORS)
async def get_roofline(
    gpu: Annotated[GpuId, Query(description="GPU id")] = "h100",
    precision: Annotated[Precision, Query(description="Weight precision")] = "bf16",
    intensity: Annotated[
        float, Query(ge=0.001, le=1e6, allow_inf_nan=False, description="FLOPs per byte")
    ] = 1.0,
) -> Roofline:
    """A GPU's roofline: attainable FLOPS = min(peak, intensity × bandwidth), and the ridge point."""
    return roofline(gpu, precision, intensity)


@router.post("/training-run", response_model=TrainingSnapshot, responses=ERRORS)
async def training_run(req: Annotated[TrainingRunRequest | None, Body()] = None) -> TrainingSnapshot:
    """A training run's state after elapsed_seconds of simulated time; the same inputs give the same state."""
    req = req or TrainingRunRequest()
    return simulate_training(req, req.seed, req.elapsed_seconds)


@router.post("/serving-run", response_model=ServingSnapshot, responses=ERRORS)
async def serving_run(req: Annotated[ServingRunRequest | None, Body()] = None) -> ServingSnapshot:
    """A serving run's state after elapsed_seconds of simulated time; the same inputs give the same state."""
    req = req or ServingRunRequest()
    return simulate_serving(req, req.seed, req.elapsed_seconds)


@router.post("/cost", response_model=OwnVsRent, responses=ERRORS)
async def cost(req: Annotated[CostRequest | None, Body()] = None) -> OwnVsRent:
    """Owning a dgx-1 against renting its GPU hours at a utilisation, with the break-even point."""
    req = req or CostRequest()
    return own_vs_rent(req.utilisation, CostAssumptions(**req.model_dump(exclude={"utilisation"})))


async def engine_error_handler(request: Request, exc: Exception) -> Response:
    """An EngineError is bad input the engine explains: 422 with its sentence, in the validation shape."""
    message = str(exc) if isinstance(exc, EngineError) else "The engine could not use this input."
    return unprocessable([problem("request", message, ["body"], "engine_error")], message)


def install(app: FastAPI) -> None:
    """Register the engine's error handler on an app (create_app calls it)."""
    app.add_exception_handler(EngineError, engine_error_handler)
