"""/numbers: published measurements beside the engine, and every constant with its source, as real tables."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.engine.anchors import anchor_rows
from app.engine.constants import constants


def rows_of(html: str, table: str) -> list[str]:
    found = re.search(rf'<table [^>]*data-table="{table}"[^>]*>(.*?)</table>', html, re.S)
    assert found, f"no {table} table"
    return re.findall(r"<tr data-[a-z]+=.*?</tr>", found.group(1), re.S)


def test_the_footer_links_to_the_numbers(client: TestClient) -> None:
    assert '<a href="/numbers">Check our numbers</a>' in client.get("/").text


def test_each_anchor_is_a_row_with_its_source_measured_engine_and_ratio(client: TestClient) -> None:
    r = client.get("/numbers")
    assert r.status_code == 200
    rows = rows_of(r.text, "anchors")
    expected = anchor_rows()
    assert len(rows) == len(expected)
    for row, anchor in zip(rows, expected, strict=True):
        assert f'data-anchor="{anchor.id}"' in row
        assert "<strong>Source:</strong>" in row and "<strong>Hardware:</strong>" in row
        assert re.search(r'data-value="ratio">×\d+\.\d\d<', row)
        assert re.search(r'data-value="measured">[\d,.]+ ', row) and re.search(r'data-value="engine">[\d,.]+ ', row)
        assert ("<p data-gap><strong>Not matched:</strong>" in row) == bool(anchor.gap)  # a miss says why
    assert "96 GB HBM2e" in r.text and "MLPerf Inference v4.0" in r.text


def test_each_constant_is_listed_with_a_source(client: TestClient) -> None:
    html = client.get("/numbers").text
    rows = rows_of(html, "constants")
    assert len(rows) == len(constants())
    for row in rows:
        source = re.search(r'<td class="source">([^<]+)</td>', row)
        assert source and source.group(1).strip(), row
    assert 'data-constant="NVIDIA H100 SXM5 80GB: memory bandwidth"' in html
    assert re.search(r'data-constant="Mistral 7B: sliding window">.*?4,096', html, re.S)


def test_the_tables_are_real_tables_with_captions_and_scoped_headers(client: TestClient) -> None:
    html = client.get("/numbers").text
    for table in ("anchors", "constants"):
        body = re.search(rf'<table [^>]*data-table="{table}"[^>]*>(.*?)</table>', html, re.S)
        assert body and "<caption>" in body.group(1) and "<thead>" in body.group(1)
        heads = re.findall(r"<th scope=\"(col|row)\"", body.group(1))
        assert "col" in heads and "row" in heads
    assert html.count("<h1>") == 1
