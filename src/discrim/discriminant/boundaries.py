"""Allocation regions of the ML rule for two univariate normal populations (equation 8.2)."""

import math
from typing import NamedTuple

import numpy as np


class NormalBoundaries(NamedTuple):
    """Result of :func:`normal_boundaries`.

    Attributes
    ----------
    points : ndarray of shape (n_points,)
        Sorted points where ``f_1(x) = f_2(x)`` (0, 1 or 2 of them); empty when the
        populations are identical, where the densities agree everywhere.
    region : list of tuple of (float, float)
        The set allocated to population 1, ``{x : f_1(x) > f_2(x)}``, as disjoint open
        intervals ``(lo, hi)`` in increasing order, with ``-inf``/``inf`` for unbounded ends.
        Empty when population 1 is never strictly more likely (identical populations).
    coefficients : tuple of (float, float, float)
        ``(A, B, C)`` of eq. (8.2): population 1 iff ``A x^2 + B x + C > 0``.
    identical : bool
        True when the two populations are the same distribution.
    """

    points: np.ndarray
    region: list
    coefficients: tuple
    identical: bool


def _check_param(name, value, positive):
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number; got {value!r}.") from None
    if not math.isfinite(v) or (positive and not v > 0):
        need = "a finite number > 0" if positive else "a finite number"
        raise ValueError(f"{name} must be {need}; got {value!r}.")
    return v


def normal_boundaries(mean1, std1, mean2, std2):
    """Boundary points and allocation region of the ML rule for ``N(mu_1, s_1^2)`` vs ``N(mu_2, s_2^2)``.

    The ML rule allocates ``x`` to population 1 iff ``f_1(x) > f_2(x)``, which by eq. (8.2)
    of seed 000 is ``A x^2 + B x + C > 0`` with ``A = 1/s_2^2 - 1/s_1^2``,
    ``B = 2 mu_1/s_1^2 - 2 mu_2/s_2^2`` and
    ``C = mu_2^2/s_2^2 - mu_1^2/s_1^2 + 2 log(s_2/s_1)``.

    Parameters
    ----------
    mean1, std1 : float
        Mean ``mu_1`` and standard deviation ``sigma_1 > 0`` of population 1.
    mean2, std2 : float
        Mean ``mu_2`` and standard deviation ``sigma_2 > 0`` of population 2.

    Returns
    -------
    result : NormalBoundaries
        ``points`` (where ``f_1 = f_2``), ``region`` (the set allocated to population 1 as a
        list of open intervals), ``coefficients`` ``(A, B, C)`` and ``identical``.

    Notes
    -----
    With equal variances ``A = 0`` and the rule is linear: one point ``-C/B`` and a half-line.
    With identical populations ``A = B = C = 0``: ``f_1 = f_2`` everywhere, no point is
    allocated to population 1 by the strict inequality, and ``identical`` is True. Otherwise
    ``A != 0`` and the roots are computed with the cancellation-free form of the quadratic
    formula. Boundary points themselves go to population 2, as in the seed ("allocate it to
    Pi_2 otherwise"); they have probability zero under either population.

    Examples
    --------
    >>> from discrim.discriminant import normal_boundaries
    >>> res = normal_boundaries(1, 1, 2, 2)
    >>> [round(float(p), 2) for p in res.points]
    [-0.85, 2.18]
    >>> normal_boundaries(1, 1, 2, 1).region
    [(-inf, 1.5)]
    """
    m1 = _check_param("mean1", mean1, positive=False)
    s1 = _check_param("std1", std1, positive=True)
    m2 = _check_param("mean2", mean2, positive=False)
    s2 = _check_param("std2", std2, positive=True)
    p1, p2 = 1.0 / s1**2, 1.0 / s2**2
    a = p2 - p1
    b = 2.0 * (m1 * p1 - m2 * p2)
    c = m2**2 * p2 - m1**2 * p1 + 2.0 * math.log(s2 / s1)
    coefficients = (a, b, c)
    inf = math.inf
    if s1 == s2:
        if m1 == m2:
            return NormalBoundaries(np.empty(0), [], coefficients, True)
        # Linear rule; with s1 == s2, -C/B is exactly the midpoint of the means.
        x0 = 0.5 * (m1 + m2)
        region = [(x0, inf)] if b > 0 else [(-inf, x0)]
        return NormalBoundaries(np.array([x0]), region, coefficients, False)
    disc = b * b - 4.0 * a * c
    if disc < 0:  # cannot happen for normal densities (f_1 > f_2 at the sharper mean); kept safe
        return NormalBoundaries(np.empty(0), [(-inf, inf)] if a > 0 else [], coefficients, False)
    q = -0.5 * (b + math.copysign(math.sqrt(disc), b))
    roots = sorted({q / a, c / q} if q != 0 else {0.0})
    lo, hi = roots[0], roots[-1]
    if a < 0:  # population 1 has the smaller variance: it wins between the roots
        region = [(lo, hi)] if lo < hi else []
    else:
        region = [(-inf, lo), (hi, inf)]
    return NormalBoundaries(np.array(roots), region, coefficients, False)
