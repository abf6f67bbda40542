"""Warnings are errors in every Python process a sandboxed block starts, except the published few.

The sandbox puts this folder on PYTHONPATH, so Python imports this module at start-up
(https://docs.python.org/3/library/site.html); the list is bookblocks.substitutions.ALLOWED_WARNINGS.
"""

import re
import warnings

from bookblocks.substitutions import ALLOWED_WARNINGS

warnings.simplefilter("error")
for _message, _why in ALLOWED_WARNINGS:
    warnings.filterwarnings("default", message=".*" + re.escape(_message))
