"""Cost and power with illustrative prices; and the engine's purity: it imports nothing of the rest of app."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from app.engine.cost import CostAssumptions, break_even_utilisation, energy_kwh, own_vs_rent, power_cost

ENGINE = Path(__file__).resolve().parents[3] / "app" / "engine"
FORBIDDEN = (
    "fastapi",
    "starlette",
    "sqlalchemy",
    "jinja2",
    "jinja2_fragments",
    "alembic",
    "httpx",
    "uvicorn",
)


def test_energy_is_watts_times_hours() -> None:
    assert energy_kwh(700, 10) == 7.0


def test_the_power_bill_includes_the_facility_overhead() -> None:
    # prices times kWh: float rounding only
    assert power_cost(1000, 1, price_per_kwh=0.2, pue=1.5) == pytest.approx(0.3, rel=1e-9)


def test_owning_pays_only_above_the_break_even_utilisation() -> None:
    even = break_even_utilisation(CostAssumptions())
    assert even is not None and 0 < even < 1
    assert own_vs_rent(even - 0.05).cheaper == "rent"
    assert own_vs_rent(even + 0.05).cheaper == "own"
    at = own_vs_rent(even)
    # at break-even by definition: float rounding only
    assert at.own_usd_per_year == pytest.approx(at.rent_usd_per_year, rel=1e-9)


def test_cheap_rent_can_make_owning_never_pay() -> None:
    cheap = CostAssumptions(rent_usd_per_gpu_hour=0.5)
    assert break_even_utilisation(cheap) is None
    assert "renting always costs less" in own_vs_rent(1.0, cheap).sentence


def test_every_price_default_is_labelled_illustrative_with_a_source() -> None:
    for name, field in CostAssumptions.model_fields.items():
        if "usd" in name or name in ("pue", "idle_watts"):
            assert field.description and "Illustrative" in field.description, name


def test_an_idle_year_costs_money_to_own_and_nothing_to_rent() -> None:
    idle = own_vs_rent(0.0)
    assert (
        idle.rent_usd_per_year == 0 and idle.own_usd_per_year > 0 and idle.own_usd_per_busy_gpu_hour is None
    )


def _imports(path: Path) -> set[str]:
    """Every module a source file imports, absolute names."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", sorted(ENGINE.glob("*.py")), ids=lambda p: p.name)
def test_the_engine_imports_only_the_standard_library_pydantic_and_itself(path: Path) -> None:
    for name in _imports(path):
        top = name.split(".")[0]
        assert top not in FORBIDDEN, f"{path.name} imports {name}"
        if top == "app":
            assert name == "app.engine" or name.startswith("app.engine."), f"{path.name} imports {name}"


def test_importing_the_engine_pulls_in_no_web_or_database_module() -> None:
    """Run in a fresh interpreter so other tests' imports cannot hide a leak."""
    import subprocess
    import sys

    code = (
        "import sys, app.engine.plan, app.engine.serving_run, app.engine.training_run, app.engine.cost;"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}"
        " or (m.startswith('app.') and not m.startswith('app.engine'))];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    root = ENGINE.parents[1]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
