"""QR codes for the join address, as inline SVG (the projector and the 'class created' page show them)."""

from __future__ import annotations

import segno


def qr_svg(text: str, title: str) -> str:
    """A QR code as inline SVG (always dark on white so phones can read it in dark mode too)."""
    svg: str = segno.make(text, error="m").svg_inline(scale=4, dark="#000", light="#fff", svgclass="qr",
                                                      lineclass=None, title=title, omitsize=True)
    return svg.replace("<svg ", '<svg role="img" ', 1)
