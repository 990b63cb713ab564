"""MixtureDiscriminant with several candidate families: mclust's MclustDA choice per class, or one family (issue 22)."""

import pytest
from sklearn.datasets import load_iris

from discrim.discriminant import MixtureDiscriminant
from discrim.distributions import Gaussian

MODELS = {"VVV": Gaussian("full"), "VVI": Gaussian("diag"), "VII": Gaussian("spherical")}


def test_each_class_chooses_its_family_and_count_by_bic():
    X, y = load_iris(return_X_y=True)
    model = MixtureDiscriminant(MODELS, n_components=[1, 2], random_state=0).fit(X, y)
    for k, selection in enumerate(model.selections_):
        best = selection.table.iloc[selection.best_index]
        assert model.mixtures_[k].n_components == best["n_components"]
        assert repr(model.mixtures_[k].family) == repr(MODELS[best["family"]])
        usable = selection.table[(selection.table["error"] == "") & ~selection.table["degenerate"]]
        assert best["bic"] == usable["bic"].min()


def test_one_family_for_all_classes_minimises_the_summed_bic():
    X, y = load_iris(return_X_y=True)
    model = MixtureDiscriminant(MODELS, n_components=[1, 2], common_family=True, random_state=0).fit(X, y)
    families = {repr(m.family) for m in model.mixtures_}
    assert len(families) == 1
    totals = {label: sum(s.table[(s.table["family"] == label) & (s.table["error"] == "")
                                 & ~s.table["degenerate"]]["bic"].min() for s in model.selections_)
              for label in MODELS}
    assert families == {repr(MODELS[min(totals, key=totals.get)])}


def test_a_joint_fit_needs_one_family():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="needs one family"):
        MixtureDiscriminant(MODELS, n_components=1, joint=True).fit(X, y)
    shared = MixtureDiscriminant(MODELS, n_components=1, joint=True, common_family=True, random_state=0).fit(X, y)
    assert len({repr(m.family) for m in shared.mixtures_}) == 1
