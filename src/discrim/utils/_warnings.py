"""Where a warning points: the user's line, however deep in discrim (and scikit-learn) it is raised."""

import sys

__all__ = ["user_stacklevel"]

# Packages whose frames a warning's stacklevel steps over to reach the user's line (see user_stacklevel):
# discrim, and scikit-learn with the joblib that runs its loops (a Pipeline, a search, cross_val_score).
_LIBRARY_PACKAGES = ("discrim", "sklearn", "joblib")


def user_stacklevel():
    """The ``stacklevel`` for a ``warnings.warn`` in the caller that points at the user's line.

    discrim's warnings are raised several calls deep (through the prediction methods, the dask
    wrapper, the report functions, scikit-learn's fit wrapper, or a Pipeline or search that calls
    the model), at depths that differ by path; counting the frames out of the packages of
    ``_LIBRARY_PACKAGES`` (discrim, scikit-learn, joblib) finds the line that called into them,
    whatever the path.

    Returns
    -------
    stacklevel : int
        1 is the caller itself; the count of its enclosing frames in those packages is added (up
        to the outermost frame where all are).
    """
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and str(frame.f_globals.get("__name__", "")).split(".")[0] in _LIBRARY_PACKAGES:
        frame = frame.f_back
        level += 1
    return level
