"""Plots of finite mixtures: EM convergence, fitted densities, classification and uncertainty pairs, BIC against K."""

from __future__ import annotations

import numpy as np

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from discrim._typing import ArrayLike
from discrim.plotting._mpl import new_axes

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from discrim.mixture import FiniteMixture, MixtureSelection



def _check_fitted_mixture(mixture, plot, attribute="weights_"):
    """Refuse a model that is not a FiniteMixture (a classifier given to a mixture plot), then an unfitted one."""
    from sklearn.utils.validation import check_is_fitted

    from discrim.mixture import FiniteMixture

    if not isinstance(mixture, FiniteMixture):
        raise TypeError(
            f"{plot} draws a fitted FiniteMixture; got {type(mixture).__name__}. A classifier's decision regions "
            "are drawn by plot_decision_surface (a prototype set's also by plot_prototype_surface)."
        )
    check_is_fitted(mixture, attribute)


def plot_convergence(mixture: FiniteMixture, ax: Axes | None = None) -> Axes:
    """Plot the EM log-likelihood trace of a fitted mixture.

    Parameters
    ----------
    mixture : FiniteMixture
        Fitted; its ``lower_bounds_`` (mean weighted log-likelihood at the initial parameters,
        iteration 0, and after every EM iteration, of the kept initialisation) are drawn
        against the iteration number.
    ax : matplotlib.axes.Axes, default=None
        Axes to draw on; a new figure when None.

    Returns
    -------
    ax : matplotlib.axes.Axes

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import Gaussian
    >>> from discrim.mixture import FiniteMixture
    >>> from discrim.plotting import plot_convergence
    >>> X = np.random.default_rng(0).normal(size=(100, 2))
    >>> ax = plot_convergence(FiniteMixture(Gaussian(), 2, random_state=0).fit(X))
    >>> ax.get_xlabel()
    'iteration (0: initial parameters)'
    """
    from matplotlib.ticker import MaxNLocator

    _check_fitted_mixture(mixture, "plot_convergence", "lower_bounds_")
    ax = new_axes(ax)
    bounds = np.asarray(mixture.lower_bounds_, dtype=float)
    ax.plot(np.arange(bounds.shape[0]), bounds, marker="o", markersize=3, label="EM")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("iteration (0: initial parameters)")
    ax.set_ylabel("mean log-likelihood per row")
    status = "converged" if mixture.converged_ else "not converged"
    n_iter = int(mixture.n_iter_)
    ax.set_title(f"EM convergence ({status} after {n_iter} iteration{'' if n_iter == 1 else 's'})")
    return ax


def plot_mixture_density(mixture: FiniteMixture, X: ArrayLike, ax: Axes | None = None, *, bins: int | str = "auto",
                         grid_size: int = 200) -> Axes:
    """Draw the fitted mixture density over the data, for one or two columns.

    One column: a density histogram of X with the mixture density and its weighted components
    as curves (Gaussian family), or the observed relative frequencies as bars with the fitted
    probability mass function as markers (discrete families). Two columns: a scatter plot of X
    with contours of the log-density (Gaussian family, component means marked), or the fitted
    mass function as an image with the observed points sized by their frequency (discrete).

    Parameters
    ----------
    mixture : FiniteMixture
        Fitted on data with one or two columns.
    X : array-like of shape (n_samples, 1) or (n_samples, 2)
        The data to draw, usually the training data. Rows with a missing value (NaN) are left
        out of the data drawn; the fitted density is drawn whole.
    ax : matplotlib.axes.Axes, default=None
        Axes to draw on; a new figure when None.
    bins : int or str, default="auto"
        Histogram bins for one continuous column (numpy's ``bins`` argument).
    grid_size : int, default=200
        Points per axis of the evaluation grid of a continuous density.

    Returns
    -------
    ax : matplotlib.axes.Axes

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import Gaussian
    >>> from discrim.mixture import FiniteMixture
    >>> from discrim.plotting import plot_mixture_density
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(-3, 1, (100, 1)), rng.normal(3, 1, (100, 1))])
    >>> ax = plot_mixture_density(FiniteMixture(Gaussian(), 2, random_state=0).fit(X), X)
    >>> type(ax).__name__
    'Axes'
    """
    from sklearn.utils.validation import check_array

    _check_fitted_mixture(mixture, "plot_mixture_density")
    columns = getattr(X, "columns", None)
    X = check_array(X, dtype=np.float64, ensure_all_finite="allow-nan")
    if X.shape[1] not in (1, 2):
        raise ValueError(
            f"plot_mixture_density draws one or two columns; X has {X.shape[1]}: select one or "
            "two columns (and fit the mixture on them)."
        )
    X = X[~np.isnan(X).any(axis=1)]  # a point needs every drawn coordinate
    if X.shape[0] == 0:
        raise ValueError("plot_mixture_density: every row of X has a missing value (NaN); there is no point to draw.")
    ax = new_axes(ax)
    draw = {
        (1, True): _density_1d,
        (1, False): _pmf_1d,
        (2, True): _density_2d,
        (2, False): _pmf_2d,
    }[(X.shape[1], not mixture.family_.is_discrete)]
    draw(mixture, X, ax, bins=bins, grid_size=grid_size)
    names = _column_names(mixture, columns, X.shape[1])
    ax.set_xlabel(names[0])
    if X.shape[1] == 2:
        ax.set_ylabel(names[1])
    return ax


