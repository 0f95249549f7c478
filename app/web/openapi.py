"""The OpenAPI document, made honest: every status code and content type a route answers with, and each widget
as its own operation with its query parameters (the route is one, /widgets/{name}; its inputs are the widget's).

FastAPI documents 200 and 422 as JSON for every route. The pages answer HTML, redirect after a post (303),
refuse a missing CSRF token or a foreign Origin (403), a large body (413), an unknown address (404), too many
attempts (429); errors come as HTML, or as JSON to a client that asks for it. This module adds what the
routes do, in one table, without touching the routes.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from app.pages.widgets import widget_docs

HTML, JSON, CSV, MARKDOWN = "text/html", "application/json", "text/csv", "text/markdown"
UNSAFE = {"post", "put", "patch", "delete"}
REASONS = {
    "204": "Nothing changed (a poll) or nothing to send",
    "286": "A live widget's run has finished: htmx stops polling",
    "303": "Done: go to the page named in Location",
    "304": "Not modified (the ETag matched)",
    "400": "Malformed request",
    "403": "Not allowed: no CSRF token, another site's Origin, or the wrong key or admin token",
    "404": "Nothing at this address",
    "409": "Taken: someone in the class already has this name",
    "410": "The class has ended",
    "413": "The body is larger than the server accepts (64 KB)",
    "422": "Check the input: the message names the field",
    "429": "Too many attempts: wait the seconds in Retry-After",
    "503": "Could not find a free class code; try again",
}

# (method, path) -> the statuses it answers beyond those every route shares, and the content of its success.
EXTRA: dict[tuple[str, str], tuple[set[str], list[str]]] = {
    ("post", "/teach"): ({"403", "429", "503"}, [HTML]),
    ("post", "/join"): ({"409", "410", "429"}, [HTML]),
    ("get", "/class-banner"): ({"204"}, [HTML]),
    ("post", "/class-activity"): ({"204"}, [HTML]),
    ("get", "/companion/sheet.md"): (set(), [MARKDOWN]),
    ("get", "/companion/sheet.json"): (set(), [JSON]),
    ("get", "/companion/profile-data.csv"): ({"304"}, [CSV]),
    ("post", "/companion/sheet"): ({"429"}, [HTML]),
    ("post", "/companion/sheet/profiles"): ({"429"}, [HTML]),
    ("get", "/teach/{code}/export/{name}"): ({"403"}, [CSV, JSON]),
    ("post", "/predictions"): ({"429"}, [HTML]),
    ("post", "/drills/{name}/answer"): ({"429"}, [HTML]),
    ("post", "/drills/{name}/next"): ({"429"}, [HTML]),
    ("post", "/api/drills/{name}/grade"): ({"429"}, [JSON]),
    ("get", "/widgets/{name}"): ({"286"}, [HTML]),
}


def document(app: FastAPI) -> dict[str, Any]:
    """The app's OpenAPI document (built once)."""
    if app.openapi_schema is None:
        schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        refine(schema)
        add_widgets(schema)
        app.openapi_schema = schema
    return app.openapi_schema


def _content(types: list[str], current: dict[str, Any] | None = None) -> dict[str, Any]:
    """Content of these types: JSON keeps the schema FastAPI wrote (or any JSON), the others are text."""
    current = current or {}
    return {t: (current.get(JSON, {"schema": {}}) if t == JSON else {"schema": {"type": "string"}}) for t in types}


def refine(schema: dict[str, Any]) -> None:
    """Every operation: its success content, the shared statuses, and its own."""
    error_json = {"type": "object", "properties": {"detail": {}}, "required": ["detail"]}
    for path, ops in schema["paths"].items():
        for method, op in ops.items():
            api = path.startswith("/api")
            extra, success = EXTRA.get((method, path), (set(), [JSON] if api else [HTML]))
            responses: dict[str, Any] = op.setdefault("responses", {})
            ok = responses.setdefault("200", {"description": "OK"})
            if not api or success != [JSON]:
                ok["content"] = _content(success, ok.get("content"))
            codes = {"404", "422"} | extra
            if method in UNSAFE:
                codes |= {"403", "413"} | (set() if api else {"303"})
            if path.startswith("/teach/{code}") or path.startswith("/teach/") and "{code}" in path:
                codes |= {"403", "303"} if method == "get" else {"403"}
            if "{" in path and not api:
                codes.add("303")  # an old address moved (a class page to the join form)
            for code in sorted(codes):
                entry = responses.setdefault(code, {"description": REASONS.get(code, "Error")})
                if code in ("204", "304", "303"):
                    entry.pop("content", None)
                    continue
                if code == "286":
                    entry["content"] = _content([HTML])
                    continue
                if code == "422" and api and "content" in entry:
                    continue  # FastAPI's own validation error schema
                entry["content"] = {JSON: {"schema": error_json}} if api else {
                    HTML: {"schema": {"type": "string"}}, JSON: {"schema": error_json}}
            if not api and "422" in responses:
                responses["422"]["content"] = {HTML: {"schema": {"type": "string"}}, JSON: {"schema": error_json}}


def _inline(prop: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in prop:
        return dict(defs[prop["$ref"].split("/")[-1]])
    if "anyOf" in prop:
        return {**prop, "anyOf": [_inline(p, defs) for p in prop["anyOf"]]}
    return prop


def add_widgets(schema: dict[str, Any]) -> None:
    """One operation per widget, /widgets/<name>, with its Params as query parameters."""
    shared = schema["paths"].get("/widgets/{name}", {}).get("get", {})
    for doc in widget_docs():
        name, params = doc.name, dict[str, Any](doc.params)  # a JSON schema, read as openapi.py reads its own
        defs = params.get("$defs", {})
        parameters = [
            {"name": field, "in": "query", "required": False,
             "description": prop.get("description", ""),
             "schema": {k: v for k, v in _inline(prop, defs).items() if k not in ("title", "description")}}
            for field, prop in params.get("properties", {}).items()
        ]
        schema["paths"][f"/widgets/{name}"] = {"get": {
            "summary": doc.title,
            "description": doc.description + " Answers the widget's HTML: a fragment to htmx "
            "(HX-Request: true), else its page. Bad input: 422 with the message beside the field.",
            "operationId": f"widget_{name.replace('-', '_')}",
            "tags": ["widgets"],
            "parameters": parameters,
            "responses": {code: dict(entry) for code, entry in shared.get("responses", {}).items()},
        }}
