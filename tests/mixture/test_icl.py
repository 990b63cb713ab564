"""ICL: BIC plus twice the entropy of the responsibilities (Biernacki, Celeux and Govaert 2000; issue 22)."""

import numpy as np
import pytest
from sklearn.datasets import load_iris

from discrim.distributions import Gaussian
from discrim.mixture import FiniteMixture, select_mixture


def test_icl_is_bic_plus_twice_the_entropy():
    X, _ = load_iris(return_X_y=True)
    model = FiniteMixture(Gaussian("full"), 3, random_state=0).fit(X)
    r = model.predict_proba(X)
    entropy = -np.sum(np.where(r > 0, r * np.log(np.where(r > 0, r, 1.0)), 0.0))
    assert model.icl(X) == pytest.approx(model.bic(X) + 2 * entropy, rel=1e-12)
    assert model.icl(X) >= model.bic(X)
    w = np.arange(1.0, 151.0)
    weighted_entropy = -np.sum(w[:, None] * np.where(r > 0, r * np.log(np.where(r > 0, r, 1.0)), 0.0))
    assert model.icl(X, sample_weight=w) == pytest.approx(model.bic(X, sample_weight=w) + 2 * weighted_entropy,
                                                          rel=1e-12)


def test_separated_components_cost_nothing_overlapping_ones_do():
    rng = np.random.default_rng(0)
    far = np.concatenate([rng.normal(size=(200, 2)), rng.normal(size=(200, 2)) + 50])
    model = FiniteMixture(Gaussian("full"), 2, random_state=0).fit(far)
    assert model.icl(far) == pytest.approx(model.bic(far), abs=1e-6)
    near = rng.normal(size=(400, 2))
    model = FiniteMixture(Gaussian("full"), 2, random_state=0).fit(near)
    assert model.icl(near) > model.bic(near) + 10


def test_select_mixture_by_icl():
    X, _ = load_iris(return_X_y=True)
    result = select_mixture(X, {"VVV": Gaussian("full"), "VVI": Gaussian("diag")}, [1, 2, 3], criterion="icl",
                            random_state=0)
    table = result.table
    for i, estimator in enumerate(result.estimators):
        assert table["icl"].iloc[i] == pytest.approx(estimator.icl(X), rel=1e-10)
    usable = table[(table["error"] == "") & ~table["degenerate"]]
    assert table["icl"].iloc[result.best_index] == usable["icl"].min()
    assert (table["icl"] >= table["bic"] - 1e-9).all()