def _density_1d(mixture, X, ax, bins, grid_size):
    x = X[:, 0]
    pad = 0.1 * (np.ptp(x) or 1.0)
    grid = np.linspace(x.min() - pad, x.max() + pad, grid_size)[:, None]
    dens = np.exp(mixture.score_samples(_model_rows(mixture, grid)))
    # w_r f_r(x) = P(r | x) f(x): the weighted components from the public API alone.
    parts = mixture.predict_proba(_model_rows(mixture, grid)) * dens[:, None]
    ax.hist(x, bins=bins, density=True, alpha=0.35, color="tab:gray", label="data")
    for r in range(parts.shape[1]):  # dashed, above the mixture curve where they coincide
        ax.plot(grid[:, 0], parts[:, r], linestyle="--", linewidth=1.5, zorder=3,
                label=f"component {r} (weighted)")
    ax.plot(grid[:, 0], dens, color="black", linewidth=2, zorder=2, label="mixture")
    ax.set_ylabel("density")
    ax.legend(loc="best", fontsize="small")


def _support(x, mixture):
    """Integer values to evaluate a discrete density on: 0 to the data's maximum, or to the
    family's largest value (``n_trials``, ``n_categories - 1``) where it has one."""
    lo, hi = int(np.floor(min(x.min(), 0))), int(np.ceil(x.max()))
    upper = mixture.family_.support_upper()
    if upper is not None:
        hi = max(hi, int(upper))
    return np.arange(lo, hi + 1, dtype=np.float64)


def _pmf_1d(mixture, X, ax, bins, grid_size):
    from matplotlib.ticker import MaxNLocator

    x = X[:, 0]
    values = _support(x, mixture)
    pmf = np.exp(mixture.score_samples(_model_rows(mixture, values[:, None])))
    observed, counts = np.unique(x, return_counts=True)
    ax.bar(observed, counts / counts.sum(), width=0.8, alpha=0.35, color="tab:gray", label="data")
    ax.plot(values, pmf, linestyle="none", marker="o", color="black", label="fitted pmf")
    ax.vlines(values, 0, pmf, color="black", linewidth=1)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("probability")
    ax.legend(loc="best", fontsize="small")


def _density_2d(mixture, X, ax, bins, grid_size):
    pad = 0.1 * np.where(np.ptp(X, axis=0) > 0, np.ptp(X, axis=0), 1.0)
    lo, hi = X.min(axis=0) - pad, X.max(axis=0) + pad
    g0, g1 = np.meshgrid(np.linspace(lo[0], hi[0], grid_size), np.linspace(lo[1], hi[1], grid_size))
    log_dens = mixture.score_samples(_model_rows(mixture, np.column_stack([g0.ravel(), g1.ravel()]))).reshape(g0.shape)
    ax.scatter(X[:, 0], X[:, 1], s=8, alpha=0.5, color="tab:gray", label="data")
    top = np.max(log_dens)
    levels = np.linspace(top - 10.0, top, 11)  # log-density within e^-10 of the mode
    ax.contour(g0, g1, log_dens, levels=levels, cmap="viridis", linewidths=1)
    mean = getattr(mixture, "params_", {}).get("mean")
    if mean is not None:
        mean = np.asarray(mean, dtype=float)
        ax.scatter(mean[:, 0], mean[:, 1], marker="x", s=60, color="red", label="component means")
    ax.legend(loc="best", fontsize="small")


def _pmf_2d(mixture, X, ax, bins, grid_size):
    v0, v1 = _support(X[:, 0], mixture), _support(X[:, 1], mixture)
    g0, g1 = np.meshgrid(v0, v1)
    pmf = np.exp(mixture.score_samples(_model_rows(mixture, np.column_stack([g0.ravel(), g1.ravel()])))).reshape(g0.shape)
    image = ax.pcolormesh(g0, g1, pmf, shading="nearest", cmap="viridis")
    ax.figure.colorbar(image, ax=ax, label="fitted probability")
    points, counts = np.unique(X, axis=0, return_counts=True)
    ax.scatter(points[:, 0], points[:, 1], s=200 * counts / counts.max(), facecolors="none",
               edgecolors="red", label="data (size ~ frequency)")
    ax.legend(loc="best", fontsize="small")


# mclust's plot symbols and colours for its covariance models (mclust.options("bicPlotSymbols"),
# "bicPlotColors"), with R's pch drawn as the nearest matplotlib marker (open or filled).
_MCLUST_STYLE = {
    "EII": ("^", True, "gray"), "VII": ("^", False, "black"),
    "EEI": ("o", True, "#218B21"), "VEI": ("o", False, "#508476"), "EVI": (r"$\oplus$", False, "#41884F"),
    "VVI": ("o", False, "#58819C"),
    "EEE": ("s", True, "#597DC3"), "VEE": ("*", False, "#5178EA"), "EVE": ("D", False, "#716EE7"),
    "VVE": ("P", False, "#9B60B8"),
    "EEV": (r"$\boxplus$", False, "#B2508B"), "VEV": ("X", False, "#C03F60"), "EVV": ("v", False, "#C82A36"),
    "VVV": ("s", False, "#CC0000"),
}
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*", "h", "p")


