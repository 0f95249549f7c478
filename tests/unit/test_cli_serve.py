"""`gpu-classroom serve` believes forwarded headers only from the proxies it is told about."""

from __future__ import annotations

from typing import Any

import pytest

from app import cli


def served_with(monkeypatch: pytest.MonkeyPatch, *argv: str) -> dict[str, Any]:
    import uvicorn

    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(kw, app=app))
    assert cli.main(["serve", *argv]) == 0
    return seen


def test_by_default_only_a_proxy_on_this_host_is_believed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    kw = served_with(monkeypatch)
    assert kw["proxy_headers"] is True and kw["forwarded_allow_ips"] == "127.0.0.1"


def test_a_load_balancer_on_another_host_can_be_named(monkeypatch: pytest.MonkeyPatch) -> None:
    assert served_with(monkeypatch, "--forwarded-allow-ips", "10.0.0.5")["forwarded_allow_ips"] == "10.0.0.5"
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "10.0.0.6,10.0.0.7")
    assert served_with(monkeypatch)["forwarded_allow_ips"] == "10.0.0.6,10.0.0.7"
