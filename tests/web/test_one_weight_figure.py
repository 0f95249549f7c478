"""One figure for a model's weights (issue 25, item 9: an int4 whole model was 4.14, 4.02 or 4.17 GB depending on
the page). Every model of the catalogue at every serving precision: the plan widget, the decode-speed widget and the
memory-capacity slide state the engine's one figure, `memory.weight_bytes`, each at its own rounding."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.engine.memory import weight_bytes
from app.engine.models import CATALOG
from app.engine.units import PRECISIONS
from app.main import create_app
from tests.conftest import make_settings

HX = {"HX-Request": "true"}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(Path(tmp_path_factory.mktemp("weights"))))) as c:
        yield c


def text(client: TestClient, url: str) -> str:
    r = client.get(url, headers=HX)
    assert r.status_code == 200, (url, r.text[:300])
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", r.text))


@pytest.mark.parametrize("precision", [p for p in PRECISIONS if p != "fp32"])
@pytest.mark.parametrize("model", sorted(CATALOG))
def test_every_widget_states_the_engines_one_weight_figure(client: TestClient, model: str, precision: str) -> None:
    gb = weight_bytes(CATALOG[model], precision) / 1e9
    plan = text(client, f"/widgets/plan?model={model}&precision={precision}&mode=serve&gpus=1")
    assert f"Weights: {gb:,.2f} GB" in plan, (model, precision, gb)
    decode = text(client, f"/widgets/decode-speed?model={model}&precision={precision}")
    if "does not fit on one" not in decode:  # a model one GPU cannot hold is refused first, with no read to state
        assert f"of the {gb:,.2f} GB of weights" in decode or f"all {gb:,.2f} GB stored" in decode, (model, precision)
    slide = text(client, f"/widgets/memory-capacity?model={model}&precision={precision}")
    assert f"Weights {gb:,.1f} GB" in slide, (model, precision, gb)