def _line_style(label, index):
    """(marker, filled, colour) of the line of a family: mclust's for its model names, else a cycle."""
    if label in _MCLUST_STYLE:
        return _MCLUST_STYLE[label]
    return _MARKERS[index % len(_MARKERS)], index // len(_MARKERS) % 2 == 0, f"C{index % 10}"


def plot_selection(selection: MixtureSelection, ax: Axes | None = None, *,
                   criterion: Literal["bic", "aic", "icl"] | None = None, mclust_sign: bool = False,
                   include_degenerate: bool = False) -> Axes:
    """Plot the model-choice criterion against the number of components, one line per family.

    This is the picture of mclust's ``plot(mclustBIC(...))``: with mclust's model names as
    labels (:func:`discrim.mixture.gaussian_models`) every model gets mclust's marker and
    colour; other labels cycle through markers and colours. The legend takes two columns from
    eight lines on.

    Parameters
    ----------
    selection : MixtureSelection
        The result of :func:`discrim.mixture.select_mixture`.
    ax : matplotlib.axes.Axes, default=None
        Axes to draw on; a new figure when None.
    criterion : {"bic", "aic", "icl"} or None, default=None
        The column to draw; None: the criterion of the selection.
    mclust_sign : bool, default=False
        Draw mclust's sign (the negative, higher is better) instead of discrim's (lower is
        better).
    include_degenerate : bool, default=False
        Draw degenerate fits too; by default they are gaps, as mclust leaves its NA values out.
        Failed fits are always gaps.

    Returns
    -------
    ax : matplotlib.axes.Axes
        One line per family labelled by it (x: the counts, y: the values of
        :meth:`~discrim.mixture.MixtureSelection.criterion_table`), and a circle, labelled
        "best: ...", on the chosen model (for the selection's own criterion).

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.mixture import gaussian_models, select_mixture
    >>> from discrim.plotting import plot_selection
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(-3, 1, (100, 2)), rng.normal(3, 1, (100, 2))])
    >>> result = select_mixture(X, gaussian_models(["EII", "VVV"]), range(1, 4), random_state=0)
    >>> ax = plot_selection(result)
    >>> type(ax).__name__
    'Axes'
    """
    from matplotlib.ticker import MaxNLocator

    wide = selection.criterion_table(criterion, mclust_sign=mclust_sign, include_degenerate=include_degenerate)
    crit = selection.criterion if criterion is None else criterion  # checked by criterion_table
    ax = new_axes(ax, figsize=(7.0, 5.0))
    ks = wide.index.to_numpy()
    for i, label in enumerate(wide.columns):
        marker, filled, colour = _line_style(label, i)
        ax.plot(ks, wide[label].to_numpy(), marker=marker, markersize=6, color=colour, linewidth=1,
                markerfacecolor=colour if filled else "none", markeredgecolor=colour, label=str(label))
    if crit == selection.criterion:
        best = selection.table.iloc[selection.best_index]
        sign = -1.0 if mclust_sign else 1.0
        ax.scatter([best["n_components"]], [sign * best[crit]], s=220, facecolors="none", edgecolors="red",
                   linewidths=1.5, zorder=3, label=f"best: {best['family']}, K={best['n_components']}")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("number of components K")
    ax.set_ylabel(f"{crit.upper()} ({'mclust sign, higher' if mclust_sign else 'lower'} is better)")
    ax.legend(loc="best", fontsize="small", ncol=2 if wide.shape[1] >= 8 else 1)
    return ax


# --- pairs plots of a fitted mixture: classification, uncertainty, density ------------------

def _component_colours(n_components):
    """One RGBA colour per component: tab10 up to 10, tab20 up to 20, else evenly along turbo."""
    from matplotlib import colormaps

    if n_components <= 10:
        return [colormaps["tab10"](k) for k in range(n_components)]
    if n_components <= 20:
        return [colormaps["tab20"](k) for k in range(n_components)]
    return [colormaps["turbo"](k / (n_components - 1)) for k in range(n_components)]


def _column_names(mixture, columns, d):
    """The names of X's ``d`` columns: the mixture's, else a DataFrame's (``columns``), else x0, x1, ..."""
    if hasattr(mixture, "feature_names_in_"):
        return [str(f) for f in mixture.feature_names_in_]
    if columns is not None:  # a DataFrame names the columns of a mixture fitted on an array
        return [str(f) for f in columns]
    return [f"x{j}" for j in range(d)]


def _check_pairs_input(mixture, X, dimensions, plot):
    """Validated (X as float ndarray, dimension indices, feature names); one-line ValueErrors."""
    from numbers import Integral

    from sklearn.utils.validation import check_array

    from discrim.utils._dask import is_dask

    _check_fitted_mixture(mixture, plot)
    if is_dask(X):
        raise ValueError("the mixture plots take X in memory; compute a dask X (or a sample of it) first.")
    columns = getattr(X, "columns", None)
    X = check_array(X, dtype=np.float64, ensure_all_finite="allow-nan")
    d = mixture.n_features_in_
    if X.shape[1] != d:
        raise ValueError(f"X has {X.shape[1]} columns but the mixture was fitted on {d}.")
    names = _column_names(mixture, columns, d)
    if dimensions is None:
        dims = list(range(d))
    else:
        if isinstance(dimensions, (str, Integral)):
            dimensions = [dimensions]
        dims = []
        for item in dimensions:
            if isinstance(item, str) and item in names:
                dims.append(names.index(item))
            elif isinstance(item, Integral) and not isinstance(item, bool) and 0 <= item < d:
                dims.append(int(item))
            else:
                raise ValueError(
                    f"dimensions must be column indices in [0, {d}) or names among {names}; got {item!r}."
                )
        if not dims or len(set(dims)) < len(dims):
            raise ValueError(f"dimensions must be distinct and not empty; got {list(dimensions)!r}.")
    return X, dims, names


