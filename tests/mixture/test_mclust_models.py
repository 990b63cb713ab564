"""gaussian_models and MixtureSelection's mclust tables: the wide criterion table, the top models."""

import numpy as np
import pandas as pd
import pytest

from discrim.distributions import Gaussian
from discrim.mixture import MixtureSelection, gaussian_models, select_mixture

MCLUST_ORDER = ["EII", "VII", "EEI", "VEI", "EVI", "VVI", "EEE", "VEE", "EVE", "VVE", "EEV", "VEV", "EVV", "VVV"]


def test_gaussian_models_are_mclusts_fourteen_in_order():
    models = gaussian_models()
    assert list(models) == MCLUST_ORDER
    for name, family in models.items():
        assert isinstance(family, Gaussian)
        assert family.covariance_type == name and family.model_name == name
    assert list(gaussian_models(["VVV", "EII"])) == ["VVV", "EII"]
    assert list(gaussian_models("VEV")) == ["VEV"]
    assert gaussian_models("EEE", reg_covar=1e-3)["EEE"].reg_covar == 1e-3


@pytest.mark.parametrize("names", [["full"], ["VEV", "VEV"], [], ["vev"], "XYZ"])
def test_gaussian_models_refuses_unknown_or_repeated_names(names):
    with pytest.raises(ValueError, match="mclust model names") as info:
        gaussian_models(names)
    assert "\n" not in str(info.value)


@pytest.fixture(scope="module")
def selection():
    rng = np.random.default_rng(7)
    X = np.vstack([rng.normal([0, 0], [1.0, 0.4], (70, 2)), rng.normal([4, 3], [0.5, 1.2], (70, 2))])
    return select_mixture(X, gaussian_models(["EII", "VII", "EEE", "VVV"]), range(1, 5), random_state=0)


@pytest.mark.parametrize("criterion", ["bic", "aic", "icl"])
@pytest.mark.parametrize("mclust_sign", [False, True])
def test_wide_table_holds_the_long_tables_values(selection, criterion, mclust_sign):
    wide = selection.criterion_table(criterion, mclust_sign=mclust_sign, include_degenerate=True)
    table = selection.table
    assert list(wide.columns) == ["EII", "VII", "EEE", "VVV"]
    assert list(wide.index) == [1, 2, 3, 4]
    sign = -1.0 if mclust_sign else 1.0
    for row in table.itertuples(index=False):
        assert wide.loc[row.n_components, row.family] == sign * getattr(row, criterion)
    assert wide.size == len(table)


def test_wide_table_defaults_to_the_selections_criterion(selection):
    pd.testing.assert_frame_equal(selection.criterion_table(), selection.criterion_table("bic"))


def _crafted(bic, degenerate, error=None):
    """A MixtureSelection over two families and K = 1, 2, 3 with given BIC values."""
    fams, ks = ["A", "A", "A", "B", "B", "B"], [1, 2, 3, 1, 2, 3]
    bic = np.asarray(bic, dtype=float)
    table = pd.DataFrame({"family": fams, "n_components": ks, "bic": bic, "aic": bic - 1, "icl": bic + 1,
                          "degenerate": degenerate, "error": error or [""] * 6})
    usable = np.where(table["degenerate"], np.nan, bic)
    best = int(np.nanargmin(usable))
    return MixtureSelection(table=table, criterion="bic", best_index=best,
                            best_params={"family": fams[best], "n_components": ks[best]},
                            best_estimator=None, families={}, estimators=[None] * 6)


def test_degenerate_and_failed_fits_are_missing_as_in_mclust():
    sel = _crafted([10.0, 5.0, 1.0, 9.0, np.nan, 7.0], [False, False, True, False, False, False],
                   ["", "", "", "", "ValueError: x", ""])
    wide = sel.criterion_table()
    assert np.isnan(wide.loc[3, "A"]) and np.isnan(wide.loc[2, "B"])
    assert wide.loc[2, "A"] == 5.0
    full = sel.criterion_table(include_degenerate=True)
    assert full.loc[3, "A"] == 1.0 and np.isnan(full.loc[2, "B"])
    top = sel.top_models(n=10)
    assert list(top.index) == ["A,2", "B,3", "B,1", "A,1"]  # the degenerate A,3 and the failed B,2 left out
    assert sel.best_params == {"family": "A", "n_components": 2}


