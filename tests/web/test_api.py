"""The JSON API under /api, through the whole app: the plan contract, the catalogs, simulations, errors."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.web import api as api_module
from app.web import errors

PER_GPU = {"weights", "kv_cache", "activations", "loss_head", "gradients", "optimizer", "runtime", "total",
           "capacity"}


@pytest.fixture
def api() -> Iterator[TestClient]:
    """The /api router on a bare app with the app's error handlers: no database, lessons or other routers."""
    app = FastAPI()
    errors.install(app)
    app.include_router(api_module.router)
    api_module.install(app)
    with TestClient(app) as c:
        yield c


def test_the_whole_app_serves_the_api(client: TestClient) -> None:
    """create_app discovers the router and its error handler."""
    assert client.post("/api/plan", json={"model": "llama-3.1-70b", "gpus": 2}).json()["fits"]
    assert client.post("/api/training-run", json={"gpus": 1, "sharding": "none"}).status_code == 422


def test_an_empty_plan_request_plans_llama_8b_on_one_h100(api: TestClient) -> None:
    body = api.post("/api/plan").json()
    assert set(body) == {"fits", "per_gpu", "min_gpus", "bottleneck", "serve", "train", "explanation"}
    assert set(body["per_gpu"]) == PER_GPU and body["per_gpu"]["capacity"] == 80_000_000_000
    assert body["fits"] and 18.5e9 <= body["per_gpu"]["total"] <= 19.5e9
    assert body["bottleneck"] == "memory-bandwidth" and body["train"] is None


def test_a_plan_accepts_a_custom_architecture(api: TestClient) -> None:
    arch = {"layers": 4, "hidden": 512, "heads": 8, "kv_heads": 2, "head_dim": 64, "ffn": 2048}
    arch |= {"vocab": 32000, "tied_embeddings": True, "experts": 4, "experts_per_token": 1}
    response = api.post("/api/plan", json={"model": arch, "mode": "train"})
    assert response.status_code == 200
    assert response.json()["train"]["flops"] > 0


def test_a_plan_that_does_not_fit_still_answers_200_with_the_reason(api: TestClient) -> None:
    body = api.post("/api/plan", json={"model": "llama-3.1-70b"}).json()
    assert not body["fits"] and body["bottleneck"] == "capacity" and body["min_gpus"] == 2
    assert any("does not fit" in s for s in body["explanation"])


def test_min_gpus_for_serving_is_a_count_that_splits_the_heads(api: TestClient) -> None:
    """70B at batch 8 of 8,192 tokens: three H100s hold it, but 64 heads do not split over three; four do."""
    request = {"model": "llama-3.1-70b", "batch_size": 8, "context_tokens": 8192}
    assert api.post("/api/plan", json=request).json()["min_gpus"] == 4
    assert api.post("/api/plan", json={**request, "gpus": 4}).json()["fits"]


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"gpus": 0}, "gpus", "at least 1"),
        ({"model": "gpt-5"}, "model", "Unknown model 'gpt-5'"),
        ({"precision": "fp6"}, "precision", "fp32"),
        ({"mode": "train", "precision": "int4"}, "precision", "training needs"),
        ({"model": "llama-3.1-70b", "gpus": 3}, "gpus", "a layer of Llama 3.1 70B is 64 attention heads"),
    ],
)
def test_bad_plan_input_is_a_422_naming_the_field_in_a_sentence(
    api: TestClient, body: dict[str, object], field: str, words: str
) -> None:
    response = api.post("/api/plan", json=body)
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert any(e["field"] == field and words in e["message"] for e in detail), detail


def test_serving_on_a_count_that_does_not_split_the_heads_is_a_422_at_gpus_training_is_not(api: TestClient) -> None:
    """Tensor parallel: 70B's 64 heads do not split over 3 GPUs; a custom model's 12 heads not over 8."""
    response = api.post("/api/plan", json={"model": "llama-3.1-70b", "gpus": 3})
    assert response.status_code == 422
    [error] = response.json()["detail"]
    assert error["field"] == "gpus" and error["loc"] == ["body", "gpus"]
    assert error["message"].endswith("use 1, 2, 4, 8, 16, 32 or 64 GPUs.")
    arch = {"layers": 4, "hidden": 768, "heads": 12, "kv_heads": 4, "ffn": 3072, "vocab": 32000}
    custom = api.post("/api/plan", json={"model": arch, "gpus": 8})
    assert custom.status_code == 422 and custom.json()["detail"][0]["field"] == "gpus"
    assert "use 1, 2, 3, 4, 6 or 12 GPUs" in custom.json()["detail"][0]["message"]
    run = api.post("/api/serving-run", json={"model": "llama-3.1-70b", "gpus": 3})
    assert run.status_code == 422 and run.json()["detail"][0]["field"] == "gpus"
    assert api.post("/api/plan", json={"model": "llama-3.1-70b", "gpus": 3, "mode": "train"}).status_code == 200


