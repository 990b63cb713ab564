"""Tests of the search report writer (Markdown and HTML) and its atomic file writing."""

import pytest

from discrim.datasets import load_benchmark
from discrim.model_selection import PrototypeClassifierCV
from discrim.model_selection._report import model_summary, search_report, write_text_atomic


@pytest.fixture(scope="module")
def search():
    X, _, y, _ = load_benchmark("iris-2f", as_frame=True)
    return PrototypeClassifierCV(alpha_feature_grid=[1e-3, 1e-2], max_batches=2, cv=3, n_candidates=60,
                                 random_state=0).fit(X, y)


def test_model_summary_counts_prototypes_and_names_features(search):
    summary = model_summary(search)
    batches = search.best_estimator_.batches_
    assert summary["n_batches"] == len(batches) == search.best_params_["n_batches"]
    assert summary["n_prototypes"] == sum(b.prototype_weights.shape[0] for b in batches)
    assert set(summary["active_features"]) <= set(search.feature_names_in_)


def test_markdown_report(search):
    text = search_report(search, title="t", data={"rows": 105}, metrics={"log-loss": 0.5},
                         figures={"Search": "search.png"})
    assert text.startswith("# t\n")
    assert "| rows | 105 |" in text and "| log-loss | 0.5000 |" in text and "![Search](search.png)" in text
    assert f"| alpha_feature | {search.best_params_['alpha_feature']:.3g} |" in text
    # the grid table: one row per alpha, one column per batch count, the selected cell in bold
    grid = text.split("selected in bold)")[1].strip().splitlines()
    assert len(grid) == 2 + 2 and grid[0].count("|") == 1 + 1 + 3
    assert sum(line.count("**") for line in grid) == 2
    mean = search.cv_results_["mean_test_log_loss"][search.best_index_]
    assert f"**{mean:.3f} ±" in text


def test_html_report_escapes_and_bolds(search):
    text = search_report(search, title="a < b", fmt="html", figures={"Map": "map.png"})
    assert text.startswith("<!DOCTYPE html>") and "<h1>a &lt; b</h1>" in text
    assert '<img src="map.png"' in text and text.count("<b>") == 1
    with pytest.raises(ValueError, match="fmt"):
        search_report(search, fmt="pdf")


def test_write_text_atomic(tmp_path):
    path = tmp_path / "r.md"
    write_text_atomic("hello ±", path)
    assert path.read_text(encoding="utf-8") == "hello ±"
    assert [p.name for p in tmp_path.iterdir()] == ["r.md"]  # no temporary file left


def test_report_states_the_rule_and_score_the_search_used_and_marks_unscored_points():
    # the rule text was the 1-SE rule on the log-loss whatever the settings, and the lowest mean
    # was argmin over NaN (points no fold scored after n_batches_no_change): "nan at ..."
    X, _, y, _ = load_benchmark("iris")
    search = PrototypeClassifierCV(alpha_feature_grid=[1e-4, 1e-2], max_batches=4, n_batches_no_change=1, cv=3,
                                   n_candidates=40, selection="best", random_state=0).fit(X, y)
    text = search_report(search, title="t")
    assert "Rule: the grid point of the lowest mean CV log-loss (selection='best')." in text
    assert "| lowest mean CV log-loss | nan" not in text and "not scored" in text and "nan ± nan" not in text
    by_auc = PrototypeClassifierCV(alpha_feature_grid=[1e-3, 1e-2], alpha_prototype_grid=[1e-8, 1e-3], max_batches=1,
                                   cv=3, n_candidates=40, scoring="roc_auc", random_state=0).fit(X, y)
    text = search_report(by_auc, title="t")
    assert "whose mean CV ROC-AUC is at least the threshold, the largest alpha_feature, then the largest " \
           "alpha_prototype, then the fewest batches" in text
    assert f"| alpha_prototype | {by_auc.best_params_['alpha_prototype']:.3g} |" in text
    assert "| highest mean CV ROC-AUC |" in text


def test_grid_table_shows_each_alpha_its_own_scores_whatever_the_order_of_the_grid():
    """cv_results_ follows alpha_feature_grid as given; the table reshaped it under the sorted
    alphas, so a descending grid showed each alpha the other's numbers (at alpha 0.1: 0.693, 1.076,
    1.045 where cv_results_ has 0.693, 0.597, 0.597)."""
    import numpy as np

    X, _, y, _ = load_benchmark("iris-2f")
    search = PrototypeClassifierCV(alpha_feature_grid=[1e-1, 1e-4], max_batches=2, cv=3, n_candidates=40,
                                   random_state=0).fit(X, y)
    res = search.cv_results_
    grid = search_report(search).split("selected in bold)")[1].strip().splitlines()[2:]
    rows = {float(line.split("|")[1]): [c.strip().strip("*") for c in line.split("|")[2:-1]] for line in grid}
    assert sorted(rows) == [1e-4, 1e-1]
    for alpha, count, mean, std in zip(res["alpha_feature"], res["n_batches"], res["mean_test_log_loss"],
                                       res["std_test_log_loss"]):
        assert rows[float(f"{alpha:.2g}")][count] == f"{mean:.3f} ± {std:.3f}"
    assert not np.array_equal(res["mean_test_log_loss"][:3], res["mean_test_log_loss"][3:])  # the rows differ


def test_model_summary_names_the_transformers_output_features():
    """With a transformer the model's feature indices number its output: a PolynomialFeatures
    output's index 3 raised IndexError against X's two names, and a PCA's components were named
    after X's columns."""
    import numpy as np
    import pandas as pd
    from sklearn.decomposition import PCA
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures, StandardScaler

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(90, 2)), columns=["height", "weight"])
    y = (X["height"] * X["weight"] > 0).astype(int)
    settings = dict(alpha_feature_grid=[1e-4], max_batches=2, cv=3, n_candidates=40, random_state=0, selection="best")
    for transformer in (make_pipeline(PolynomialFeatures(2, include_bias=False), StandardScaler()), PCA(2)):
        search = PrototypeClassifierCV(**settings, transformer=transformer).fit(X, y)
        names = search.transformer_.get_feature_names_out()
        active = np.unique(np.concatenate([b.feature_index for b in search.best_estimator_.batches_]))
        assert model_summary(search)["active_features"] == [str(names[d]) for d in active]
        search_report(search)  # renders


def test_markdown_cells_keep_a_bar_or_a_line_break_of_a_name_in_their_cell():
    # "alcohol|%vol" opened a third cell in a two-column row, which Markdown drops ("barolo|DOCG" of the
    # classes showed as "barolo")
    X, _, y, _ = load_benchmark("iris-2f", as_frame=True)
    X = X.set_axis(["sepal|length", "sepal\nwidth"], axis=1)
    search = PrototypeClassifierCV(alpha_feature_grid=[1e-3], max_batches=1, cv=3, n_candidates=60,
                                   random_state=0).fit(X, y)
    text = search_report(search, data={"classes": "barolo|DOCG, barbera"})
    assert "| classes | barolo\\|DOCG, barbera |" in text
    row = next(line for line in text.splitlines() if line.startswith("| active features |"))
    assert "sepal\\|length" in row and row.replace("\\|", "").count("|") == 3
    assert "sepal width" in text
