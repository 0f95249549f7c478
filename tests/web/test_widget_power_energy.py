"""Power and energy (infrastructure slides 7 and 21): the energy counts only the load the room can run (I4)."""

from __future__ import annotations

import html as markup
import re

import pytest
from fastapi.testclient import TestClient

HX = {"HX-Request": "true"}


def text(html: str) -> str:
    return markup.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


def kw(figure: str) -> float:
    value, unit = figure.replace(",", "").split()
    return float(value) / (1000 if unit == "W" else 1)


@pytest.mark.parametrize("room", ["", "&room_kw=5", "&room_kw=15", "&room_kw=40"])
def test_the_energy_is_that_of_the_nodes_the_room_can_run(client: TestClient, room: str) -> None:
    for nodes in (1, 2, 4, 8):
        for load in (0.3, 0.7, 1.0):
            said = text(client.get(f"/widgets/power-energy?nodes={nodes}&load={load}&days=30{room}",
                                   headers=HX).text)
            per_node = re.search(r"a node draws ([\d.,]+ k?W)", said)
            energy = re.search(r"(?:The (\d+) nodes? the room can run (?:uses|use) )?([\d,]+) kWh over ([\d,]+) hours",
                               said)
            assert per_node and energy, said
            fed = re.search(r"it can feed and cool (\d+) node", said) or re.search(r"it holds (\d+) node", said)
            running = int(energy.group(1)) if energy.group(1) else nodes
            if fed:
                assert running == min(nodes, int(fed.group(1))), said
            hours = float(energy.group(3).replace(",", ""))
            kwh = float(energy.group(2).replace(",", ""))
            assert kwh == pytest.approx(running * kw(per_node.group(1)) * hours, abs=running * 0.05 * hours + 1)
            if running == 1 and energy.group(1):
                assert "the room can run uses" in said


def test_slide_7_says_the_room_runs_one_node_and_counts_one_nodes_energy(lessons_client: TestClient) -> None:
    said = text(lessons_client.get("/lessons/what-is-gpu-infrastructure/7").text)
    assert "At this load it can feed and cool 1 node" in said
    assert re.search(r"The 1 node the room can run uses [\d,]+ kWh over 720 hours", said)
