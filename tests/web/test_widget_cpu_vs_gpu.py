"""CPU vs GPU over HTTP: the specs side by side (step 11) and the same prompt timed on each (step 12)."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

HX = {"HX-Request": "true"}


def bar_widths(html: str) -> dict[str, float]:
    """Widths of the first chart's bars (peak FLOP/s in the specs view, the prefill in the timing view)."""
    html = html.split("</figure>")[0]
    pattern = r'<g data-bar="(\w+)">.*?class="bar-(?:cpu|gpu|node)" x="[\d.]+" y="[\d.]+" width="([\d.]+)"'
    return {k: float(v) for k, v in re.findall(pattern, html, re.S)}


def test_step_11_sets_the_chips_side_by_side_naming_the_cpu_peak(lessons_client: TestClient) -> None:
    page = lessons_client.get("/lessons/what-ai-workloads-need/11").text
    assert 'data-value="ratio">69× the FLOP/s, 5.5× the bandwidth' in page
    assert "16,896, plus 528 tensor cores" in page and "112 cores at 2.0 GHz" in page
    assert "AVX-512 vector units in fp32 peak" in page and "arithmetic ceilings" in page


def test_switching_to_amx_narrows_the_gap(client: TestClient) -> None:
    avx = client.get("/widgets/cpu-vs-gpu?view=specs&cpu_peak=avx512-fp32", headers=HX).text
    amx = client.get("/widgets/cpu-vs-gpu?view=specs&cpu_peak=amx-bf16", headers=HX).text
    assert "69× the FLOP/s" in avx and "4.3× the FLOP/s" in amx
    assert bar_widths(avx)["cpu"] < bar_widths(amx)["cpu"]


def test_all_eight_gpus_multiply_the_gpu_side(client: TestClient) -> None:
    html = client.get("/widgets/cpu-vs-gpu?view=specs&gpus=8", headers=HX).text
    assert "552× the FLOP/s, 43.6× the bandwidth" in html and "eight H100s in bf16: 7.9 PFLOPS" in html


def test_step_12_times_the_same_prompt_on_each(lessons_client: TestClient) -> None:
    page = lessons_client.get("/lessons/what-ai-workloads-need/12").text
    assert '<span data-value="ratio">69×</span> sooner on one H100' in page
    assert "CPUs (AVX-512 vector units in fp32) 2.29 s; one H100 33.3 ms; eight H100s 4.16 ms" in page
    assert "<strong>AVX-512 vector units in fp32</strong> peak" in page


def test_a_longer_prompt_takes_proportionally_longer_on_both(client: TestClient) -> None:
    html = client.get("/widgets/cpu-vs-gpu?view=timing&tokens=4096&cpu_peak=amx-bf16", headers=HX).text
    assert "CPUs (AMX matrix units in bf16) 287 ms; one H100 66.5 ms" in html
    assert "AMX is the CPUs' best case" in html


def test_bad_input_is_refused_beside_the_field(client: TestClient) -> None:
    r = client.get("/widgets/cpu-vs-gpu?view=timing&tokens=0", headers=HX)
    assert r.status_code == 422 and re.search(r'id="w1-tokens-error" hx-swap-oob="true">Must be at least 1', r.text)
    r = client.get("/widgets/cpu-vs-gpu?view=timing&cpu_peak=avx2", headers=HX)
    assert r.status_code == 422 and re.search(r'id="w1-cpu_peak-error" hx-swap-oob="true">Choose one of', r.text)


def test_every_error_slot_the_response_fills_is_on_the_page(lessons_client: TestClient) -> None:
    for step, view in ((11, "specs"), (12, "timing")):
        page = lessons_client.get(f"/lessons/what-ai-workloads-need/{step}").text
        fragment = lessons_client.get(f"/widgets/cpu-vs-gpu?view={view}&tokens=x", headers=HX).text
        for slot in re.findall(r'id="(w1-[a-z_]+-error)" hx-swap-oob', fragment):
            assert f'id="{slot}"' in page, (step, slot)
