"""The widget mechanism end to end through HTTP: htmx fragments, page fallback and bad input."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

HX = {"HX-Request": "true"}


def test_weight_storage_answers_gb_and_gib_side_by_side(client: TestClient) -> None:
    r = client.get("/widgets/weight-storage?parameters=7e9&bits=16", headers=HX)
    assert r.status_code == 200
    assert "14.00 GB" in r.text and "13.04 GiB" in r.text


def test_parameter_count_accepts_plain_and_scientific_notation(client: TestClient) -> None:
    a = client.get("/widgets/weight-storage?parameters=7000000000&bits=16", headers=HX).text
    b = client.get("/widgets/weight-storage?parameters=7e9&bits=16", headers=HX).text
    assert "14.00 GB" in a and "14.00 GB" in b


def test_bar_per_precision_is_relative_to_32_bit(client: TestClient) -> None:
    text = client.get("/widgets/weight-storage?parameters=7e9&bits=4", headers=HX).text
    widths = [float(w) for w in re.findall(r'class="bar(?: selected)?" x="56" y="4" width="([0-9.]+)"', text)]
    assert widths == [160.0, 80.0, 40.0, 20.0]
    assert 'class="bar selected" x="56" y="4" width="20.00"' in text
    assert "3.50 GB" in text


def test_htmx_update_carries_the_dgx1_panel_out_of_band(client: TestClient) -> None:
    text = client.get("/widgets/plan?model=llama-3.1-8b&gpus=1", headers=HX).text
    assert 'id="dgx-panel"' in text and 'hx-swap-oob="true"' in text
    assert "Showing the work of &ldquo;Plan on dgx-1&rdquo; on this page." in text


def test_a_weights_only_calculator_places_nothing_on_the_panel(client: TestClient) -> None:
    """Learner walk W1: the weights alone are a size, not a plan; 140 GB of them must not turn the panel red."""
    for parameters in ("7e9", "70e9", "405e9"):
        text = client.get(f"/widgets/weight-storage?parameters={parameters}&bits=16", headers=HX).text
        assert 'id="dgx-panel"' not in text and "GB" in text
    page = client.get("/widgets/weight-storage?parameters=70e9&bits=16").text  # its own page: an idle panel
    assert 'data-fits="true"' in page and "Nothing on this page has placed work on dgx-1 yet." in page


def test_the_panel_is_sent_only_when_it_differs_from_the_one_on_the_page(client: TestClient) -> None:
    first = client.get("/widgets/plan?model=llama-3.1-8b&gpus=1&batch_size=1", headers=HX).text
    key = re.search(r'<aside id="dgx-panel"[^>]*data-key="([0-9a-f]+)"', first)
    assert key, "the panel carries the key the next update sends back"
    same = client.get(f"/widgets/plan?model=llama-3.1-8b&gpus=1&batch_size=1.0&panel_key={key[1]}", headers=HX).text
    assert 'id="dgx-panel"' not in same and "Fits:" in same  # the result still comes
    moved = client.get(f"/widgets/plan?model=llama-3.1-8b&gpus=2&batch_size=1&panel_key={key[1]}", headers=HX).text
    assert 'id="dgx-panel"' in moved and '<li class="gpu" data-gpu="1" data-used="0"' not in moved


def test_a_good_update_carries_no_message_slots_and_a_refused_one_carries_them_all(client: TestClient) -> None:
    good = client.get("/widgets/weight-storage?parameters=7e9&bits=16", headers=HX)
    assert "-error" not in good.text  # static/app.js empties the slots after a good answer
    bad = client.get("/widgets/weight-storage?parameters=1e20&bits=16", headers=HX)
    assert bad.status_code == 422
    assert 'id="w1-parameters-error" hx-swap-oob="true">Must be at most' in bad.text
    assert 'id="w1-bits-error" hx-swap-oob="true"></p>' in bad.text  # a fixed field's message clears


def test_fragment_or_page_is_decided_by_hx_request_and_varies_on_it(client: TestClient) -> None:
    fragment = client.get("/widgets/weight-storage?parameters=7e9&bits=16", headers=HX)
    page = client.get("/widgets/weight-storage?parameters=7e9&bits=16")
    assert "HX-Request" in fragment.headers["vary"] and "HX-Request" in page.headers["vary"]
    assert "<html" not in fragment.text and "<html" in page.text
    restore = client.get("/widgets/weight-storage?parameters=7e9&bits=16",
                         headers={**HX, "HX-History-Restore-Request": "true"})
    assert "<html" in restore.text


def test_update_inside_a_lesson_puts_the_inputs_in_the_url(client: TestClient) -> None:
    r = client.get("/widgets/weight-storage?parameters=8e9&bits=8&w=1&lesson=tiny&step=1", headers=HX)
    assert r.headers["X-Share-Url"] == "/lessons/tiny/1?w1.parameters=8e9&w1.bits=8#w1"
    shared = client.get(r.headers["X-Share-Url"]).text
    assert "8.00 GB" in shared


def test_out_of_range_value_gets_its_message_beside_the_field_and_a_4xx(client: TestClient) -> None:
    r = client.get("/widgets/weight-storage?parameters=1e20&bits=16", headers=HX)
    assert r.status_code == 422
    assert re.search(r'id="w1-parameters-error" hx-swap-oob="true">Must be at most', r.text)
    assert "Not updated: fix the field above" in r.text  # the result swaps in, marked stale
    assert "Traceback" not in r.text


def test_text_where_a_number_belongs_is_explained(client: TestClient) -> None:
    r = client.get("/widgets/weight-storage?parameters=lots&bits=16", headers=HX)
    assert r.status_code == 422 and "Enter a number" in r.text


def test_wrong_bit_width_is_explained(client: TestClient) -> None:
    r = client.get("/widgets/weight-storage?parameters=7e9&bits=3", headers=HX)
    assert r.status_code == 422 and "Choose one of: 32, 16, 8, 4" in r.text


def test_without_javascript_the_form_submits_to_the_step_and_rerenders(client: TestClient) -> None:
    html = client.get("/lessons/tiny/1").text
    assert re.search(r'<form class="widget-form\s*" action="/lessons/tiny/1" method="get"', html)
    rerendered = client.get("/lessons/tiny/1?w=1&lesson=tiny&step=1&parameters=70e9&bits=16")
    assert rerendered.status_code == 200 and "140.00 GB" in rerendered.text
    assert 'value="70e9"' in rerendered.text


def test_without_javascript_bad_input_keeps_what_was_typed_and_says_why(client: TestClient) -> None:
    r = client.get("/lessons/tiny/1?w=1&parameters=-5&bits=16")
    assert r.status_code == 422
    assert 'value="-5"' in r.text and "Must be at least" in r.text
    assert "14.00 GB" in r.text  # the lesson's own result stays visible


def test_unknown_widget_is_a_404(client: TestClient) -> None:
    assert client.get("/widgets/nope", headers=HX).status_code == 404
