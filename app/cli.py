"""gpu-classroom serve | author | new | check | plan | migrate | profile | export."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TextIO

from pydantic import ValidationError
from sqlalchemy.exc import DBAPIError

from app import startup
from app.classroom.classes import get_class
from app.classroom.db import Database, upgrade
from app.classroom.export import FORMATS, export
from app.companion import profiling
from app.drills import selfcheck
from app.engine.errors import EngineError
from app.engine.plan import PlanRequest, make_plan, plan_report
from app.lessons import scaffold
from app.lessons.blocks import validate_lesson_block
from app.lessons.glossary import load_glossary
from app.lessons.loader import load_lessons
from app.lessons.rules import glossary_problems, minutes_problems
from app.pages.class_drills import describe_attempts
from app.pages.class_report import class_report
from app.settings import Settings


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the lessons (migrations run at start)."""
    import uvicorn

    settings = Settings()
    lesson_folders(settings)
    startup.check(settings)
    host = args.host or settings.host
    port = args.port or settings.port
    print(f"GPU Classroom on http://{host}:{port}/  (Ctrl-C stops)", flush=True)
    uvicorn.run("app.main:create_app", factory=True, host=host, port=port, workers=args.workers, log_level="info",
                proxy_headers=True, forwarded_allow_ips=args.forwarded_allow_ips,  # each worker builds its app
                timeout_graceful_shutdown=3)  # a banner poll held open (app/classroom/bell.py) asks again later
    return 0


def cmd_author(args: argparse.Namespace) -> int:
    """Serve in author mode on one process: the configured lessons plus the folders given, watched."""
    import uvicorn

    from app.main import create_app  # here, not above: the other commands need no web stack

    settings = Settings()
    given_folders(args.path)
    extra = [str(Path(p)) for p in args.path]
    settings = settings.model_copy(update={"lessons_dirs": os.pathsep.join([settings.lessons_dirs, *extra])})
    lesson_folders(settings)
    host, port = args.host or settings.host, args.port or settings.port
    folders = ", ".join(str(d) for d in settings.lesson_dirs())
    print(f"Author mode on http://{host}:{port}/ watching {folders}: save a file and its pages refresh "
          "(Ctrl-C stops)", flush=True)
    uvicorn.run(create_app(settings, author=True), host=host, port=port, log_level="warning",
                timeout_graceful_shutdown=2)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """Validate every lesson in the folders given (default: the configured ones); print file:line: message for
    each problem."""
    given_folders(args.path)
    roots = [Path(p) for p in args.path] or lesson_folders(Settings())
    root = ", ".join(str(r) for r in roots)
    lessons, problems = load_lessons(roots, partial(validate_lesson_block, seeds=args.seeds), strict=False)
    problems += glossary_problems(lessons, load_glossary(roots)[0]) + minutes_problems(lessons)
    found = [str(p) for p in problems if not p.warning] + [str(p) for p in selfcheck.run(args.seeds)]
    warnings = [str(p) for p in problems if p.warning]
    for line in found + warnings:
        print(line)
    noted = f" ({len(warnings)} warning{'s' if len(warnings) != 1 else ''})" if warnings else ""
    if found:
        print(f"{len(found)} problem{'s' if len(found) != 1 else ''}{noted} in {root}", file=sys.stderr)
        return 1
    steps = sum(len(le.steps) for le in lessons)
    print(f"ok: {len(lessons)} lesson(s), {steps} steps in {root}{noted}")
    return 0


def lesson_folders(settings: Settings) -> list[Path]:
    """The configured lesson folders; StartupProblem naming the setting and the path of one that is missing."""
    missing = settings.missing_lesson_dirs()
    if missing:
        raise startup.StartupProblem("; ".join(missing))
    return settings.lesson_dirs()


def given_folders(paths: Sequence[str]) -> None:
    """StartupProblem for a lesson folder given on the command line that is not a folder."""
    missing = [f"{p} is not a folder (looked for {Path(p).resolve()})" for p in paths if not Path(p).is_dir()]
    if missing:
        raise startup.StartupProblem("; ".join(missing))


