"""The dgx-1 panel's colours: each part of a plan and the overflow mark look different, in light and dark."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from app.engine.placement import COMPONENTS

ROOT = Path(__file__).resolve().parents[2]
CSS = ROOT / "static" / "app.css"
PANEL = ROOT / "templates" / "panel.html"
THEMES = ("light", "dark")

# CIE76 colour difference between two marks. About 2.3 is just noticeable; the panel's bars are thin (14 px) and
# sit side by side, so we ask for far more: 25, a little under the closest pair of parts already drawn and read
# apart without trouble (weights and KV cache in light, about 29). The old overflow red scored 11 (light) and 0
# (dark) against gradients.
MIN_DELTA_E = 25.0
AA_TEXT = 4.5  # WCAG 2.1 SC 1.4.3, normal text
AA_GRAPHICS = 3.0  # WCAG 2.1 SC 1.4.11, the parts of a graphic needed to understand it


def stylesheet() -> str:
    return re.sub(r"/\*.*?\*/", "", CSS.read_text(), flags=re.DOTALL)


def theme_colours(theme: str) -> dict[str, str]:
    """The custom properties of a theme: light's :root, with dark's :root over it."""
    css = stylesheet()
    light = re.search(r"^:root\s*\{([^}]*)\}", css, re.MULTILINE)
    assert light, "no top-level :root block"
    blocks = [light[1]]
    if theme == "dark":
        dark = re.search(r"@media \(prefers-color-scheme: dark\)\s*\{\s*:root\s*\{([^}]*)\}", css)
        assert dark, "no :root block for the dark theme"
        blocks.append(dark[1])
    colours: dict[str, str] = {}
    for block in blocks:
        colours.update(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{6})\b", block))
    return colours


def rule(selector: str) -> str:
    """The declarations of the top-level rule whose selector is exactly `selector`."""
    found = re.search(r"(?:^|\})\s*" + re.escape(selector) + r"\s*\{([^}]*)\}", stylesheet(), re.MULTILINE)
    assert found, f"no rule for {selector}"
    return found[1]


def fill_property(selector: str) -> str:
    """The custom property a rule fills with (the fallback colour when the fill is a pattern)."""
    fill = re.search(r"fill:\s*(?:url\(#[\w-]+\)\s*)?var\(--([\w-]+)\)", rule(selector))
    assert fill, f"{selector} does not fill with a colour of the theme"
    return fill[1]


def panel_marks() -> dict[str, str]:
    """Each mark a GPU bar can hold, named by the custom property that colours it."""
    marks = {part: fill_property(f".seg-{part}") for part in COMPONENTS}
    marks["overflow"] = fill_property(".seg-overflow")
    return marks


def lab(colour: str) -> tuple[float, float, float]:
    """sRGB hex to CIE L*a*b* (D65)."""
    rgb = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb)
    xyz = (
        (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047,
        0.2126 * r + 0.7152 * g + 0.0722 * b,
        (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883,
    )
    fx, fy, fz = (t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116 for t in xyz)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def delta_e(one: str, other: str) -> float:
    return float(sum((p - q) ** 2 for p, q in zip(lab(one), lab(other), strict=True)) ** 0.5)


def contrast(one: str, other: str) -> float:
    """WCAG 2.1 contrast ratio."""

    def luminance(colour: str) -> float:
        rgb = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    high, low = sorted((luminance(one), luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_the_colour_maths_matches_known_values() -> None:
    assert lab("#ffffff") == pytest.approx((100.0, 0.0, 0.0), abs=0.05)  # white is L* 100, neutral
    assert delta_e("#000000", "#ffffff") == pytest.approx(100.0, abs=0.05)
    # WCAG's formula at its extremes: float rounding only
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0, rel=1e-9)


@pytest.mark.parametrize("theme", THEMES)
def test_every_part_of_a_plan_and_the_overflow_have_colours_of_their_own(theme: str) -> None:
    colours = theme_colours(theme)
    marks = {mark: colours[prop] for mark, prop in panel_marks().items()}
    close = [
        (a, b, round(delta_e(ca, cb), 1))
        for (a, ca), (b, cb) in itertools.combinations(marks.items(), 2)
        if delta_e(ca, cb) < MIN_DELTA_E
    ]
    assert close == [], f"{theme}: these marks look alike (CIE76 below {MIN_DELTA_E})"


def test_overflow_is_hatched_and_outlined_in_its_own_colour_and_the_legend_shows_it() -> None:
    overflow = rule(".seg-overflow")
    pattern = re.search(r"fill:\s*url\(#([\w-]+)\)", overflow)
    assert pattern, "the overflow mark is a flat fill, not a hatch"
    panel = PANEL.read_text()
    assert f'<pattern id="{pattern[1]}"' in panel
    colour = fill_property(".seg-overflow")
    assert fill_property(".overflow-hatch-ink") == colour, "the stripes are not the overflow colour"
    assert f"stroke: var(--{colour})" in overflow, "the outline is not the overflow colour"
    legend = panel[panel.index('class="legend"') :]
    assert 'class="seg-overflow"' in legend, "the legend does not show the overflow mark"


@pytest.mark.parametrize("theme", THEMES)
def test_panel_text_reads_at_wcag_aa_and_the_hatch_stands_out(theme: str) -> None:
    c = theme_colours(theme)
    text_on = {  # text colour, background: the panel's card, and the 'does not fit' box
        "fg on card": (c["fg"], c["card"]),
        "muted on card": (c["muted"], c["card"]),
        "danger on card": (c["danger"], c["card"]),
        "fg on danger-bg": (c["fg"], c["danger-bg"]),
    }
    weak = {name: round(contrast(*pair), 2) for name, pair in text_on.items() if contrast(*pair) < AA_TEXT}
    assert weak == {}, theme
    ground = fill_property(".overflow-hatch-ground")
    assert contrast(c[fill_property(".seg-overflow")], c[ground]) >= AA_GRAPHICS, theme