def _check_sd(ellipse_sd):
    """``ellipse_sd`` as a tuple of positive floats (None or empty: no ellipses)."""
    from numbers import Real

    values = () if ellipse_sd is None else (ellipse_sd,) if isinstance(ellipse_sd, Real) else ellipse_sd
    try:
        values = tuple(values)
    except TypeError:
        values = (ellipse_sd,)
    if not all(isinstance(v, Real) and not isinstance(v, bool) and np.isfinite(v) and v > 0 for v in values):
        raise ValueError(f"ellipse_sd must be positive numbers of standard deviations; got {ellipse_sd!r}.")
    return tuple(float(v) for v in values)


def _model_rows(mixture, A):
    """Rows in the form the mixture was fitted on (a DataFrame with its column names, if it had them)."""
    if hasattr(mixture, "feature_names_in_"):
        import pandas as pd

        return pd.DataFrame(A, columns=list(mixture.feature_names_in_))
    return A


def _marginal_rows(mixture, columns, values):
    """(n, d) rows holding ``values`` (n, len(columns)) in ``columns`` and NaN (missing) elsewhere."""
    A = np.full((values.shape[0], mixture.n_features_in_), np.nan)
    A[:, columns] = values
    return _model_rows(mixture, A)


def _marginal_log_density(mixture, columns, values):
    """Log of the mixture's marginal density of ``columns`` at ``values`` (n, len(columns)).

    The other columns are passed as missing: every family that scores missing values returns
    the marginal density of the observed ones (exact for Gaussians, whose marginals are Gaussian).
    """
    try:
        return mixture.score_samples(_marginal_rows(mixture, columns, values))
    except ValueError as exc:
        raise ValueError(
            f"the marginal density of columns {list(columns)} is not available for {mixture.family_!r} "
            f"(it needs rows with missing values: {exc}); plot all the columns of a mixture fitted on fewer."
        ) from None


def _weighted_component_marginals(mixture, columns, values):
    """``w_k f_k(x_columns)`` of every component (not the noise) at ``values`` (n, len(columns)):
    (n, n_components)."""
    rows = np.zeros((values.shape[0], mixture.n_features_in_))
    rows[:, columns] = values
    observed = np.zeros(rows.shape, dtype=bool)
    observed[:, columns] = True
    log_prob = np.asarray(mixture.family_.log_prob(rows, mixture._params, mask=observed), dtype=np.float64)
    return np.exp(log_prob) * np.asarray(mixture.weights_)[: mixture.n_components]


def _column_is_discrete(family, column):
    """Whether ``column`` takes whole numbers: for a Product, as the part that owns the column says
    (``Product.is_discrete`` holds only when every part is discrete); else as the family says."""
    from discrim.distributions import Product

    if isinstance(family, Product):
        for _, part, cols in family._parts():
            (hit,) = np.nonzero(cols == column)
            if hit.size:
                return _column_is_discrete(part, int(hit[0]))
    return bool(getattr(family, "is_discrete", False))


def _axis_values(x, discrete, size):
    """Evaluation points along one column: a grid over the data's range padded by 10%, or integers."""
    x = x[np.isfinite(x)]
    lo, hi = (x.min(), x.max()) if x.size else (0.0, 1.0)
    if discrete:
        return np.arange(np.floor(lo), np.ceil(hi) + 1.0)
    pad = 0.1 * (hi - lo if hi > lo else max(abs(lo), 1.0))
    return np.linspace(lo - pad, hi + pad, size)


def _limits(x):
    x = x[np.isfinite(x)]
    lo, hi = (x.min(), x.max()) if x.size else (0.0, 1.0)
    pad = 0.05 * (hi - lo if hi > lo else max(abs(lo), 1.0))
    return lo - pad, hi + pad


def _ellipse_geometry(cov2, n_sd):
    """(width, height, angle in degrees) of the ``n_sd``-standard-deviation ellipse of a 2x2 covariance.

    The width lies along the major axis: twice ``n_sd`` times the square root of the larger
    eigenvalue; the angle is that axis' direction from the x axis.
    """
    values, vectors = np.linalg.eigh(cov2)
    values = np.clip(values, 0.0, None)
    major = vectors[:, 1]
    angle = np.degrees(np.arctan2(major[1], major[0]))
    return 2.0 * n_sd * np.sqrt(values[1]), 2.0 * n_sd * np.sqrt(values[0]), angle


def _draw_ellipses(ax, gaussian, i, j, colours, ellipse_sd):
    """Means and ``ellipse_sd`` contours of every component's (x_i, x_j) marginal covariance."""
    from matplotlib.patches import Ellipse

    means, covs = gaussian
    for k in range(means.shape[0]):
        cov2 = covs[k][np.ix_([i, j], [i, j])]
        for level, n_sd in enumerate(ellipse_sd):
            width, height, angle = _ellipse_geometry(cov2, n_sd)
            ax.add_patch(Ellipse((means[k, i], means[k, j]), width, height, angle=angle, fill=False,
                                 edgecolor=colours[k], linewidth=1.2, linestyle="-" if level == 0 else "--",
                                 label=f"component {k}, {n_sd:g} sd"))
    ax.scatter(means[:, i], means[:, j], marker="+", s=80, c="black", linewidths=1.5, zorder=4,
               label="component means")


