"""Markdown or HTML report of a prototype-set search: selection, test metrics, grid and figures."""

import html
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from discrim.utils._files import atomic_output
from discrim.utils._markdown import markdown_cell


def model_summary(cv_estimator):
    """Size of the refitted model of a search.

    Parameters
    ----------
    cv_estimator : PrototypeClassifierCV
        Fitted.

    Returns
    -------
    summary : dict
        ``n_batches``, ``n_prototypes`` and ``active_features`` (list of feature names, or
        ``"x{index}"`` when the training data had no names). With a ``transformer`` the features
        are its output's, named by its ``get_feature_names_out()`` where it has one.
    """
    model = cv_estimator.best_estimator_
    batches = [b for b in model.batches_ if b.prototype_weights.shape[0]]
    active = np.unique(np.concatenate([b.feature_index for b in batches])) if batches else np.zeros(0, int)
    names = _model_feature_names(cv_estimator)
    labels = [str(names[d]) if names is not None else f"x{d}" for d in active]
    return {
        "n_batches": len(model.batches_),
        "n_prototypes": int(sum(b.prototype_weights.shape[0] for b in batches)),
        "active_features": labels,
    }


def _model_feature_names(cv_estimator):
    """Names of the features the refitted model sees: X's, or the transformer's output's (None: unnamed).

    With a transformer the model's feature indices number its output, which X's names do not
    name: a PolynomialFeatures output's index 3 raised IndexError against two names of X, and a
    PCA's components were shown under the names of X's columns.
    """
    transformer = getattr(cv_estimator, "transformer_", None)
    if transformer is None:
        return getattr(cv_estimator, "feature_names_in_", None)
    try:
        return np.asarray(transformer.get_feature_names_out(), dtype=object)
    except (AttributeError, TypeError, ValueError):  # a transformer that cannot name its output
        return None


def selection_rule(cv_estimator):
    """The sentence that states how a search chose its point, in the words of its settings."""
    from discrim.model_selection._search import SCORE_LABELS

    label = SCORE_LABELS[cv_estimator.scoring]
    best = "lowest" if cv_estimator.scoring == "log_loss" else "highest"
    if cv_estimator.selection == "best":
        return f"Rule: the grid point of the {best} mean CV {label} (selection='best')."
    bound = "at most" if cv_estimator.scoring == "log_loss" else "at least"
    order = "the largest alpha_feature, " + ("then the largest alpha_prototype, "
                                             if cv_estimator.alpha_prototype_grid is not None else "")
    return (f"Rule: among the grid points whose mean CV {label} is {bound} the threshold, {order}then the fewest "
            "batches (the 1-SE rule of the proset report).")


def _blocks(cv_estimator, title, data, metrics, figures):
    """The report as a list of blocks: ("h2"/"p", text), ("table", header, rows), ("img", alt, src)."""
    from discrim.model_selection._search import SCORE_LABELS, best_mean_index, threshold_label

    res = cv_estimator.cv_results_
    sel = cv_estimator.best_params_
    scoring, label = cv_estimator.scoring, SCORE_LABELS[cv_estimator.scoring]
    best_word = "lowest" if scoring == "log_loss" else "highest"
    # with an alpha_prototype grid: the (alpha_feature x batch count) table of the selected value
    rows = np.ones(len(res["n_batches"]), dtype=bool)
    if "alpha_prototype" in sel:
        rows = np.asarray(res["alpha_prototype"]) == sel["alpha_prototype"]
    alphas = np.unique(np.asarray(res["alpha_feature"])[rows])
    counts = np.unique(res["n_batches"])
    all_means = np.asarray(res[f"mean_test_{scoring}"])
    # placed by value: cv_results_ follows the grid as given (a descending grid's rows were shown
    # under the ascending alphas, each with another alpha's numbers)
    at = (np.searchsorted(alphas, np.asarray(res["alpha_feature"])[rows]),
          np.searchsorted(counts, np.asarray(res["n_batches"])[rows]))
    mean = np.full((alphas.shape[0], counts.shape[0]), np.nan)
    std = np.full_like(mean, np.nan)
    mean[at], std[at] = all_means[rows], np.asarray(res[f"std_test_{scoring}"])[rows]
    # NaN: a point no fold scored (the folds stopped adding batches before it)
    best = best_mean_index(all_means, scoring)
    best_point = f"alpha_feature={res['alpha_feature'][best]:.3g}" + (
        f", alpha_prototype={res['alpha_prototype'][best]:.3g}" if "alpha_prototype" in sel else "")
    summary = model_summary(cv_estimator)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    blocks = [("h1", title), ("p", f"Written by discrim on {stamp}.")]
    if data:
        blocks += [("h2", "Data"), ("table", ["item", "value"], [[k, str(v)] for k, v in data.items()])]
    chosen = [["alpha_feature", f"{sel['alpha_feature']:.3g}"]]
    if "alpha_prototype" in sel:
        chosen.append(["alpha_prototype", f"{sel['alpha_prototype']:.3g}"])
    blocks += [
        ("h2", "Selected hyperparameters"),
        ("table", ["item", "value"], [
            *chosen,
            ["n_batches", str(sel["n_batches"])],
            [f"threshold ({threshold_label(scoring)})", f"{cv_estimator.threshold_:.4f}"],
            [f"{best_word} mean CV {label}", f"{all_means[best]:.4f} at {best_point}, {res['n_batches'][best]} batches"],
            [f"mean CV {label} of the selected point", f"{all_means[cv_estimator.best_index_]:.4f}"],
            ["cross-validation splits", str(cv_estimator.n_splits_)],
            ["search time", f"{cv_estimator.search_time_:.2f} s"],
            ["refit time", f"{cv_estimator.refit_time_:.2f} s"],
        ]),
        ("p", selection_rule(cv_estimator)),
        ("h2", "Refitted model"),
        ("table", ["item", "value"], [
            ["batches", str(summary["n_batches"])],
            ["prototypes", str(summary["n_prototypes"])],
            ["active features", f"{len(summary['active_features'])}: {', '.join(summary['active_features'])}"],
        ]),
    ]
    if metrics:
        blocks += [("h2", "Test metrics"),
                   ("table", ["metric", "value"], [[k, f"{v:.4f}"] for k, v in metrics.items()])]
    for alt, src in (figures or {}).items():
        blocks += [("h2", alt), ("img", alt, src)]
    table = []
    for i, a in enumerate(alphas):
        cells = []
        for j in range(counts.shape[0]):
            text = f"{mean[i, j]:.3f} ± {std[i, j]:.3f}" if np.isfinite(mean[i, j]) else "not scored"
            if a == sel["alpha_feature"] and counts[j] == sel["n_batches"]:
                text = f"**{text}**"
            cells.append(text)
        table.append([f"{a:.2g}", *cells])
    of_prototype = f", alpha_prototype={sel['alpha_prototype']:.3g}" if "alpha_prototype" in sel else ""
    blocks += [
        ("h2", f"Mean CV {label} ± std (rows: alpha_feature, columns: batches{of_prototype}; selected in bold)"),
        ("table", ["alpha_feature", *[str(c) for c in counts]], table),
    ]
    if not np.isfinite(mean).all():
        blocks.append(("p", "not scored: every fold had stopped adding batches before that count "
                            "(n_batches_no_change)."))
    return blocks


