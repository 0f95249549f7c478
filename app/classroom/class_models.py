"""Tables of class instances: a class, its members and their time on each step."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.classroom.db import Base
from app.classroom.models import utcnow


class Instructor(Base):
    """Whoever created classes in one browser: their key (stored only as a hash) opens all their classes."""

    __tablename__ = "instructors"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True, doc="SHA-256 of the instructor's key, hex")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Classroom(Base):
    """A class instance of one lesson, run by whoever holds its key (stored only as a hash) or its owner's key."""

    __tablename__ = "classes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    code: Mapped[str] = mapped_column(String(12), unique=True, doc="What the room types to join")
    title: Mapped[str] = mapped_column(String(120))
    lesson: Mapped[str] = mapped_column(String(100))
    key_hash: Mapped[str] = mapped_column(String(64), doc="SHA-256 of the instructor's key, hex")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    ends_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    closed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    pace_mode: Mapped[str] = mapped_column(String(8), default="free", doc="free | bring | hold")
    pace_step: Mapped[int | None] = mapped_column(Integer, nullable=True)
    pace_move: Mapped[bool] = mapped_column(Boolean, default=False, doc="bring: move learners, not just tell them")
    pace_hold: Mapped[bool] = mapped_column(Boolean, default=False, doc="bring: also hold at the step")
    bring_version: Mapped[int] = mapped_column(
        Integer, default=0, doc="The pace version the current bring was given at: a member reached it or not")
    pace_version: Mapped[int] = mapped_column(
        Integer, default=0, doc="Bumped on every change a learner's banner shows: pacing, message, close, roster")
    idle_minutes: Mapped[int] = mapped_column(Integer, default=5)
    revealed: Mapped[list[Any]] = mapped_column(JSON, default=list, doc="Drill keys shown on the projector")
    outline: Mapped[dict[str, Any]] = mapped_column(
        JSON, default=dict, doc="The lesson's title, steps and drills when the class was created")
    owner_id: Mapped[int | None] = mapped_column(
        ForeignKey("instructors.id", ondelete="SET NULL"), nullable=True, index=True,
        doc="The instructor whose list holds the class")
    message: Mapped[str] = mapped_column(String(200), default="", doc="A message to the room, until cleared")
    message_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    timer_key: Mapped[str | None] = mapped_column(String(80), nullable=True, doc="The timed drill, 'step:drill'")
    timer_ends_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    answers_shown: Mapped[dict[str, Any] | None] = mapped_column(
        JSON, nullable=True, doc="Per revealed drill key, the seed of the question whose answer the projector shows")


class Member(Base):
    """A learner's cookie identity attached to a class under a display name."""

    __tablename__ = "class_members"
    __table_args__ = (
        UniqueConstraint("class_id", "learner_id", name="uq_member_learner"),
        UniqueConstraint("class_id", "name_key", name="uq_member_name"),
        Index("ix_class_members_class_changed", "class_id", "last_active"),  # the dashboard's poll: who changed
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    class_id: Mapped[int] = mapped_column(ForeignKey("classes.id", ondelete="CASCADE"), index=True)
    learner_id: Mapped[str] = mapped_column(ForeignKey("learners.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(40))
    name_key: Mapped[str] = mapped_column(String(40), doc="The name case-folded, for uniqueness")
    joined_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    step: Mapped[int | None] = mapped_column(Integer, nullable=True, doc="The step they are on")
    arrived_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    counted_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    last_active: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    moved_version: Mapped[int] = mapped_column(
        Integer, default=0, doc="The last bring they reached (its bring_version): their banner stops asking")
    resume_salt: Mapped[str] = mapped_column(String(16), default="", doc="Changes to replace their resume code")
    seat: Mapped[int] = mapped_column(Integer, default=0, doc="Join order in the class, from 0: neighbours' questions")


class StepTime(Base):
    """Seconds a member spent on one step of the class's lesson while the class was open."""

    __tablename__ = "class_step_times"

    member_id: Mapped[int] = mapped_column(ForeignKey("class_members.id", ondelete="CASCADE"), primary_key=True)
    step: Mapped[int] = mapped_column(Integer, primary_key=True)
    seconds: Mapped[float] = mapped_column(Float, default=0.0)
    visits: Mapped[int] = mapped_column(Integer, default=0)
    passed: Mapped[bool] = mapped_column(Boolean, default=False, doc="The class moved them past it: no hole")


class FlagMark(Base):
    """An instructor marked one flag of a learner helped or dismissed: it stays hidden until new evidence."""

    __tablename__ = "class_flag_marks"

    member_id: Mapped[int] = mapped_column(ForeignKey("class_members.id", ondelete="CASCADE"), primary_key=True)
    flag: Mapped[str] = mapped_column(String(100), primary_key=True, doc="'long:12', 'wrong:7:drill', 'idle', …")
    outcome: Mapped[str] = mapped_column(String(10), doc="helped | dismissed")
    marked_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