def cmd_migrate(args: argparse.Namespace) -> int:
    """Bring the database schema up to date."""
    settings = Settings()
    startup.check(settings)
    url = settings.resolved_database_url()
    upgrade(url)
    print(f"database at the newest schema: {url.split('@')[-1]}")
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    """Print the engine's plan as a readable table; a bad argument is one line naming it and what it takes."""
    fields = {k: v for k, v in vars(args).items() if k in PlanRequest.model_fields and v is not None}
    try:
        plan = make_plan(PlanRequest(**fields))
    except ValidationError as exc:
        print(f"gpu-classroom plan: {bad_arguments(exc)}", file=sys.stderr)
        return 2
    except EngineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(plan_report(plan))
    return 0


def bad_arguments(exc: ValidationError) -> str:
    """Each bad argument as `--precision 'fp7': choose from 'fp32', ... or 'int4'`, all on one line."""
    parts = []
    for error in exc.errors():
        names = [str(p) for p in error["loc"] if str(p) in PlanRequest.model_fields]
        option = "--" + names[-1].replace("_", "-") if names else "the arguments"
        given = f" {error['input']!r}" if names else ""
        if error["type"] == "literal_error":
            reason = f"choose from {error.get('ctx', {}).get('expected', '')}"
        else:
            reason = str(error["msg"]).removeprefix("Value error, ").replace("Input should be", "must be").rstrip(".")
        parts.append(f"{option}{given}: {reason}")
    return "; ".join(parts)