def test_the_model_catalog_lists_parameter_counts(api: TestClient) -> None:
    models = {m["id"]: m for m in api.get("/api/models").json()}
    assert models["llama-3.1-8b"]["parameters"] == 8_030_261_248
    assert models["mixtral-8x7b"]["active_parameters"] < models["mixtral-8x7b"]["parameters"]


def test_a_model_from_the_catalog_can_be_posted_back_as_a_custom_architecture(api: TestClient) -> None:
    mixtral = next(m for m in api.get("/api/models").json() if m["id"] == "mixtral-8x7b")
    by_object = api.post("/api/plan", json={"model": mixtral, "gpus": 2}).json()
    by_id = api.post("/api/plan", json={"model": "mixtral-8x7b", "gpus": 2}).json()
    assert by_object["per_gpu"] == by_id["per_gpu"]


def test_the_hardware_lists_three_gpus_three_links_and_dgx_1(api: TestClient) -> None:
    body = api.get("/api/hardware").json()
    assert [g["id"] for g in body["gpus"]] == ["h100", "a100", "h200"]
    assert {link["id"] for link in body["links"]} == {"nvlink", "pcie", "network"}
    assert body["node"]["id"] == "dgx-1" and body["node"]["max_power_watts"] == 10_200


def test_the_roofline_places_decode_below_the_ridge(api: TestClient) -> None:
    body = api.get("/api/roofline", params={"gpu": "h100", "precision": "bf16", "intensity": 1}).json()
    assert body["ridge"] == pytest.approx(295, rel=0.01)
    # bandwidth × intensity: float rounding only
    assert body["point"]["binds"] == "memory-bandwidth" and body["point"]["flops"] == pytest.approx(3.35e12, rel=1e-9)


def test_a_bad_roofline_query_is_a_422(api: TestClient) -> None:
    response = api.get("/api/roofline", params={"intensity": -1})
    assert response.status_code == 422 and "intensity" in response.json()["message"]


def test_a_training_run_polled_twice_gives_the_same_state(api: TestClient) -> None:
    ask = {"model": "llama-3.1-8b", "gpus": 8, "seed": 7, "elapsed_seconds": 7200}
    first, second = (
        api.post("/api/training-run", json=ask).json(),
        api.post("/api/training-run", json=ask).json(),
    )
    assert first == second and first["checkpoints_written"] == 1 and 0 < first["progress"] < 1


def test_a_training_run_that_does_not_fit_is_a_422_with_the_numbers(api: TestClient) -> None:
    response = api.post("/api/training-run", json={"gpus": 1, "sharding": "none"})
    assert response.status_code == 422
    assert "GPU 0 needs" in response.json()["message"]


def test_a_saturated_serving_run_has_a_growing_queue(api: TestClient) -> None:
    early = api.post("/api/serving-run", json={"arrival_rate": 50, "elapsed_seconds": 60}).json()
    late = api.post("/api/serving-run", json={"arrival_rate": 50, "elapsed_seconds": 600}).json()
    assert (
        early["saturated"] and late["queue"] > early["queue"] and late["ttft_seconds"] > early["ttft_seconds"]
    )


def test_cost_compares_owning_and_renting_at_a_utilisation(api: TestClient) -> None:
    body = api.post("/api/cost", json={"utilisation": 0.9}).json()
    assert body["cheaper"] == "own" and "illustrative" in body["sentence"]


def test_the_api_is_documented_in_openapi(api: TestClient) -> None:
    paths = api.get("/openapi.json").json()["paths"]
    for path in ("/api/plan", "/api/models", "/api/hardware", "/api/roofline", "/api/training-run",
                 "/api/serving-run", "/api/cost"):
        assert path in paths
    assert "description" in paths["/api/plan"]["post"] or "summary" in paths["/api/plan"]["post"]
