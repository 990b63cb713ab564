"""Lazy matplotlib import with a clear error when the ``plot`` extra is missing."""


def pyplot():
    """Return ``matplotlib.pyplot``, or raise ImportError naming the extra to install."""
    try:
        import matplotlib

        if matplotlib.get_backend().lower() not in {"agg", "pdf", "svg", "ps", "cairo"}:
            import os

            if not os.environ.get("DISPLAY") and not os.environ.get("MPLBACKEND"):
                matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            "plotting needs matplotlib: install it with `pip install matplotlib` (discrim's plot extra)."
        ) from None
    return plt


def new_axes(ax=None, figsize=(6.0, 5.0)):
    """Return ``ax`` or a fresh Axes on a new figure."""
    if ax is not None:
        return ax
    # constrained layout: long tick labels (feature names) and titles stay inside the figure
    _, ax = pyplot().subplots(figsize=figsize, layout="constrained")
    return ax


def save_figure_atomic(fig, path, **savefig_kwargs):
    """Save ``fig`` to ``path`` through a temporary file, so a failure leaves no partial file.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    path : str or path-like
        The image format follows the suffix (png, pdf, svg, ...).
    **savefig_kwargs
        Passed to :meth:`matplotlib.figure.Figure.savefig`.
    """
    from pathlib import Path

    from discrim.utils._files import atomic_output

    with atomic_output(path) as tmp:
        fig.savefig(tmp, format=Path(path).suffix.lstrip(".") or "png", **savefig_kwargs)