def _markdown(blocks):
    out = []
    for block in blocks:
        kind = block[0]
        if kind == "h1":
            out.append(f"# {block[1]}\n")
        elif kind == "h2":
            out.append(f"## {block[1]}\n")
        elif kind == "p":
            out.append(f"{block[1]}\n")
        elif kind == "img":
            out.append(f"![{block[1]}]({block[2]})\n")
        else:
            header, rows = block[1], block[2]
            lines = ["| " + " | ".join(map(markdown_cell, header)) + " |", "|" + "---|" * len(header)]
            lines += ["| " + " | ".join(map(markdown_cell, row)) + " |" for row in rows]
            out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def _html(blocks):
    def cell(text, tag):
        text = html.escape(text)
        if text.startswith("**") and text.endswith("**"):
            text = f"<b>{text[2:-2]}</b>"
        return f"<{tag}>{text}</{tag}>"

    body = []
    title = "discrim report"
    for block in blocks:
        kind = block[0]
        if kind in ("h1", "h2"):
            title = block[1] if kind == "h1" else title
            body.append(f"<{kind}>{html.escape(block[1])}</{kind}>")
        elif kind == "p":
            body.append(f"<p>{html.escape(block[1])}</p>")
        elif kind == "img":
            body.append(f'<img src="{html.escape(block[2])}" alt="{html.escape(block[1])}" style="max-width:100%">')
        else:
            head = "".join(cell(h, "th") for h in block[1])
            rows = "".join("<tr>" + "".join(cell(c, "td") for c in row) + "</tr>" for row in block[2])
            body.append(f"<table border=\"1\" cellpadding=\"3\"><tr>{head}</tr>{rows}</table>")
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title></head>"
            f"<body>\n" + "\n".join(body) + "\n</body></html>\n")


def search_report(cv_estimator, *, title="Prototype set search", data=None, metrics=None, figures=None,
                  fmt="md"):
    """Render the report of a fitted search.

    Parameters
    ----------
    cv_estimator : PrototypeClassifierCV
        Fitted.
    title : str, default="Prototype set search"
    data : dict of str to object, default=None
        Description of the data (rows, features, classes ...), shown as a table.
    metrics : dict of str to float, default=None
        Test metrics, shown as a table.
    figures : dict of str to str, default=None
        Caption to image path (relative to the report) of figures to embed.
    fmt : {"md", "html"}, default="md"

    Returns
    -------
    text : str
    """
    if fmt not in ("md", "html"):
        raise ValueError(f"fmt must be 'md' or 'html'; got {fmt!r}.")
    blocks = _blocks(cv_estimator, title, data, metrics, figures)
    return _markdown(blocks) if fmt == "md" else _html(blocks)


def write_text_atomic(text, path):
    """Write ``text`` to ``path`` through a temporary file in the same folder, then rename it.

    Parameters
    ----------
    text : str
    path : str or path-like
    """
    with atomic_output(path) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")