def _draw_points(ax, X, i, j, labels, colours, sizes, alpha):
    for k, colour in enumerate(colours):
        rows = labels == k
        ax.scatter(X[rows, i], X[rows, j], s=sizes[rows], color=colour, marker=_MARKERS[k % len(_MARKERS)],
                   alpha=alpha, linewidths=0, label=f"component {k}")
    noise = labels == -1  # rows of a noise component (FiniteMixture(noise=True))
    if noise.any():
        ax.scatter(X[noise, i], X[noise, j], s=sizes[noise], color="0.4", marker="x", alpha=alpha, linewidths=1,
                   label="noise")


def _draw_strip(ax, x, labels, colours, sizes, alpha):
    """The rows along the x axis, in a band under the diagonal panel's histogram and curves, coloured
    and shaped by component (sized as given); a fixed vertical jitter keeps close rows apart."""
    top = ax.get_ylim()[1]
    jitter = np.random.default_rng(0).uniform(-1.0, 1.0, x.shape[0])
    y = -top * (0.08 + 0.04 * jitter)  # within [-0.12, -0.04] of the panel's height
    _draw_points(ax, np.column_stack([x, y]), 0, 1, labels, colours, sizes, alpha)
    ax.axhline(0.0, color="0.6", linewidth=0.8)
    ax.set_ylim(-0.15 * top, top)


def _draw_density_2d(ax, mixture, X, i, j, grid_size, levels, show_points, cache):
    key = (min(i, j), max(i, j))
    discrete = {c: _column_is_discrete(mixture.family_, c) for c in key}
    # The uniform noise has no marginal density over two of more columns (its region need not be a
    # box along them), and a mixture with noise scores no missing values: with other columns, the
    # sum of the components' weighted marginals is drawn (as on the diagonal), the noise left out.
    without_noise = mixture._fitted_noise() is not None and mixture.n_features_in_ > 2
    if key not in cache:
        a, b = key

        def density(values):
            if without_noise:
                return _weighted_component_marginals(mixture, [a, b], values).sum(axis=1)
            return np.exp(_marginal_log_density(mixture, [a, b], values))

        va, vb = _axis_values(X[:, a], discrete[a], grid_size), _axis_values(X[:, b], discrete[b], grid_size)
        ga, gb = np.meshgrid(va, vb, indexing="ij")
        dens = density(np.column_stack([ga.ravel(), gb.ravel()]))
        complete = np.isfinite(X[:, [a, b]]).all(axis=1)
        at_data = density(X[complete][:, [a, b]])
        cache[key] = va, vb, dens.reshape(ga.shape), at_data
    if without_noise:
        ax.text(0.97, 0.03, "noise not drawn", transform=ax.transAxes, ha="right", va="bottom", fontsize="x-small",
                color="0.4")
    va, vb, dens, at_data = cache[key]
    if (i, j) != key:
        va, vb, dens = vb, va, dens.T
    if show_points:
        ax.scatter(X[:, i], X[:, j], s=4, color="0.6", alpha=0.6, linewidths=0, label="data")
    # The contour through the (1 - p) quantile of the density at the data encloses about a share p
    # of the rows (a highest-density region); levels increasing, duplicates dropped.
    heights = np.unique(np.quantile(at_data, 1.0 - np.sort(levels)[::-1])) if at_data.size else []
    heights = [h for h in heights if dens.min() < h < dens.max()]
    if not heights:
        return
    if discrete[i] == discrete[j]:
        ax.contour(va, vb, dens.T, levels=heights, cmap="viridis", linewidths=1)
        return
    # One discrete and one continuous column: the density has no value between two whole numbers,
    # so a contour across them would be made up. Each whole number gets its slice instead: the
    # segments of the continuous axis where the density reaches each height (the same
    # highest-density regions, drawn per whole number; higher levels thicker, on top).
    from matplotlib import colormaps

    colours = colormaps["viridis"](np.linspace(0.0, 1.0, len(heights)))
    for level, (height, colour) in enumerate(zip(heights, colours)):
        if discrete[j]:  # whole numbers along y: horizontal segments
            inside = dens >= height  # (x grid, y integers)
            keep = inside.any(axis=0)
            ax.plot(va, np.where(inside, vb[None, :], np.nan)[:, keep], color=colour, linewidth=1.0 + 1.5 * level,
                    solid_capstyle="butt", label=f"density level {level}")
        else:
            inside = dens.T >= height  # (y grid, x integers)
            keep = inside.any(axis=0)
            ax.plot(np.where(inside, va[None, :], np.nan)[:, keep], vb, color=colour, linewidth=1.0 + 1.5 * level,
                    solid_capstyle="butt", label=f"density level {level}")


