"""Sphinx configuration of the salsox documentation (Markdown pages through MyST).

Build with warnings as errors, as CI does (tests/test_docs.py)::

    pip install ".[docs]"
    sphinx-build -W --keep-going -b html docs docs/_build/html
"""

from __future__ import annotations

import salsox

project = "salsox"
author = "salsox developers"
copyright = "salsox developers"
release = salsox.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# MyST: $...$ and $$...$$ maths, and the ```{directive} syntax.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

# API reference from the numpy-style docstrings.
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "show-inheritance": False}
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

html_theme = "alabaster"
html_title = f"salsox {release}"
html_static_path: list = []

# Types in docstrings become cross-references; "labels" (an array of cluster labels) would
# otherwise resolve ambiguously to the ``labels`` attributes of several classes.
napoleon_preprocess_types = True
napoleon_type_aliases = {"labels": "array of labels"}
