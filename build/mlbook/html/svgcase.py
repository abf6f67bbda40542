"""Mixed-case SVG names restored in XHTML: an HTML parser lower-cases ``viewBox`` and ``foreignObject``.

lxml's HTML parser (used to read the built pages, and by ebooklib) folds every tag and attribute name to lower
case; an XHTML reader then ignores ``viewbox``. The names are those of the HTML standard's SVG adjustment tables.
"""

from __future__ import annotations

import re

ATTRIBUTES = (
    "attributeName attributeType baseFrequency baseProfile calcMode clipPathUnits diffuseConstant edgeMode "
    "filterUnits glyphRef gradientTransform gradientUnits kernelMatrix kernelUnitLength keyPoints keySplines "
    "keyTimes lengthAdjust limitingConeAngle markerHeight markerUnits markerWidth maskContentUnits maskUnits "
    "numOctaves pathLength patternContentUnits patternTransform patternUnits pointsAtX pointsAtY pointsAtZ "
    "preserveAlpha preserveAspectRatio primitiveUnits refX refY repeatCount repeatDur requiredExtensions "
    "requiredFeatures specularConstant specularExponent spreadMethod startOffset stdDeviation stitchTiles "
    "surfaceScale systemLanguage tableValues targetX targetY textLength viewBox viewTarget xChannelSelector "
    "yChannelSelector zoomAndPan"
).split()
TAGS = (
    "altGlyph altGlyphDef altGlyphItem animateColor animateMotion animateTransform clipPath feBlend "
    "feColorMatrix feComponentTransfer feComposite feConvolveMatrix feDiffuseLighting feDisplacementMap "
    "feDistantLight feDropShadow feFlood feFuncA feFuncB feFuncG feFuncR feGaussianBlur feImage feMerge "
    "feMergeNode feMorphology feOffset fePointLight feSpecularLighting feSpotLight feTile feTurbulence "
    "foreignObject glyphRef linearGradient radialGradient textPath"
).split()
_ATTR = {name.lower(): name for name in ATTRIBUTES}
_TAG = {name.lower(): name for name in TAGS}
ATTR_RE = re.compile(r"(\s)(" + "|".join(sorted(_ATTR, key=len, reverse=True)) + r')(\s*=\s*["\'])')
START_TAG = re.compile(r"<[A-Za-z][^>]*>")
TAG_RE = re.compile(r"(</?)(" + "|".join(sorted(_TAG, key=len, reverse=True)) + r")(?=[\s/>])")


def restore(markup: str) -> str:
    """The markup with SVG's mixed-case tag and attribute names back (``viewbox`` -> ``viewBox``).

    Only names from the tables change; text and other markup stay byte for byte.
    """
    markup = TAG_RE.sub(lambda m: m.group(1) + _TAG[m.group(2)], markup)
    return START_TAG.sub(lambda tag: ATTR_RE.sub(_attribute, tag.group(0)), markup)


def _attribute(match: re.Match) -> str:
    return match.group(1) + _ATTR[match.group(2)] + match.group(3)