def _draw_diagonal(ax, mixture, X, i, colours, components, grid_size, name):
    x = X[:, i]
    x = x[np.isfinite(x)]
    discrete = _column_is_discrete(mixture.family_, i)
    if discrete:
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        edges = np.arange(np.floor(x.min()) - 0.5, np.ceil(x.max()) + 1.0) if x.size else 10
        ax.hist(x, bins=edges, density=True, color="0.8", edgecolor="0.6", label="data")
    else:
        ax.hist(x, bins="auto", density=True, color="0.8", edgecolor="0.6", label="data")
    grid = _axis_values(x, discrete, grid_size)
    mixture_label = "mixture"
    try:
        if mixture._fitted_noise() is not None:
            # the uniform noise has no marginal density along a column (its region need not be a box
            # along the columns): the components' weighted marginals, and their sum
            parts, mixture_label = _weighted_component_marginals(mixture, [i], grid[:, None]), "components (noise not drawn)"
            dens = parts.sum(axis=1)
        else:
            dens = np.exp(_marginal_log_density(mixture, [i], grid[:, None]))
            parts = mixture.predict_proba(_marginal_rows(mixture, [i], grid[:, None])) * dens[:, None]
    except ValueError:  # a family without marginal densities: the histogram alone
        dens = parts = None
    if dens is not None:
        style = dict(linestyle="none", marker="o", markersize=3) if discrete else {}
        if components:  # dashed, above the mixture's curve where they coincide
            for k, colour in enumerate(colours):
                ax.plot(grid, parts[:, k], color=colour, linewidth=1, zorder=3, label=f"component {k} (weighted)",
                        **(style if discrete else {"linestyle": "--"}))
        ax.plot(grid, dens, color="black", linewidth=1.5, label=mixture_label, **style)
    ax.text(0.03, 0.95, name, transform=ax.transAxes, ha="left", va="top", fontsize="small", fontweight="bold")
    ax.set_yticks([])


