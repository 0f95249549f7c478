"""Each widget agrees with its step's text and with the dgx-1 panel (issue 13, item 5): one test per contradiction
a learner found, each rendered over HTTP as the learner sees it."""

from __future__ import annotations

import html as markup
import re

from fastapi.testclient import TestClient

from tests.web.live_clock import Clock, clock_fixture
from tests.web.test_widget_serving_run import hidden

__all__ = ["clock_fixture"]

HX = {"HX-Request": "true"}


def text(html: str) -> str:
    return markup.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


def answer(html: str) -> str:
    found = re.search(r'<p class="answer"[^>]*>(.*?)</p>', html, re.S)
    assert found, "no answer line"
    return text(found.group(1))


# Step 16: the roofline


def test_step_16_a_batch_that_does_not_fit_says_so_instead_of_a_speed(client: TestClient) -> None:
    html = client.get("/widgets/roofline?batch_size=1024&context_tokens=1500", headers=HX).text
    said = answer(html)
    needed = re.search(r"need ([\d.]+) GB of 80 GB", said)
    assert "does not fit on one H100" in said and needed and float(needed.group(1)) > 80
    assert "compute-bound" not in said
    table = text(html.split("<tbody>")[1].split("</tbody>")[0])
    assert "tokens/s" not in table and "does not fit" in table
    assert "does not fit" in text(html.split('id="dgx-panel"')[1])  # the panel agrees


def test_step_16_a_batch_that_fits_still_reports_its_speed(client: TestClient) -> None:
    html = client.get("/widgets/roofline?batch_size=32&context_tokens=1500", headers=HX).text
    assert "does not fit" not in answer(html) and "memory-bound" in answer(html)
    assert "tokens/s" in html.split("<tbody>")[1]


def test_step_16_the_batch_box_offers_32_and_the_ridge_batch(client: TestClient) -> None:
    """Typed freely, or picked from links under the answer (not a datalist: its drop-down covered the answer while
    the learner typed, and cost the browser more per keystroke than the rest of the update)."""
    html = client.get("/widgets/roofline?batch_size=1&context_tokens=1500").text
    field = re.search(r'<input id="w1-batch_size"[^>]*>', html)
    assert field and 'type="range"' not in field.group(0) and " list=" not in field.group(0)
    links = re.findall(r'<a class="button stop" href="([^"]+)"[^>]*>([\d,]+)</a>', html)
    by_batch = {text: href.replace("&amp;", "&") for href, text in links}
    assert "32" in by_batch and "276" in by_batch  # 276: weights alone, decode reaches the ridge
    assert 'aria-current="true">1</a>' in html  # the batch on screen is marked
    picked = client.get(by_batch["276"]).text  # a link is the widget with that batch
    field = re.search(r'<input id="w1-batch_size"[^>]*>', picked)
    assert field and 'value="276"' in field.group(0) and "Batch 276" in picked
    assert "the ridge, weights alone" in html


def test_step_16_the_kv_note_does_not_contradict_the_ridge_answer(client: TestClient) -> None:
    html = text(client.get("/widgets/roofline?batch_size=1&context_tokens=1500", headers=HX).text)
    note = html.split("The batch of 276")[1]
    assert note.startswith(" counts the weights alone.")
    assert "with its KV caches, decode never reaches the ridge" in note


# Step 9: the request timeline


def test_step_9_a_five_token_answer_is_not_said_to_cost_more_than_the_prompt(client: TestClient) -> None:
    # One token: doubling it adds one decode step (with its fixed cost), less than doubling the prompt does.
    html = text(client.get("/widgets/request-timeline?prompt_tokens=1000&output_tokens=1", headers=HX).text)
    assert "0× more" not in html and "1× more" not in html and "Long answers cost" not in html
    assert "Here long questions cost more" in html and "1-token answer is too short" in html


def test_step_9_the_default_request_still_says_long_answers_cost_more(client: TestClient) -> None:
    html = text(client.get("/widgets/request-timeline", headers=HX).text)
    assert re.search(r"Long answers cost \d+× more here than long questions", html)


def test_step_9_says_up_front_when_405b_needs_two_servers(client: TestClient) -> None:
    html = client.get("/widgets/request-timeline?model=llama-3.1-405b", headers=HX).text
    said = answer(html)
    assert "does not fit on one H100" in said and "16 GPUs: 2 dgx-1 nodes, more than the one server you have" in said


# Step 11: CPU against GPU


def test_step_11_with_all_eight_chosen_the_table_has_a_column_for_the_eight(client: TestClient) -> None:
    html = client.get("/widgets/cpu-vs-gpu?gpus=8", headers=HX).text
    head = text(html.split("<thead>")[1].split("</thead>")[0])
    assert "All 8 H100s" in head
    ratio_side = re.search(r"dgx-1's eight H100s in bf16: ([\d.]+ PFLOPS)", text(html))
    assert ratio_side and ratio_side.group(1) in text(html.split("<tbody>")[1].split("</tbody>")[0])
    one = client.get("/widgets/cpu-vs-gpu?gpus=1", headers=HX).text
    assert "All 8 H100s" not in one


# Step 4: the panel when a plan overflows one GPU


