"""The user guide's Python examples run as written, in order, and warn of nothing.

A warning in an example is a reader's first sight of a fit that means nothing (the families
page's mixed-type example fitted four distinct rows repeated 25 times, and EM warned that a
component collapsed). Pages whose examples need a Dask cluster or take long (model choice over
mclust's 14 models, the bootstrap test) are left to the documentation build and the gallery.
"""

import inspect
import re
import textwrap
from pathlib import Path

import pytest

from discrim.discriminant import (
    KnownDensityClassifier, LinearDiscriminant, MixtureDiscriminant, QuadraticDiscriminant,
)
from discrim.distributions import Gaussian
from discrim.mixture import FiniteMixture
from discrim.model_selection import PrototypeClassifierCV

_GUIDE = Path(__file__).resolve().parents[1] / "docs" / "user_guide"


def _python_blocks(text):
    """The code of the page's ``.. code-block:: python`` directives, in order, unindented."""
    blocks = []
    for match in re.finditer(r"\.\. code-block:: python\n\n((?: +.*\n|\n)+)", text):
        blocks.append(textwrap.dedent(match.group(1)))
    return blocks


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("page", ["discriminant", "families", "incomplete", "mixture", "prototype"])
def test_the_page_examples_run_without_warnings(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = _python_blocks((_GUIDE / f"{page}.rst").read_text(encoding="utf-8"))
    assert blocks, page
    namespace = {"__name__": f"docs_{page}"}
    for code in blocks:
        exec(compile(code, f"docs/user_guide/{page}.rst", "exec"), namespace)  # noqa: S102 (our own pages)


# (page, what the page says, the estimator, its parameter, the default that says)
_STATED_DEFAULTS = [
    ("discriminant", '``priors="equal"`` (the default of every discriminant', KnownDensityClassifier, "priors", "equal"),
    ("discriminant", '``priors="equal"`` (the default of every discriminant', LinearDiscriminant, "priors", "equal"),
    ("discriminant", '``priors="equal"`` (the default of every discriminant', QuadraticDiscriminant, "priors", "equal"),
    ("discriminant", '``priors="equal"`` (the default of every discriminant', MixtureDiscriminant, "priors", "equal"),
    ("incomplete", "``em_max_iter`` iterations (1000 by default)", LinearDiscriminant, "em_max_iter", 1000),
    ("incomplete", "``em_max_iter`` iterations (1000 by default)", QuadraticDiscriminant, "em_max_iter", 1000),
    ("mixture", '``"kmeans++"`` (the default)', FiniteMixture, "init_params", "kmeans++"),
    ("mixture", '(``m_step="exact"``)', Gaussian, "m_step", "exact"),
    ("model_choice", "``tol=1e-3``", FiniteMixture, "tol", 1e-3),
    ("model_choice", "at the default 100", FiniteMixture, "max_iter", 100),
    ("prototype", "with the default of 30", PrototypeClassifierCV, "search_max_iter", 30),
]


@pytest.mark.parametrize("page, phrase, estimator, name, value", _STATED_DEFAULTS)
def test_the_defaults_the_guide_states_are_the_code_s(page, phrase, estimator, name, value):
    # the discriminant page said KnownDensityClassifier's priors default to None, as before the
    # second round of tours made it "equal" like the other discriminants'
    text = " ".join((_GUIDE / f"{page}.rst").read_text(encoding="utf-8").split())
    assert phrase in text, (page, phrase)
    assert inspect.signature(estimator).parameters[name].default == value


_FAMILY_WORDS = {"Gaussian": "Gaussian", "StudentT": "Student-t", "Gamma": "gamma", "Exponential": "exponential",
                 "LogNormal": "log-normal", "Poisson": "Poisson", "Binomial": "binomial", "Bernoulli": "Bernoulli",
                 "Categorical": "categorical"}


@pytest.mark.parametrize("page", ["docs/index.rst", "README.md"])
def test_the_summaries_name_every_family(page):
    # the site's front page listed eight of the nine families (no Bernoulli), the README's first
    # paragraph five
    from discrim.distributions import FAMILY_CLASSES

    text = " ".join((_GUIDE.parents[1] / page).read_text(encoding="utf-8").split()[:400])
    assert sorted(_FAMILY_WORDS) == sorted(cls.__name__ for cls in FAMILY_CLASSES)
    missing = [word for word in _FAMILY_WORDS.values() if word not in text]
    assert missing == []
