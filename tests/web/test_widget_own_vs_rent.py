"""Own vs rent over HTTP: break-even utilisation, and every price labelled illustrative with date and source."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.engine.cost import CostAssumptions, break_even_utilisation, own_vs_rent

HX = {"HX-Request": "true"}


def test_step_18_gives_the_break_even_at_the_illustrative_prices(lessons_client: TestClient) -> None:
    page = lessons_client.get("/lessons/what-ai-workloads-need/18").text
    even = break_even_utilisation(CostAssumptions())
    assert even is not None and 0.5 < even < 0.8
    assert f'data-value="break-even">Owning pays above {even * 100:.0f} % utilisation' in page
    verdict = "owning" if own_vs_rent(0.6).cheaper == "own" else "renting"
    assert f"so <strong>{verdict} is cheaper</strong>" in page  # at the step's 60 %


def test_every_default_price_says_illustrative_with_a_date_and_a_source(client: TestClient) -> None:
    html = client.get("/widgets/own-vs-rent", headers=HX).text
    sources = re.search(r'<details class="sources" open>(.*?)</details>', html, re.S)
    assert sources
    items = re.findall(r"<li>(.*?)</li>", sources.group(1), re.S)
    prices = [i for i in items if "$" in i]
    assert len(prices) >= 4
    for item in prices:
        assert "Illustrative" in item and re.search(r"20\d\d", item), item


def test_below_break_even_renting_is_cheaper(client: TestClient) -> None:
    html = client.get("/widgets/own-vs-rent?utilisation=0.3", headers=HX).text
    assert "so <strong>renting is cheaper</strong>" in html


def test_a_cheaper_rent_moves_the_break_even_up_and_marks_your_price(client: TestClient) -> None:
    html = client.get("/widgets/own-vs-rent?rent_per_gpu_hour=2", headers=HX).text
    even = break_even_utilisation(CostAssumptions(rent_usd_per_gpu_hour=2.0))
    default = break_even_utilisation(CostAssumptions())
    assert even is not None and default is not None and even > default
    assert f'data-value="break-even">Owning pays above {even * 100:.0f} % utilisation' in html
    assert "Rent of one H100 for an hour: $2.00</strong> (yours)" in html


def test_the_chart_marks_your_utilisation_and_the_crossing(client: TestClient) -> None:
    low = client.get("/widgets/own-vs-rent?utilisation=0.2", headers=HX).text
    high = client.get("/widgets/own-vs-rent?utilisation=0.9", headers=HX).text
    xs = [float(re.search(r'class="marker" x1="([\d.]+)"', h).group(1)) for h in (low, high)]  # type: ignore[union-attr]
    assert xs[0] < xs[1]
    even = break_even_utilisation(CostAssumptions())
    assert even is not None
    assert 'class="even"' in low and f"The lines cross at {even * 100:.0f} %." in low
    assert '<tr class="chosen"><th scope="row">20 % (yours)</th>' in low


def test_when_renting_always_wins_it_says_so(client: TestClient) -> None:
    html = client.get("/widgets/own-vs-rent?rent_per_gpu_hour=0.5", headers=HX).text
    assert "Renting is cheaper at any utilisation" in html and 'class="even"' not in html


def test_bad_prices_are_refused_beside_their_fields(client: TestClient) -> None:
    for query, field, message in (("years=50", "years", "Must be at most 20"),
                                  ("utilisation=1.5", "utilisation", "Must be at most 1"),
                                  ("power_price=cheap", "power_price", "Enter a number")):
        r = client.get(f"/widgets/own-vs-rent?{query}", headers=HX)
        assert r.status_code == 422
        assert re.search(rf'id="w1-{field}-error" hx-swap-oob="true">{message}', r.text), query