def test_step_4_the_panel_does_not_read_as_if_the_server_holds_the_job(client: TestClient) -> None:
    url = ("/widgets/plan?model=llama-3.1-8b&precision=bf16&mode=train&gpus=1&sharding=none&optimizer=adam"
           "&batch_size=1&context_tokens=8192")
    panel = text(client.get(url, headers=HX).text.split('id="dgx-panel"')[1])
    summary = re.search(r"dgx-1 (.*?) 1 of 8 GPUs ·", panel)
    assert summary, panel[:300]
    assert "of 640 GB" not in summary.group(1)
    assert re.fullmatch(r"1 of 8 GPUs in use; does not fit: GPU 0 needs [\d.]+ GB of its 80 GB", summary.group(1))
    assert "free memory on the others does not help" in panel


# Step 14: the fixes of a plan that overflows


def test_step_14_tensor_parallel_over_5_or_9_gpus_is_refused_beside_the_field(client: TestClient) -> None:
    for gpus in (5, 9, 3):
        r = client.get(f"/widgets/plan?model=llama-3.1-70b&gpus={gpus}&fixes=true&knobs=model,gpus", headers=HX)
        assert r.status_code == 422
        error = re.search(r'id="w1-gpus-error"[^>]*>([^<]*)<', r.text)
        assert error and "64 attention heads that cannot be cut" in error.group(1)
        assert "1, 2, 4, 8, 16, 32 or 64 GPUs" in error.group(1)
    assert client.get("/widgets/plan?model=llama-3.1-70b&gpus=4", headers=HX).status_code == 200
    assert client.get("/widgets/plan?model=llama-3.1-70b&mode=train&gpus=5", headers=HX).status_code == 200


def test_step_14_no_fix_proposes_an_uneven_split_or_a_context_with_no_headroom(client: TestClient) -> None:
    html = text(client.get("/widgets/plan?model=llama-3.1-70b&gpus=1&batch_size=8&fixes=true", headers=HX).text)
    assert "Use 3 GPUs" not in html and "fits: 3." not in html
    assert "Use 4 GPUs instead of 1" in html and "splitting its attention heads evenly: 4." in html
    html = text(client.get("/widgets/plan?model=llama-3.1-70b&gpus=2&batch_size=32&fixes=true", headers=HX).text)
    assert "80.00 GB a GPU" not in html
    kept = [int(n.replace(",", "")) for n in re.findall(r"Keep ([\d,]+) tokens of context", html)]
    assert all(n >= 1024 and n % 1024 == 0 for n in kept)


# Step 19: the five questions


def test_step_19_70b_is_not_timed_on_one_h100_that_cannot_hold_it(client: TestClient) -> None:
    html = text(client.get("/widgets/five-questions?model=llama-3.1-70b", headers=HX).text)
    speed = re.search(r"Decoding for one user: ([^.]*)\.", html)
    assert speed and "capacity" not in speed.group(1) and "on one H100" not in speed.group(1)
    assert "memory bandwidth" in speed.group(1) and "on 2 H100s, the fewest that hold it" in speed.group(1)
    assert "Serving: " in html and "does not fit" in html  # the fit answer above it agrees


# Step 8: the text and the serving run at a batch of 32


def test_step_8_quotes_what_the_run_shows_once_its_batch_of_32_is_full(lessons_client: TestClient,
                                                                       clock: Clock) -> None:
    url = "/widgets/serving-run?play_seconds=60&w=1&lesson=what-ai-workloads-need&step=8&arrival_rate=20"
    started = lessons_client.get(f"{url}&action=start", headers=HX).text
    clock.now += 12  # a simulated minute: the batch has long been full
    html = lessons_client.get(f"{url}&{hidden(started)}", headers=HX).text
    assert re.search(r'data-value="batch">32.0 of 32<', html)
    user = re.search(r'data-value="user-speed">([\d,]+) tokens/s<', html)
    total = re.search(r'data-value="throughput">([\d,]+) tokens/s<', html)
    assert user and total
    prose = text(lessons_client.get("/lessons/what-ai-workloads-need/8").text)
    assert f"each user sees {user.group(1)} tokens per second and the GPU {total.group(1)} in all:" in prose


# Steps 4 and 5: one 8-GPU job, two per-GPU figures


def test_step_5_explains_its_per_gpu_memory_against_step_4s(lessons_client: TestClient) -> None:
    step4 = text(lessons_client.get("/lessons/what-ai-workloads-need/4").text)
    step5 = text(lessons_client.get("/lessons/what-ai-workloads-need/5").text)
    zero3 = re.search(r"an eighth each: ([\d.]+ GB) a GPU", step4)
    assert zero3
    panel = re.search(r"GPU 0: ([\d.]+ GB) of 80 GB\. training Llama 3\.1 8B on 8 GPUs", step5)
    assert panel, "step 5's panel holds the training run"
    said = re.search(rf"selective checkpointing, {re.escape(panel.group(1))} of its memory, less than step 4's "
                     rf"{re.escape(zero3.group(1))} for the same sequence without checkpointing:", step5)
    assert said


# Step 1: the plan of one chat user, no traffic yet (already right on main; kept from regressing)


def test_step_1_one_idle_chat_user_leaves_the_gpu_idle_in_the_panel(client: TestClient) -> None:
    html = client.get("/widgets/plan?model=llama-3.1-8b&mode=serve&gpus=1&batch_size=1&context_tokens=8192",
                      headers=HX).text
    gpu0 = html.split('data-gpu="0"')[1].split("</li>")[0]
    assert "0 % busy · 140 W" in gpu0 and "100 %" not in gpu0  # a GPU holding a model, idle (app.engine.power)
    assert "idle until a request arrives" in html