def _pairs(mixture, X, what, *, dimensions, fig, ax, ellipse_sd=(), max_marker_size=40.0, levels=(),
           grid_size=100, show_points=True):
    """The engine of plot_classification, plot_uncertainty and plot_density."""
    X, dims, names = _check_pairs_input(mixture, X, dimensions, f"plot_{what}")
    if fig is not None and ax is not None:
        raise ValueError("give fig (for a grid of panels) or ax (for one panel), not both.")
    if ax is not None and len(dims) > 2:
        raise ValueError(f"ax takes one panel: give one or two dimensions, not {len(dims)}.")
    m = len(dims)
    k = mixture.n_components
    colours = _component_colours(k)
    gaussian = None
    if ellipse_sd:
        from discrim.mixture._summary import gaussian_covariances

        gaussian = gaussian_covariances(mixture)
    proba = None
    if what != "density":
        proba = np.asarray(mixture.predict_proba(_model_rows(mixture, X)))
        labels = np.asarray(mixture.predict(_model_rows(mixture, X)))  # -1: the noise component, if any
        uncertainty = 1.0 - proba.max(axis=1)
        if what == "uncertainty":
            top = 1.0 - 1.0 / proba.shape[1] if proba.shape[1] > 1 else 1.0  # the largest possible uncertainty
            sizes = 2.0 + (max_marker_size - 2.0) * uncertainty / top
        else:
            sizes = np.full(X.shape[0], 12.0)
    if ax is not None:
        axes = np.array([[ax]], dtype=object)
        panels = [(0, 0, dims[0], dims[-1])]
    else:
        from discrim.plotting._mpl import pyplot

        side = min(3.0 if m > 1 else 5.0, 24.0 / m)
        if fig is None:
            fig = pyplot().figure(figsize=(max(side * m, 4.0), max(side * m, 3.5)))
        axes = fig.subplots(m, m, squeeze=False)
        panels = [(r, c, dims[c], dims[r]) for r in range(m) for c in range(m)]
    from matplotlib.ticker import MaxNLocator

    cache = {}
    for r, c, i, j in panels:
        panel = axes[r, c]
        if i == j:
            _draw_diagonal(panel, mixture, X, i, colours, what != "density", grid_size, names[i])
            panel.set_xlim(*_limits(X[:, i]))
            if m == 1 and what != "density":  # one dimension: the rows themselves, as a strip
                _draw_strip(panel, X[:, i], labels, colours, sizes, 0.7 if what == "classification" else 0.6)
            continue
        if what == "density":
            _draw_density_2d(panel, mixture, X, i, j, grid_size, levels, show_points, cache)
        else:
            _draw_points(panel, X, i, j, labels, colours, sizes, 0.7 if what == "classification" else 0.6)
            if gaussian is not None:
                _draw_ellipses(panel, gaussian, i, j, colours, ellipse_sd)
        panel.set_xlim(*_limits(X[:, i]))
        panel.set_ylim(*_limits(X[:, j]))
        for axis, column in ((panel.xaxis, i), (panel.yaxis, j)):
            if _column_is_discrete(mixture.family_, column):  # whole numbers: no ticks between them
                axis.set_major_locator(MaxNLocator(integer=True))
        if ax is not None or r == m - 1:
            panel.set_xlabel(names[i])
        if ax is not None or c == 0 or (c == 1 and r == 0):
            panel.set_ylabel(names[j])
    title = {"classification": "classification (most probable component)",
             "uncertainty": "uncertainty (1 - largest posterior: marker size)",
             # on two lines: one panel of a few inches cut the one line at both ends; one column has
             # no contours
             "density": "marginal mixture densities\n(contours enclose 25/50/75/95% of the rows)"
             if tuple(np.sort(levels)) == (0.25, 0.5, 0.75, 0.95) and m > 1 else "marginal mixture densities"}[what]
    if ax is not None:
        ax.set_title(title, fontsize="small")
    else:
        heading = fig.suptitle(f"{title}: {k} component{'s' if k != 1 else ''}", fontsize="medium")
        # the panels below the title (tight_layout leaves it out: it overlapped the first row from 6
        # dimensions on): its lines' height, with a line's leading, as a share of the figure's
        lines = heading.get_text().count("\n") + 1
        top = 1.0 - (lines + 0.8) * heading.get_fontsize() * 1.25 / 72 / fig.get_figheight()
        fig.tight_layout(rect=(0, 0, 1, top))
    if what != "density":
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], linestyle="none", marker=_MARKERS[q % len(_MARKERS)], color=colours[q],
                          label=f"component {q}") for q in range(k)]
        if (labels == -1).any():
            handles.append(Line2D([], [], linestyle="none", marker="x", color="0.4", label="noise"))
        target = axes[0, -1] if m > 1 or ax is not None else axes[0, 0]
        target.legend(handles=handles, loc="best", fontsize="x-small", ncol=1 + k // 8)
    return axes


def plot_classification(mixture: FiniteMixture, X: ArrayLike, *, dimensions: Sequence[int | str] | None = None,
                        ellipse_sd: Sequence[float] = (1.0, 2.0), fig: Figure | None = None,
                        ax: Axes | None = None) -> np.ndarray:
    """Pairs plot of the rows coloured by their most probable component, with component ellipses.

    mclust's ``plot(fit, what="classification")`` in any dimension: panel ``(r, c)`` of the grid
    shows column ``dimensions[c]`` (x) against ``dimensions[r]`` (y); each component's rows
    (by largest posterior, MAP) get its colour and marker, and a Gaussian mixture's components
    their means (``+``) and the ellipses of their 2-D marginal covariances, at ``ellipse_sd``
    standard deviations (the first solid, the others dashed). The diagonal panels show each
    column's histogram with the mixture's marginal density (black) and the weighted components
    ``pi_k f_k(x)`` (colours); for discrete columns (of a discrete family, or of a discrete
    part of a :class:`~discrim.distributions.Product`) these are probabilities at whole
    numbers, over a histogram with one bar per whole number and whole-number ticks. With one
    dimension the plot is that diagonal panel, with the rows drawn in a strip under it (a fixed
    vertical jitter), each in its component's colour and marker.

    Parameters
    ----------
    mixture : FiniteMixture
        Fitted.
    X : array-like of shape (n_samples, n_features)
        The rows to draw (usually the training data), with the mixture's columns.
    dimensions : sequence of int or str, default=None
        The columns to pair: indices, or names (of the DataFrame the mixture was fitted on, or
        else of a DataFrame X, which also label the axes); None: all of them.
    ellipse_sd : sequence of float, default=(1.0, 2.0)
        The ellipses drawn per component and panel, in standard deviations along each axis of
        the marginal covariance; empty: none. Only Gaussian families have them.
    fig : matplotlib.figure.Figure, default=None
        Figure to draw the grid in; a new one when None.
    ax : matplotlib.axes.Axes, default=None
        Draw one panel there instead of a grid: the pair ``dimensions[0]`` (x) and
        ``dimensions[1]`` (y), or the diagonal panel of one dimension.

    Returns
    -------
    axes : ndarray of matplotlib.axes.Axes of shape (m, m)
        ``m = len(dimensions)``; ``[[ax]]`` when ``ax`` is given.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import Gaussian
    >>> from discrim.mixture import FiniteMixture
    >>> from discrim.plotting import plot_classification
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(-3, 1, (100, 3)), rng.normal(3, 1, (100, 3))])
    >>> mixture = FiniteMixture(Gaussian(covariance_type="VVV"), 2, random_state=0).fit(X)
    >>> plot_classification(mixture, X).shape
    (3, 3)
    """
    return _pairs(mixture, X, "classification", dimensions=dimensions, fig=fig, ax=ax,
                  ellipse_sd=_check_sd(ellipse_sd))


def plot_uncertainty(mixture: FiniteMixture, X: ArrayLike, *, dimensions: Sequence[int | str] | None = None,
                     ellipse_sd: Sequence[float] = (1.0,), max_marker_size: float = 40.0, fig: Figure | None = None,
                     ax: Axes | None = None) -> np.ndarray:
    """Pairs plot of the classification uncertainty, ``1 - max_k P(k | x)``, as marker size.

    mclust's ``plot(fit, what="uncertainty")`` in any dimension: as
    :func:`plot_classification`, but each row's marker area grows with its uncertainty, from 2
    (certain) to ``max_marker_size`` (the largest possible uncertainty, ``1 - 1/K``), so the
    rows between components stand out. With one dimension the plot is the diagonal panel
    (histogram and densities) with the rows in a strip under it, in their component's colour and
    marker, their marker areas growing with the uncertainty in the same way.

    Parameters
    ----------
    mixture : FiniteMixture
        Fitted.
    X : array-like of shape (n_samples, n_features)
        The rows to draw, with the mixture's columns.
    dimensions : sequence of int or str, default=None
        The columns to pair; None: all of them.
    ellipse_sd : sequence of float, default=(1.0,)
        Ellipses per Gaussian component and panel, in standard deviations; empty: none.
    max_marker_size : float, default=40.0
        Marker area (points squared) of a row with the largest possible uncertainty.
    fig : matplotlib.figure.Figure, default=None
        Figure to draw the grid in; a new one when None.
    ax : matplotlib.axes.Axes, default=None
        Draw one panel there instead of a grid (one or two dimensions).

    Returns
    -------
    axes : ndarray of matplotlib.axes.Axes of shape (m, m)
        ``m = len(dimensions)``; ``[[ax]]`` when ``ax`` is given.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import Gaussian
    >>> from discrim.mixture import FiniteMixture
    >>> from discrim.plotting import plot_uncertainty
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(-1, 1, (100, 2)), rng.normal(1, 1, (100, 2))])
    >>> mixture = FiniteMixture(Gaussian(covariance_type="EEE"), 2, random_state=0).fit(X)
    >>> plot_uncertainty(mixture, X, dimensions=[1, 0]).shape
    (2, 2)
    """
    if isinstance(max_marker_size, bool) or not np.isfinite(max_marker_size) or max_marker_size <= 2:
        raise ValueError(f"max_marker_size must be a number above 2 (points squared); got {max_marker_size!r}.")
    return _pairs(mixture, X, "uncertainty", dimensions=dimensions, fig=fig, ax=ax,
                  ellipse_sd=_check_sd(ellipse_sd), max_marker_size=float(max_marker_size))


def plot_density(mixture: FiniteMixture, X: ArrayLike, *, dimensions: Sequence[int | str] | None = None,
                 levels: Sequence[float] = (0.25, 0.5, 0.75, 0.95), grid_size: int = 100, show_points: bool = True,
                 fig: Figure | None = None, ax: Axes | None = None) -> np.ndarray:
    """Pairs plot of the mixture's 2-D marginal densities as contours over the rows.

    mclust's ``plot(fit, what="density")`` in any dimension. Each panel's density is the
    mixture's marginal density of its two columns, ``sum_k pi_k f_k(x_i, x_j)``, computed by
    :meth:`FiniteMixture.score_samples` on rows whose other columns are missing: exact for
    every family that scores missing values (for Gaussians the marginals are Gaussian with the
    2x2 block of each covariance; for families of independent columns the product of the two
    columns' densities); a family that cannot (e.g. a full-scale StudentT) raises a
    ValueError unless the mixture has only the drawn columns. A mixture with a noise component
    and more than two columns draws the sum of its components' weighted marginals, without the
    noise (its uniform density over the rows' region has no marginal along the columns), and
    says "noise not drawn" in each panel. Contours are drawn at
    highest-density levels: the one for ``p`` is the ``1 - p`` quantile of the density at the
    rows, so it encloses about a share ``p`` of them. Discreteness is decided per column (for a
    :class:`~discrim.distributions.Product`, by the part that owns the column): discrete columns
    are evaluated at whole numbers. A panel of two discrete or two continuous columns draws
    contours; a panel of one discrete and one continuous column, whose density has no value
    between whole numbers, draws one slice per whole number instead: the segments of the
    continuous axis inside each highest-density region (the innermost thickest). The
    diagonal panels show each column's histogram and marginal density (probabilities at
    whole numbers for a discrete column).

    Parameters
    ----------
    mixture : FiniteMixture
        Fitted.
    X : array-like of shape (n_samples, n_features)
        The rows, with the mixture's columns (they set the range and the levels).
    dimensions : sequence of int or str, default=None
        The columns to pair; None: all of them.
    levels : sequence of float, default=(0.25, 0.5, 0.75, 0.95)
        Shares of the rows that the contours enclose, in (0, 1).
    grid_size : int, default=100
        Points per axis of each panel's evaluation grid (at least 10).
    show_points : bool, default=True
        Draw the rows, small and grey, under the contours.
    fig : matplotlib.figure.Figure, default=None
        Figure to draw the grid in; a new one when None.
    ax : matplotlib.axes.Axes, default=None
        Draw one panel there instead of a grid (one or two dimensions).

    Returns
    -------
    axes : ndarray of matplotlib.axes.Axes of shape (m, m)
        ``m = len(dimensions)``; ``[[ax]]`` when ``ax`` is given.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import Gaussian
    >>> from discrim.mixture import FiniteMixture
    >>> from discrim.plotting import plot_density
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(-3, 1, (100, 3)), rng.normal(3, 1, (100, 3))])
    >>> mixture = FiniteMixture(Gaussian(covariance_type="VII"), 2, random_state=0).fit(X)
    >>> plot_density(mixture, X, dimensions=[0, 2]).shape
    (2, 2)
    """
    from numbers import Integral

    levels_arr = np.asarray(levels, dtype=float).reshape(-1)
    if levels_arr.size == 0 or not np.all((levels_arr > 0) & (levels_arr < 1)):
        raise ValueError(f"levels must be shares of the rows in (0, 1); got {levels!r}.")
    if isinstance(grid_size, bool) or not isinstance(grid_size, Integral) or grid_size < 10:
        raise ValueError(f"grid_size must be an int >= 10; got {grid_size!r}.")
    return _pairs(mixture, X, "density", dimensions=dimensions, fig=fig, ax=ax, levels=levels_arr,
                  grid_size=int(grid_size), show_points=bool(show_points))
