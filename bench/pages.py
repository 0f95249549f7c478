"""Print the gzip size of each step page and of everything it loads (CSS, JS, icons).

Run: .venv/bin/python bench/pages.py [--lesson SLUG]
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
import tempfile
from pathlib import Path

from fastapi.testclient import TestClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.main import create_app  # noqa: E402
from app.settings import Settings  # noqa: E402

ASSET = re.compile(r'(?:src|href)="(/static/[^"]+)"')


def gz(data: bytes) -> int:
    """Bytes on the wire with gzip (level 9 is close to what GZipMiddleware sends)."""
    return len(gzip.compress(data, 9))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lesson", default=None)
    args = parser.parse_args()
    settings = Settings(data_dir=Path(tempfile.mkdtemp()), secret_key="bench")
    with TestClient(create_app(settings)) as client:
        lessons = client.app.state.lessons  # type: ignore[attr-defined]
        assets: dict[str, int] = {}
        print(f"{'page':58} {'html KB':>8} {'+assets KB':>10}")
        for lesson in lessons:
            if args.lesson and lesson.slug != args.lesson:
                continue
            for step in lesson.steps:
                url = f"/lessons/{lesson.slug}/{step.number}"
                html = client.get(url).content
                total = gz(html)
                for asset in ASSET.findall(html.decode()):
                    if asset not in assets:
                        assets[asset] = gz(client.get(asset).content)
                    total += assets[asset]
                print(f"{url:58} {gz(html) / 1024:8.1f} {total / 1024:10.1f}")
        print("assets (gzip, cached after the first page):")
        for asset, size in sorted(assets.items()):
            print(f"  {asset.split('?')[0]:40} {size / 1024:6.1f} KB")


if __name__ == "__main__":
    main()
