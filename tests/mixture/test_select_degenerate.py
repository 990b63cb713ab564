"""select_mixture never chooses a component collapsed onto tied values (issue 17), checked against
mclust 6.0.0's BIC on R's faithful data and on a Gaussian with a rounded feature (tests/mixture/data)."""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from discrim.distributions import Gaussian
from discrim.exceptions import CollapsingComponentWarning
from discrim.mixture import select_mixture
from discrim.mixture._selection import SINGULAR_RTOL

DATA = Path(__file__).parent / "data"
# mclust's names for the covariance models discrim has.
MCLUST = {"VVV": Gaussian("full"), "EEE": Gaussian("tied"), "VVI": Gaussian("diag"), "VII": Gaussian("spherical")}


def _select(name, **kwargs):
    X = pd.read_csv(DATA / f"{name}.csv").to_numpy(dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # failed/unconverged cells are in the table
        return select_mixture(X, MCLUST, range(1, 10), random_state=0, **kwargs)


def _mclust_bic(name):
    """mclust's BIC table, in discrim's sign (lower is better), indexed by G, columns by model."""
    return -pd.read_csv(DATA / f"{name}_mclust_bic.csv").set_index("G")


def test_faithful_chooses_mclusts_model():
    result = _select("faithful", n_init=10, tol=1e-6)
    assert result.best_params == {"family": "EEE", "n_components": 3}  # mclust: EEE,3
    oracle = _mclust_bic("faithful")
    table = result.table.set_index(["family", "n_components"])
    # The leading models reach mclust's maximum likelihood (its BIC within EM's tolerance).
    for model, g in [("EEE", 3), ("VVV", 2), ("EEE", 2), ("VVV", 1)]:
        assert table.loc[(model, g), "bic"] == pytest.approx(oracle.loc[g, model], abs=0.5)
    assert table.loc[("EEE", 3), "bic"] < oracle.loc[2, "VVV"]


def test_faithful_singular_fits_are_excluded_with_their_reason():
    table = _select("faithful").table
    singular = table[table["degenerate_reason"] == "singular covariance"]
    assert (singular["min_rel_variance"] < SINGULAR_RTOL).all() and singular["degenerate"].all()
    kept = table[~table["degenerate"] & (table["error"] == "")]
    assert (kept["min_rel_variance"] >= SINGULAR_RTOL).all()
    # Before the check, VVI with 5 components (a component on tied waiting times) won by BIC.
    best = table.iloc[_select("faithful").best_index]
    assert not best["degenerate"] and best["family"] in ("EEE", "VVV")


def test_rounded_feature_gives_one_gaussian():
    result = _select("rounded_gaussian")
    assert result.best_params["n_components"] == 1  # mclust: VVI,1 (-2150.636)
    assert result.best_params["family"] == "VVI"
    best = result.table.iloc[result.best_index]
    assert best["bic"] == pytest.approx(_mclust_bic("rounded_gaussian").loc[1, "VVI"], abs=1e-3)
    # The models with more components that beat it by BIC are exactly the excluded ones.
    better = result.table[result.table["bic"] < best["bic"]]
    assert len(better) > 0 and better["degenerate"].all()


@pytest.mark.parametrize("ctype", ["full", "tied", "diag", "spherical"])
def test_a_component_on_one_tied_value_is_singular(ctype):
    rng = np.random.default_rng(0)
    spread = np.column_stack([rng.normal(size=200), rng.normal(size=200)])
    tied = np.column_stack([rng.normal(5.0, 1.0, 60), np.full(60, 7.0)])  # second feature constant
    X = np.vstack([spread, tied])
    if ctype == "spherical":
        X = np.vstack([spread, np.full((60, 2), 7.0) + [0.0, 0.0]])  # a point mass
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = select_mixture(X, {ctype: Gaussian(ctype)}, [1, 2], random_state=0, n_init=3)
    row = result.table.set_index("n_components").loc[2]
    if ctype == "tied":  # a shared covariance cannot collapse in one component: not singular
        assert not row["degenerate"]
    else:
        assert row["degenerate"] and row["min_rel_variance"] < SINGULAR_RTOL
        assert result.best_params["n_components"] == 1


def test_scale_of_the_data_does_not_change_the_verdict():
    X = pd.read_csv(DATA / "rounded_gaussian.csv").to_numpy(dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = select_mixture(X, {"VVV": Gaussian()}, range(1, 6), random_state=0)
        b = select_mixture(X * 1e3, {"VVV": Gaussian()}, range(1, 6), random_state=0, reg_covar=1e-6 * 1e6)
    np.testing.assert_array_equal(a.table["degenerate"], b.table["degenerate"])
    assert a.best_params == b.best_params


def test_a_selected_model_with_a_collapsing_component_says_so():
    """mclust drops singular fits only; a chosen fit with a variance near reg_covar (a thin cluster, 30 rows
    on a line) is kept, as there, but the choice warns as FiniteMixture's fit does."""
    rng = np.random.default_rng(0)
    t = rng.normal(size=30) * 0.5
    X = np.r_[rng.normal(size=(60, 2)) * [1.0, 2.0], np.c_[t, t + 1e-3 * rng.normal(size=30)] + 4.0]
    with pytest.warns(CollapsingComponentWarning, match=r"the selected model \(full, 2 components\) has collapsing component") as record:
        result = select_mixture(X, {"full": Gaussian("full")}, [1, 2], random_state=0)
    assert result.best_params["n_components"] == 2 and not result.table["degenerate"].any()
    assert any(w.filename == __file__ for w in record)


def test_a_component_of_d_plus_one_rows_is_kept_as_mclust_keeps_it():
    """Under EM's soft assignments a component of d + 1 = 3 rows holds a little less than 3 rows'
    weight (2.9957 and 2.9992 here): mclust 6's mclustBIC keeps VVV,2 and VVV,4 and chooses VVV,4
    (BIC 119.532 in discrim's sign, computed with R), so the rows are counted to the nearest row."""
    rng = np.random.default_rng(26)
    X = np.vstack([rng.normal(size=(10, 2)), rng.normal(3.5, 1, size=(6, 2)) @ np.array([[1, 0.9], [0, 0.3]])])
    families = {"VVV": Gaussian("VVV"), "EEE": Gaussian("EEE"), "VVI": Gaussian("VVI"), "EII": Gaussian("EII")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = select_mixture(X, families, range(1, 5), init_params="hierarchical", n_jobs=1)
    table = result.table.set_index(["family", "n_components"])
    assert 2.99 < table.loc[("VVV", 4), "min_rows"] < 3.0 and 2.99 < table.loc[("VVV", 2), "min_rows"] < 3.0
    assert not table.loc[("VVV", 4), "degenerate"] and not table.loc[("VVV", 2), "degenerate"]
    assert result.best_params == {"family": "VVV", "n_components": 4}
    assert table.loc[("VVV", 4), "bic"] == pytest.approx(119.532, abs=0.05)


@pytest.mark.parametrize("seed", [0, 3, 4])
def test_a_fit_stopped_at_the_start_of_a_collapse_is_continued_and_reported_singular(seed):
    """Integers on a 3 x 3 grid: EM at tol stops some cells after 2 iterations with a component
    still sinking onto the tied values (its likelihood creeps up by less than tol at first). Before,
    such a cell was chosen with a warning (EVV,4 at BIC 150.7 for seed 0); mclust's EM goes on and
    reports these fits as singular. Continued to a tight tolerance, they collapse and are never chosen."""
    rng = np.random.default_rng(10)
    rng.normal(size=(16, 2))
    X = rng.integers(0, 3, size=(40, 2)).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CollapsingComponentWarning)  # the choice does not collapse
        warnings.filterwarnings("ignore", category=UserWarning, message="(?!select_mixture: the selected)")
        result = select_mixture(X, {name: Gaussian(name) for name in ("EVV", "EVE", "EVI", "EII")}, range(1, 5),
                                n_jobs=1, random_state=seed)
    table = result.table.set_index(["family", "n_components"])
    assert table.loc[("EVV", 4), "degenerate_reason"] == "singular covariance"
    assert table.loc[("EVV", 4), "min_rel_variance"] < SINGULAR_RTOL
    chosen = table.loc[(result.best_params["family"], result.best_params["n_components"])]
    assert not chosen["degenerate"] and chosen["min_rel_variance"] > 1e-5


def test_a_choice_among_degenerate_fits_is_a_collapse_warning_not_a_failed_fit():
    # FitFailedWarning ("a grid cell could not be fitted") was raised though every cell was fitted
    import warnings

    from discrim.exceptions import CollapsingComponentWarning, FitFailedWarning

    X = np.random.default_rng(0).normal(size=(6, 3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        selection = select_mixture(X, Gaussian(), [2, 3], random_state=0)
    assert (selection.table["error"] == "").all()
    chosen = [w for w in caught if "choosing among them anyway" in str(w.message)]
    assert [w.category for w in chosen] == [CollapsingComponentWarning]
    assert not any(w.category is FitFailedWarning for w in caught) and chosen[0].filename == __file__
