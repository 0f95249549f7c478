"""The term migration (0008) goes down and up again on SQLite, and leaves the schema the models describe."""

from __future__ import annotations

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine

from app.classroom.db import Base, alembic_config, upgrade
from tests.unit.classroom import term_scenarios as sc
from tests.unit.classroom.classroom_helpers import run

TABLES = ("instructors", "class_flag_marks", "classes", "class_members", "class_step_times")


def test_the_term_migration_goes_down_and_up_and_matches_the_models(url: str) -> None:
    command.downgrade(alembic_config(url), "0007_member_changes")
    upgrade(url)
    assert run(url, sc.instructor_lists)["listed"] == ["Tuesday", "Monday"]
    engine = create_engine(url.replace("+aiosqlite", ""))
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    engine.dispose()
    mine = [d for d in diff if any(f"<{t}>" in repr(d) or f"'{t}'" in repr(d) for t in TABLES)]
    assert mine == []
