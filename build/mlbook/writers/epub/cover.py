"""The EPUB cover image: a PNG drawn from the title with Pillow and an installed font (no files fetched)."""

from __future__ import annotations

import io
import shutil
import subprocess
import textwrap

from PIL import Image, ImageDraw, ImageFont

SIZE = (1600, 2400)  # pixels; 2:3, the shape e-reader stores expect
BACKGROUND = (40, 53, 147)


def _font(pattern: str, size: int) -> ImageFont.ImageFont:
    """The font fontconfig matches for pattern, else Pillow's built-in one."""
    if shutil.which("fc-match"):
        path = subprocess.run(["fc-match", "-f", "%{file}", pattern], capture_output=True, text=True).stdout
        if path:
            try:
                return ImageFont.truetype(path, size)
            except OSError:
                pass
    return ImageFont.load_default(size)


def png(title: str, subtitle: str, author: str, edition: str = "") -> bytes:
    """A deterministic PNG of SIZE pixels with the title, subtitle, author and edition in white on indigo."""
    img = Image.new("RGB", SIZE, BACKGROUND)
    draw = ImageDraw.Draw(img)
    y = 620
    for line in textwrap.wrap(title, 16):
        draw.text((140, y), line, font=_font("Noto Sans:bold", 150), fill="white")
        y += 190
    y += 80
    for line in textwrap.wrap(subtitle, 30):
        draw.text((140, y), line, font=_font("Noto Sans", 72), fill=(220, 225, 255))
        y += 100
    draw.text((140, SIZE[1] - 260), author, font=_font("Noto Sans", 56), fill="white")
    if edition:
        draw.text((140, SIZE[1] - 170), f"Edition: {edition}", font=_font("Noto Sans", 44), fill=(220, 225, 255))
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False)
    return buf.getvalue()
