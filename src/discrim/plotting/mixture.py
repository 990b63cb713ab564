"""Plots of finite mixtures: EM convergence, the fitted density over the data, and BIC against K."""

import numpy as np

from discrim.plotting._mpl import new_axes


def plot_convergence(mixture, ax=None):
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
    """
    from matplotlib.ticker import MaxNLocator
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(mixture, "lower_bounds_")
    ax = new_axes(ax)
    bounds = np.asarray(mixture.lower_bounds_, dtype=float)
    ax.plot(np.arange(bounds.shape[0]), bounds, marker="o", markersize=3, label="EM")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("iteration (0: initial parameters)")
    ax.set_ylabel("mean log-likelihood per row")
    status = "converged" if mixture.converged_ else "not converged"
    ax.set_title(f"EM convergence ({status} after {int(mixture.n_iter_)} iterations)")
    return ax


def plot_mixture_density(mixture, X, ax=None, *, bins="auto", grid_size=200):
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
        The data to draw, usually the training data.
    ax : matplotlib.axes.Axes, default=None
        Axes to draw on; a new figure when None.
    bins : int or str, default="auto"
        Histogram bins for one continuous column (numpy's ``bins`` argument).
    grid_size : int, default=200
        Points per axis of the evaluation grid of a continuous density.

    Returns
    -------
    ax : matplotlib.axes.Axes
    """
    from sklearn.utils.validation import check_array, check_is_fitted

    check_is_fitted(mixture, "weights_")
    X = check_array(X, dtype=np.float64)
    if X.shape[1] not in (1, 2):
        raise ValueError(
            f"plot_mixture_density draws one or two columns; X has {X.shape[1]}: select one or "
            "two columns (and fit the mixture on them)."
        )
    ax = new_axes(ax)
    draw = {
        (1, True): _density_1d,
        (1, False): _pmf_1d,
        (2, True): _density_2d,
        (2, False): _pmf_2d,
    }[(X.shape[1], not mixture.family.is_discrete)]
    draw(mixture, X, ax, bins=bins, grid_size=grid_size)
    return ax


def _density_1d(mixture, X, ax, bins, grid_size):
    x = X[:, 0]
    pad = 0.1 * (np.ptp(x) or 1.0)
    grid = np.linspace(x.min() - pad, x.max() + pad, grid_size)[:, None]
    dens = np.exp(mixture.score_samples(grid))
    # w_r f_r(x) = P(r | x) f(x): the weighted components from the public API alone.
    parts = mixture.predict_proba(grid) * dens[:, None]
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
    upper = mixture.family.support_upper()
    if upper is not None:
        hi = max(hi, int(upper))
    return np.arange(lo, hi + 1, dtype=np.float64)


def _pmf_1d(mixture, X, ax, bins, grid_size):
    from matplotlib.ticker import MaxNLocator

    x = X[:, 0]
    values = _support(x, mixture)
    pmf = np.exp(mixture.score_samples(values[:, None]))
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
    log_dens = mixture.score_samples(np.column_stack([g0.ravel(), g1.ravel()])).reshape(g0.shape)
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
    pmf = np.exp(mixture.score_samples(np.column_stack([g0.ravel(), g1.ravel()]))).reshape(g0.shape)
    image = ax.pcolormesh(g0, g1, pmf, shading="nearest", cmap="viridis")
    ax.figure.colorbar(image, ax=ax, label="fitted probability")
    points, counts = np.unique(X, axis=0, return_counts=True)
    ax.scatter(points[:, 0], points[:, 1], s=200 * counts / counts.max(), facecolors="none",
               edgecolors="red", label="data (size ~ frequency)")
    ax.legend(loc="best", fontsize="small")


def plot_selection(selection, ax=None):
    """Plot the model-choice criterion against the number of components, one line per family.

    This is the picture of mclust's ``plot(mclustBIC(...))``, with discrim's sign: lower is
    better (mclust draws the negative, where higher is better).

    Parameters
    ----------
    selection : MixtureSelection
        The result of :func:`discrim.mixture.select_mixture`.
    ax : matplotlib.axes.Axes, default=None
        Axes to draw on; a new figure when None.

    Returns
    -------
    ax : matplotlib.axes.Axes
    """
    from matplotlib.ticker import MaxNLocator

    ax = new_axes(ax)
    table, crit = selection.table, selection.criterion
    for label, rows in table.groupby("family", sort=False):
        ax.plot(rows["n_components"], rows[crit], marker="o", markersize=4, label=str(label))
    best = table.iloc[selection.best_index]
    ax.scatter([best["n_components"]], [best[crit]], s=150, facecolors="none", edgecolors="red", zorder=3,
               label=f"best: {best['family']}, K={best['n_components']}")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("number of components K")
    ax.set_ylabel(f"{crit.upper()} (lower is better)")
    ax.legend(loc="best", fontsize="small")
    return ax