def test_ties_keep_grid_order():
    sel = _crafted([3.0, 2.0, 2.0, 2.0, 5.0, 6.0], [False] * 6)
    assert list(sel.top_models().index) == ["A,2", "A,3", "B,1"]


@pytest.mark.parametrize("criterion", [None, "bic", "aic", "icl"])
def test_top_models_are_the_best_in_order(selection, criterion):
    crit = criterion or selection.criterion
    top = selection.top_models(3, criterion)
    usable = selection.table[~selection.table["degenerate"]]
    expected = usable.sort_values(crit, kind="stable").head(3)
    assert list(top["family"]) == list(expected["family"])
    assert list(top["n_components"]) == list(expected["n_components"])
    np.testing.assert_array_equal(top[crit], expected[crit])
    assert np.all(np.diff(top[crit]) >= 0)
    np.testing.assert_allclose(top["difference"], top[crit] - top[crit].iloc[0])
    assert top["difference"].iloc[0] == 0.0 and not np.signbit(top["difference"].iloc[0])
    assert list(top.index) == [f"{f},{k}" for f, k in zip(top["family"], top["n_components"])]
    if crit == selection.criterion:
        assert (top["family"].iloc[0], top["n_components"].iloc[0]) == tuple(selection.best_params.values())
    flipped = selection.top_models(3, criterion, mclust_sign=True)
    np.testing.assert_array_equal(flipped[crit], -top[crit])
    np.testing.assert_array_equal(flipped["difference"], -top["difference"])
    assert not np.signbit(flipped["difference"].iloc[0])


def test_summary_text_lists_the_top_models(selection):
    top = selection.top_models(3)
    text = selection.summary()
    lines = text.splitlines()
    assert lines[0] == "Top 3 models by BIC (-2 log L + p log n, lower is better):"
    assert lines[1].split() == list(top.index)
    assert lines[2].split()[0] == "BIC" and [float(v) for v in lines[2].split()[1:]] == pytest.approx(
        top["bic"].tolist(), abs=1e-4)
    assert lines[3].split()[:2] == ["BIC", "diff"]
    mclust = selection.summary(2, "icl", mclust_sign=True).splitlines()
    assert mclust[0] == "Top 2 models by ICL (mclust's sign, BIC + 2 sum log max_k z_ik, higher is better):"
    assert [float(v) for v in mclust[2].split()[1:]] == pytest.approx((-selection.top_models(2, "icl")["icl"]).tolist(),
                                                                      abs=1e-4)


@pytest.mark.parametrize("kwargs", [{"n": 0}, {"n": 2.5}, {"n": True}, {"criterion": "xic"}])
def test_bad_arguments_are_one_line_errors(selection, kwargs):
    with pytest.raises(ValueError) as info:
        selection.top_models(**kwargs)
    assert "\n" not in str(info.value)
    if "criterion" in kwargs:
        with pytest.raises(ValueError):
            selection.criterion_table(kwargs["criterion"])


def test_one_component_row_equals_mclusts_on_iris():
    """mclust 6.0.0: mclustBIC(iris[, 1:4], G=1) (one component: no start to differ)."""
    from sklearn.datasets import load_iris

    mclust = {"EII": -1804.0854, "VII": -1804.0854, "EEI": -1522.1202, "VEI": -1522.1202, "EVI": -1522.1202,
              "VVI": -1522.1202, **{name: -829.9782 for name in MCLUST_ORDER[6:]}}
    result = select_mixture(load_iris().data, gaussian_models(), [1], random_state=0)
    row = result.criterion_table(mclust_sign=True).loc[1]
    assert list(row.index) == MCLUST_ORDER
    np.testing.assert_allclose(row.to_numpy(), [mclust[name] for name in MCLUST_ORDER], atol=1e-3)
