"""Every knob of GPU Classroom, each with a default that runs on a laptop."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from pydantic import AliasChoices, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PLACEHOLDER_SECRETS = {"", "changeme", "change-me", "secret", "dev"}
PACKAGE = Path(__file__).resolve().parent


def builtin_lessons() -> Path:
    """The lessons that come with GPU Classroom, found from the code, never from the current folder: inside the
    installed package (a wheel carries them as app/builtin_lessons, see setup.py), else the checkout's lessons/
    beside app/ (an editable install, the Docker image, a clone)."""
    packaged = PACKAGE / "builtin_lessons"
    return packaged if packaged.is_dir() else PACKAGE.parent / "lessons"


class Settings(BaseSettings):
    """Read from the environment with the prefix GPU_CLASSROOM_ (DATABASE_URL and ADMIN_TOKEN also bare)."""

    model_config = SettingsConfigDict(env_prefix="GPU_CLASSROOM_", extra="ignore", populate_by_name=True)

    host: str = Field(default="127.0.0.1", description="Address `gpu-classroom serve` listens on.")
    port: int = Field(default=8000, ge=1, le=65535, description="Port `gpu-classroom serve` listens on.")
    data_dir: Path = Field(default=Path("data"), description="Folder for the SQLite file and the generated secret key.")
    database_url: str = Field(
        default="",
        validation_alias=AliasChoices("DATABASE_URL", "GPU_CLASSROOM_DATABASE_URL"),
        description="SQLAlchemy async URL. Empty: SQLite at data_dir/classroom.db. "
        "PostgreSQL: postgresql+asyncpg://user@host/db.",
    )
    secret_key: str = Field(
        default="",
        description="Signs learner cookies and CSRF tokens. Empty: generated once and kept in data_dir/secret_key.",
    )
    lessons_dir: Path = Field(
        default_factory=builtin_lessons,
        description="Folder of the built-in lessons, one folder per lesson. Default: the lessons installed with "
        "GPU Classroom, found wherever the command runs. Set it only to serve other lessons instead of those.",
    )
    lessons_dirs: str = Field(
        default="",
        description="More lesson folders served beside lessons_dir, separated by os.pathsep (: on Linux and macOS); "
        "a relative path is from the folder the command runs in.",
    )
    environment: str = Field(default="development", description="`production` refuses a placeholder secret key.")
    secure_cookies: bool = Field(
        default=False,
        description="Mark cookies Secure even on plain HTTP (a TLS proxy that sends no X-Forwarded-Proto); over "
        "HTTPS, or with an https:// public_url, they always are.",
    )
    admin_token: str = Field(
        default="",
        validation_alias=AliasChoices("ADMIN_TOKEN", "GPU_CLASSROOM_ADMIN_TOKEN"),
        description="When set, creating a class needs this token.",
    )
    public_url: str = Field(
        default="",
        description="The address learners use, such as https://gpu.example.org: join links, QR codes and the Origin "
        "check use it; an https:// address also marks every cookie Secure and sends HSTS, whatever the proxy says. "
        "Empty: taken from each request's Host header (for the Origin check, only a Host that names this machine).",
    )
    migrate_on_start: bool = Field(default=True, description="Run Alembic migrations when the app starts.")

    @model_validator(mode="after")
    def _public_url_is_an_origin(self) -> Settings:
        self.public_url = self.public_url.strip().rstrip("/")
        if self.public_url and not self.public_url.startswith(("http://", "https://")):
            raise ValueError("GPU_CLASSROOM_PUBLIC_URL must start with https:// (or http://), such as "
                             "https://gpu.example.org")
        return self

    @model_validator(mode="after")
    def _no_placeholder_secret_in_production(self) -> Settings:
        if self.environment == "production" and self.secret_key.strip().lower() in PLACEHOLDER_SECRETS:
            raise ValueError("GPU_CLASSROOM_SECRET_KEY must be set to a real secret in production")
        return self

    @property
    def https_only(self) -> bool:
        """PUBLIC_URL is an https:// address: the site is served only over TLS (every cookie Secure, HSTS sent)."""
        return self.public_url.startswith("https://")

    @property
    def cookies_secure(self) -> bool:
        """Every cookie is marked Secure, whatever scheme a request arrives with."""
        return self.secure_cookies or self.https_only

    def lesson_dirs(self) -> list[Path]:
        """lessons_dir, then each folder of lessons_dirs (a folder named twice counts once)."""
        dirs = [self.lessons_dir, *(Path(p.strip()).expanduser() for p in self.lessons_dirs.split(os.pathsep)
                                    if p.strip())]
        return [d for i, d in enumerate(dirs) if d.resolve() not in {e.resolve() for e in dirs[:i]}]

    def missing_lesson_dirs(self) -> list[str]:
        """A sentence for each configured lesson folder that is not a folder, naming its setting and its path."""
        found = []
        if not self.lessons_dir.is_dir():
            found.append(f"GPU_CLASSROOM_LESSONS_DIR is {self.lessons_dir}, which is not a folder "
                         f"({self.lessons_dir.resolve()}); leave it unset for the built-in lessons")
        for p in self.lessons_dirs.split(os.pathsep):
            if p.strip() and not Path(p.strip()).expanduser().is_dir():
                path = Path(p.strip()).expanduser()
                found.append(f"GPU_CLASSROOM_LESSONS_DIRS names {p.strip()}, which is not a folder "
                             f"(looked for {path.resolve()})")
        return found

    def resolved_database_url(self) -> str:
        """The database URL, SQLite under data_dir when none is set."""
        if self.database_url:
            url = self.database_url
            if url.startswith("postgresql://") or url.startswith("postgres://"):
                url = "postgresql+asyncpg://" + url.split("://", 1)[1]
            return url
        return f"sqlite+aiosqlite:///{(self.data_dir / 'classroom.db').as_posix()}"

    def resolved_secret_key(self) -> str:
        """The signing key: the configured one, else one generated once and kept in data_dir."""
        if self.secret_key:
            return self.secret_key
        path = self.data_dir / "secret_key"
        if path.exists():
            return path.read_text().strip()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        key = secrets.token_urlsafe(32)
        path.write_text(key)
        path.chmod(0o600)
        return key
