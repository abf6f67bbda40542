"""The site's own CSS colours meet WCAG AA contrast (4.5:1 for normal text)."""

import re

from conftest import ROOT

CSS = (ROOT / "book" / "assets" / "site.css").read_text()


def luminance(hex_colour):
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a, b):
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def rule(selector, prop):
    block = re.search(re.escape(selector) + r"\s*\{([^}]*)\}", CSS).group(1)
    return re.search(r"(?<![\w-])" + prop + r"\s*:\s*(#[0-9a-fA-F]{6})", block).group(1)


def test_contrast_formula_on_known_pairs():
    assert round(contrast("#000000", "#ffffff"), 1) == 21.0
    assert round(contrast("#777777", "#ffffff"), 2) == 4.48


def test_banner_text_and_links_have_aa_contrast():
    background = rule(".md-banner", "background-color")
    assert contrast(rule(".md-banner", "color"), background) >= 4.5
    assert contrast(rule(".md-download-links a", "color"), background) >= 4.5
