"""Sphinx configuration of the discrim documentation site.

Build (from the repository root): ``pip install ".[doc]" && sphinx-build -W -b html docs docs/_build/html``.
"""

import os
import re
import warnings
from pathlib import Path

import discrim

DOCS = Path(__file__).resolve().parent

project = "discrim"
author = "the discrim developers"
copyright = "the discrim developers; BSD-3-Clause"  # noqa: A001  (Sphinx's name)
release = discrim.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "_intersphinx", "Thumbs.db", ".DS_Store", "gallery/*.ipynb", "gallery/*.py"]
root_doc = "index"
default_role = "literal"  # `x` in a docstring is code, not an unresolved cross-reference

# --- API reference --------------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False, "inherited-members": False}
autodoc_typehints = "none"  # the types are in numpydoc's Parameters sections
numpydoc_show_class_members = False  # the class templates list the public methods themselves
numpydoc_class_members_toctree = False
# Types are parsed, not read as reST: "(n_features_in_,)" is text, never a link target.
numpydoc_xref_param_type = True
numpydoc_xref_ignore = "all"
# The docstrings' Attributes sections list fitted attributes that are not class attributes.
numpydoc_attributes_as_param_list = True

# --- intersphinx ----------------------------------------------------------------------------
# The CI machine reaches only package registries, so the inventories are never fetched at build
# time unless asked for. For each project, a local inventory docs/_intersphinx/<key>.inv is used
# when present (all but torch are committed, from Debian's documentation packages: see
# docs/_intersphinx/README; `python docs/_intersphinx/fetch.py` refreshes them on a machine online);
# DISCRIM_DOCS_INTERSPHINX=online reads them from the projects' sites instead; otherwise the
# project is left out and a reference to it renders as plain code (never a warning: the build
# does not run in nitpicky mode). See docs/development.rst.
INTERSPHINX_PROJECTS = {
    "python": "https://docs.python.org/3",
    "numpy": "https://numpy.org/doc/stable",
    "scipy": "https://docs.scipy.org/doc/scipy",
    "sklearn": "https://scikit-learn.org/stable",
    "pandas": "https://pandas.pydata.org/docs",
    "dask": "https://docs.dask.org/en/stable",
    "torch": "https://docs.pytorch.org/docs/stable",
}


def _intersphinx_mapping():
    online = os.environ.get("DISCRIM_DOCS_INTERSPHINX", "").lower() == "online"
    mapping = {}
    for key, url in INTERSPHINX_PROJECTS.items():
        local = DOCS / "_intersphinx" / f"{key}.inv"
        if local.is_file():
            mapping[key] = (url, str(local))
        elif online:
            mapping[key] = (url, None)
    return mapping


intersphinx_mapping = _intersphinx_mapping()
intersphinx_timeout = 10

# numpydoc links the common type words to Python's and NumPy's glossaries; without those
# inventories the links would be unresolved :term: and :ref: targets (warnings), so the words
# then stay plain object references, which render as code when they do not resolve.
if not {"python", "numpy"} <= set(intersphinx_mapping):
    from numpydoc.xref import DEFAULT_LINKS

    numpydoc_xref_aliases = {word: word for word in DEFAULT_LINKS}

# --- sphinx-gallery -------------------------------------------------------------------------
# Every example runs during the build, on the CPU, in a few seconds (the CI has 2 cores).
os.environ.setdefault("MPLBACKEND", "Agg")
# With -D plot_gallery=0 sphinx-gallery does not run the examples but still resolves the names
# they use (its backreferences); plot_07's IterativeImputer resolves only after this import.
from sklearn.experimental import enable_iterative_imputer  # noqa: E402, F401
sphinx_gallery_conf = {
    "examples_dirs": str(DOCS.parent / "examples"),
    "gallery_dirs": "gallery",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py|/_|coin_tosses\.py",  # coin_tosses.py: a plain script
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "show_memory": False,
    "min_reported_time": 0,
    "reference_url": {"discrim": None},
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "capture_repr": ("_repr_html_", "__repr__"),
    "first_notebook_cell": None,
    "plot_gallery": "True",  # the default; -D plot_gallery=0 on the command line overrides it
}
# matplotlib's Agg backend cannot show figures: examples call plt.show() for readers who run them.
warnings.filterwarnings("ignore", message="FigureCanvasAgg is non-interactive")
warnings.filterwarnings("ignore", category=DeprecationWarning)

# --- HTML -----------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"discrim {release}"
html_static_path = []  # no static files of our own (an empty _static/ does not survive git)
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"changelog": [], "comparison": []}
html_show_sourcelink = False

mathjax3_config = {
    "tex": {
        "macros": {
            "R": r"\mathbb{R}",
            "bx": r"\mathbf{x}",
            "bmu": r"\boldsymbol{\mu}",
            "bSigma": r"\boldsymbol{\Sigma}",
        }
    }
}

_SHAPE = re.compile(r"shape \(([^)]*)\)")
_TRAILING_UNDERSCORE = re.compile(r"([A-Za-z0-9])_(?=[,) +*])")


def _escape_shapes(app, what, name, obj, options, lines):
    """Escape fitted-attribute names in "of shape (n_features_in_,)": reST reads a word ending in
    an underscore as a link target."""
    for i, line in enumerate(lines):
        lines[i] = _SHAPE.sub(lambda m: "shape (" + _TRAILING_UNDERSCORE.sub(r"\1\\_", m.group(1)) + ")", line)


def setup(app):
    app.connect("autodoc-process-docstring", _escape_shapes, priority=900)  # after numpydoc
