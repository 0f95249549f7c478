"""gpu-classroom serve | author | new | check | plan | migrate | profile | export."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from app import startup
from app.settings import Settings


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the lessons (migrations run at start)."""
    import uvicorn

    settings = Settings()
    startup.check(settings)
    host = args.host or settings.host
    port = args.port or settings.port
    print(f"GPU Classroom on http://{host}:{port}/  (Ctrl-C stops)", flush=True)
    uvicorn.run("app.main:app", host=host, port=port, workers=args.workers, log_level="info",
                proxy_headers=True, forwarded_allow_ips=args.forwarded_allow_ips)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """Validate every lesson in the folders given (default: the configured ones); print file:line: message for
    each problem."""
    from functools import partial

    from app.lessons.glossary import load_glossary
    from app.lessons.loader import load_lessons
    from app.lessons.rules import glossary_problems, minutes_problems
    from app.main import validate_lesson_block

    roots = [Path(p) for p in args.path] or Settings().lesson_dirs()
    root = ", ".join(str(r) for r in roots)
    lessons, problems = load_lessons(roots, partial(validate_lesson_block, seeds=args.seeds), strict=False)
    problems += glossary_problems(lessons, load_glossary(roots)[0]) + minutes_problems(lessons)
    problems += _drill_self_checks(args.seeds)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s) in {root}", file=sys.stderr)
        return 1
    steps = sum(len(le.steps) for le in lessons)
    print(f"ok: {len(lessons)} lesson(s), {steps} steps in {root}")
    return 0


def _drill_self_checks(seeds: int) -> list:  # type: ignore[type-arg]
    try:
        drills = importlib.import_module("app.drills.selfcheck")
    except ModuleNotFoundError:
        return []
    problems: list = drills.run(seeds)  # type: ignore[type-arg]
    return problems


def cmd_migrate(args: argparse.Namespace) -> int:
    """Bring the database schema up to date."""
    from app.classroom.db import upgrade

    settings = Settings()
    startup.check(settings)
    url = settings.resolved_database_url()
    upgrade(url)
    print(f"database at the newest schema: {url.split('@')[-1]}")
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    """Print the engine's plan as a readable table."""
    from pydantic import ValidationError

    from app.engine.errors import EngineError
    from app.engine.plan import PlanRequest, make_plan, plan_report

    fields = {k: v for k, v in vars(args).items() if k in PlanRequest.model_fields and v is not None}
    try:
        plan = make_plan(PlanRequest(**fields))
    except (ValidationError, EngineError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(plan_report(plan))
    return 0


def _optional(module: str, attr: str) -> Callable[[argparse.Namespace], int] | None:
    try:
        fn: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(module), attr)
    except (ModuleNotFoundError, AttributeError):
        return None
    return fn


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpu-classroom", description=__doc__)
    parser.add_argument("--debug", action="store_true", help="on a failure, print the whole traceback")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve the lessons")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument("--workers", type=int, default=1)
    serve.add_argument("--forwarded-allow-ips", default=os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1"),
                       help="proxies whose X-Forwarded-For/-Proto are believed: the learners' own addresses feed "
                       "the rate limits and HTTPS makes cookies Secure (default 127.0.0.1, or $FORWARDED_ALLOW_IPS)")
    serve.set_defaults(func=cmd_serve)
    check = sub.add_parser("check", help="validate lessons (and self-check drills)")
    check.add_argument("path", nargs="*", help="lesson folders (default: the configured ones)")
    check.add_argument("--seeds", type=int, default=200, help="seeds per drill for the self-check")
    check.set_defaults(func=cmd_check)
    migrate = sub.add_parser("migrate", help="bring the database schema up to date")
    migrate.set_defaults(func=cmd_migrate)
    plan = sub.add_parser("plan", help="print the engine's plan for a model on dgx-1")
    plan.add_argument("--model")
    plan.add_argument("--precision")
    plan.add_argument("--kv-precision", dest="kv_precision")
    plan.add_argument("--mode", choices=["serve", "train"])
    plan.add_argument("--gpus", type=int)
    plan.add_argument("--sharding")
    plan.add_argument("--batch-size", dest="batch_size", type=int)
    plan.add_argument("--context-tokens", dest="context_tokens", type=int)
    plan.add_argument("--prompt-tokens", dest="prompt_tokens", type=int)
    plan.add_argument("--output-tokens", dest="output_tokens", type=int)
    plan.add_argument("--train-tokens", dest="train_tokens", type=float)
    plan.add_argument("--optimizer")
    plan.add_argument("--activation-checkpointing", dest="activation_checkpointing", nargs="?", const="full",
                      default=None, choices=["none", "selective", "full", "true", "false"],
                      help="none, selective or full (alone: full; true/false: full/none)")
    plan.add_argument("--mfu", type=float)
    plan.add_argument("--fp8-speedup", dest="fp8_speedup", type=float,
                      help="fp8 training: speed against bf16 at the same MFU (default 1.3)")
    plan.set_defaults(func=cmd_plan)
    for name, module, attr, text in (
        ("author", "app.web.author", "add_parser", "serve while watching the lessons: each save reloads its lesson"),
        ("new", "app.lessons.scaffold", "add_parser", "write a new lesson (two steps, a widget, a drill) to edit"),
        ("profile", "app.profiling", "add_parser", "time reading, parsing and arithmetic on this CPU"),
        ("export", "app.classroom.export", "add_parser", "export a class's data"),
    ):
        adder = _optional(module, attr)
        if adder is not None:
            adder(sub.add_parser(name, help=text))  # type: ignore[arg-type]
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command. A failure at start-up (settings, database, data folder) is one line on stderr and exit
    status 2; the traceback only with --debug."""
    from pydantic import ValidationError

    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except (startup.StartupProblem, ValidationError) as exc:
        if args.debug:
            raise
        print(f"gpu-classroom {args.command}: {one_line(exc)}", file=sys.stderr)
        return 2
    return code


def one_line(exc: Exception) -> str:
    """A settings error reads as its sentences; a start-up problem is one already."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        return "bad setting: " + "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
    return str(exc)


if __name__ == "__main__":
    sys.exit(main())
