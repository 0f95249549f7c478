"""One matrix multiply: its FLOPs (2·m·k·n), the bytes it moves, its intensity and its time on one GPU."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from app.engine import compute
from app.engine.hardware import get_gpu, peak_flops
from app.engine.memory import bytes_per_parameter


class Matrix(BaseModel):
    """One operand or the result, with its shape and its bytes at the precision."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="inputs, weights or outputs")
    rows: int = Field(description="Rows")
    cols: int = Field(description="Columns")
    bytes: float = Field(description="rows × cols × bytes per number")


class Matmul(BaseModel):
    """An (m × k) by (k × n) matrix multiply on one GPU."""

    model_config = ConfigDict(frozen=True)

    m: int = Field(description="Rows of the input: tokens processed together")
    k: int = Field(description="Inner dimension: numbers per input row")
    n: int = Field(description="Columns of the weight matrix: numbers per output row")
    precision: str = Field(description="Storage precision of every matrix")
    gpu: str = Field(description="GPU id the time is computed for")
    flops: float = Field(description="2·m·k·n: a multiply and an add for each of k terms of m × n results")
    matrices: list[Matrix] = Field(description="Inputs (m × k), weights (k × n), outputs (m × n)")
    bytes: float = Field(description="Bytes read and written: every matrix moved once")
    intensity: float = Field(description="FLOPs per byte moved")
    ridge: float = Field(description="The GPU's ridge point at the precision, FLOPs per byte")
    time: compute.Bound = Field(description="Time on one GPU at peak: compute against memory bandwidth")


def matmul_flops(m: int, k: int, n: int) -> float:
    """2·m·k·n: each of the m × n outputs takes k multiplies and k adds."""
    return 2.0 * m * k * n


def matmul(m: int, k: int, n: int, precision: str = "bf16", gpu_id: str = "h100") -> Matmul:
    """FLOPs, bytes moved (each matrix once, the ideal for a large cache) and the time bound on one GPU."""
    width = bytes_per_parameter(precision)
    mats = [
        Matrix(name="inputs", rows=m, cols=k, bytes=m * k * width),
        Matrix(name="weights", rows=k, cols=n, bytes=k * n * width),
        Matrix(name="outputs", rows=m, cols=n, bytes=m * n * width),
    ]
    moved = sum(x.bytes for x in mats)
    flops = matmul_flops(m, k, n)
    gpu = get_gpu(gpu_id)
    return Matmul(
        m=m,
        k=k,
        n=n,
        precision=precision,
        gpu=gpu_id,
        flops=flops,
        matrices=mats,
        bytes=moved,
        intensity=compute.intensity(flops, moved),
        ridge=compute.ridge(gpu_id, precision),
        time=compute.bound(flops / peak_flops(gpu, precision), moved / gpu.bandwidth),
    )