def cmd_profile(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Write the file to a temporary folder, run the phases, print a table or JSON; progress on stderr."""
    out, err = out or sys.stdout, err or sys.stderr
    nbytes = profiling.size_bytes(args.size)

    def say(text: str) -> None:
        print(text, file=err, flush=True)

    last = [-1]

    def progress(done: int) -> None:
        pct = done * 100 // nbytes
        if pct // 10 != last[0]:
            last[0] = pct // 10
            say(f"writing the {args.size} MB data file: {pct} %")

    with tempfile.TemporaryDirectory(prefix="gpu-classroom-profile-") as folder:
        path = Path(folder) / "numbers.csv"
        expected = profiling.write_file(path, nbytes, progress)
        say(f"timing read, parse and arithmetic, {args.repeat} times each")
        report = profiling.run_profile(path, args.repeat, say)
    if abs(report.checksum - expected) > 1e-6 * abs(expected):
        say(f"error: the parsed numbers sum to {report.checksum}, not {expected}")
        return 1
    print(report.model_dump_json(indent=2) if args.json else profiling.table(report), file=out)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Export one class from the configured database (whoever runs this can read the database anyway)."""
    return asyncio.run(_export(args))


async def _export(args: argparse.Namespace) -> int:
    settings = Settings()
    db = Database(settings.resolved_database_url())
    try:
        klass = await get_class(db, args.code)
        if klass is None:
            print(f"error: no class with code {args.code!r}", file=sys.stderr)
            return 2
        lessons, _ = load_lessons(settings.lesson_dirs(), validate_lesson_block, strict=False)
        if args.what == "report":  # rendered as the dashboard's export renders it
            from app.web.templating import Templates  # noqa: PLC0415 - loaded here only: `check` never reads app.web

            text = Templates().page("classroom/report.md", report=await class_report(db, klass, lessons))
        else:
            text = await export(db, klass, args.what, describe_attempts(lessons))
    except (DBAPIError, OSError) as exc:  # no tables yet (never migrated), or no database to reach
        cause = exc.orig if isinstance(exc, DBAPIError) else exc
        print(f"error: could not read the classes from the database ({type(cause).__name__}: "
              f"{str(cause).splitlines()[0]}). Is it running? Run `gpu-classroom migrate` first if it is new.",
              file=sys.stderr)
        return 2
    finally:
        await db.close()
    if args.output:
        with open(args.output, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def parse_size(text: str) -> int:
    """'64MB', '64 mb' or '64' -> 64 (decimal megabytes, 1 to 512)."""
    raw = text.strip().upper().removesuffix("MB").strip()
    if not raw.isdigit() or not profiling.MIN_MB <= int(raw) <= profiling.MAX_MB:
        raise argparse.ArgumentTypeError(
            f"size must be a whole number of MB from {profiling.MIN_MB} to {profiling.MAX_MB}, e.g. 64MB"
        )
    return int(raw)


def parse_repeat(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 50:
        raise argparse.ArgumentTypeError("repeat must be a whole number from 1 to 50")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpu-classroom", description=__doc__)
    parser.add_argument("--debug", action="store_true", help="on a failure, print the whole traceback")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_serve(sub.add_parser("serve", help="serve the lessons"))
    _add_author(sub.add_parser("author", help="serve while watching the lessons: each save reloads its lesson"))
    scaffold.add_parser(sub.add_parser("new", help="write a new lesson (two steps, a widget, a drill) to edit"))
    check = sub.add_parser("check", help="validate lessons (and self-check drills)")
    check.add_argument("path", nargs="*", help="lesson folders (default: the configured ones)")
    check.add_argument("--seeds", type=int, default=200, help="seeds per drill for the self-check")
    check.set_defaults(func=cmd_check)
    sub.add_parser("migrate", help="bring the database schema up to date").set_defaults(func=cmd_migrate)
    _add_plan(sub.add_parser("plan", help="print the engine's plan for a model on dgx-1"))
    _add_profile(sub.add_parser("profile", help="time reading, parsing and arithmetic on this CPU"))
    _add_export(sub.add_parser("export", help="export a class's data"))
    return parser


def _add_serve(serve: argparse.ArgumentParser) -> None:
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument("--workers", type=int, default=1)
    serve.add_argument("--forwarded-allow-ips", default=os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1"),
                       help="proxies whose X-Forwarded-For/-Proto are believed: the learners' own addresses feed "
                       "the rate limits and HTTPS makes cookies Secure (default 127.0.0.1, or $FORWARDED_ALLOW_IPS)")
    serve.set_defaults(func=cmd_serve)


def _add_author(parser: argparse.ArgumentParser) -> None:
    """`gpu-classroom author [LESSON_DIR ...] [--host H] [--port P]`."""
    parser.description = ("Serve the lessons and watch their folders: each save reloads the changed lesson and "
                          "refreshes its open pages; problems show in a banner above the last good version.")
    parser.add_argument("path", nargs="*", help="more lesson folders to serve and watch (a folder of lessons, or "
                        "one lesson's folder), beside the configured ones")
    parser.add_argument("--host")
    parser.add_argument("--port", type=int)
    parser.set_defaults(func=cmd_author)


def _add_plan(plan: argparse.ArgumentParser) -> None:
    for option in ("--model", "--precision", "--kv-precision", "--sharding", "--optimizer"):
        plan.add_argument(option)
    plan.add_argument("--mode", choices=["serve", "train"])
    for option in ("--gpus", "--batch-size", "--context-tokens", "--prompt-tokens", "--output-tokens"):
        plan.add_argument(option, type=int)
    plan.add_argument("--train-tokens", type=float)
    plan.add_argument("--activation-checkpointing", nargs="?", const="full", default=None,
                      choices=["none", "selective", "full", "true", "false"],
                      help="none, selective or full (alone: full; true/false: full/none)")
    plan.add_argument("--mfu", type=float)
    plan.add_argument("--fp8-speedup", type=float,
                      help="fp8 training: speed against bf16 at the same MFU (default 1.3)")
    plan.set_defaults(func=cmd_plan)


def _add_profile(parser: argparse.ArgumentParser) -> None:
    """`gpu-classroom profile [--size 64MB] [--repeat 5] [--json]`."""
    parser.description = ("Time reading, parsing and arithmetic separately on this computer's CPU, over a "
                          "generated CSV file. " + profiling.SAFETY)
    parser.add_argument("--size", type=parse_size, default=64, metavar="SIZE",
                        help="size of the generated file in MB (default 64MB)")
    parser.add_argument("--repeat", type=parse_repeat, default=5, help="times each phase runs (default 5)")
    parser.add_argument("--json", action="store_true", help="print JSON to paste into the workload sheet")
    parser.set_defaults(func=cmd_profile)


def _add_export(parser: argparse.ArgumentParser) -> None:
    """`gpu-classroom export CODE [--what learners|attempts|json|report] [--output FILE]`: the files the dashboard
    offers, with the questions and mistakes in words (it reads the configured lessons)."""
    parser.add_argument("code", help="the class code, such as K7M3QX")
    parser.add_argument("--what", choices=(*FORMATS, "report"), default="json",
                        help="learners CSV, attempts CSV, all as JSON, or the Markdown class report")
    parser.add_argument("--output", "-o", help="file to write (default: standard output)")
    parser.set_defaults(func=cmd_export)


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command. A failure at start-up (settings, database, data folder) is one line on stderr and exit
    status 2; the traceback only with --debug."""
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
    if isinstance(exc, ValidationError):
        return "bad setting: " + "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
    return str(exc)


if __name__ == "__main__":
    sys.exit(main())
