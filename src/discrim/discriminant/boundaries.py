"""Allocation regions of the ML rule for two univariate normal populations (equation 8.2)."""

from __future__ import annotations

import math
import sys
from typing import NamedTuple

import numpy as np


class NormalBoundaries(NamedTuple):
    """Result of :func:`normal_boundaries`: where the two densities cross and the region of population 1.

    Parameters
    ----------
    points : ndarray of shape (n_points,)
        Sorted points where ``f_1(x) = f_2(x)`` (0, 1 or 2 of them); empty when the
        populations are identical, where the densities agree everywhere.
    region : list of tuple of (float, float)
        The set allocated to population 1, ``{x : f_1(x) > f_2(x)}``, as disjoint open
        intervals ``(lo, hi)`` in increasing order, with ``-inf``/``inf`` for unbounded ends.
        Empty when population 1 is never strictly more likely (identical populations).
    coefficients : tuple of (float, float, float)
        ``(A, B, C)`` of eq. (8.2): population 1 iff ``A x^2 + B x + C > 0``. Informative
        only: they are infinite or NaN where ``1 / std^2`` or ``mean^2 / std^2`` overflow, and
        far from the origin they lose the digits the points keep; ``points`` and ``region``
        are computed in standard units of the sharper population instead (see Notes).
    identical : bool
        True when the two populations are the same distribution.

    Examples
    --------
    >>> from discrim.discriminant import NormalBoundaries, normal_boundaries
    >>> res = normal_boundaries(0, 1, 2, 1)
    >>> isinstance(res, NormalBoundaries), res.region, res.identical
    (True, [(-inf, 1.0)], False)
    >>> points, region, coefficients, identical = res
    """

    points: np.ndarray
    region: list[tuple[float, float]]
    coefficients: tuple[float, float, float]
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


def normal_boundaries(mean1: float, std1: float, mean2: float, std2: float) -> "NormalBoundaries":
    """Boundary points and allocation region of the ML rule for ``N(mu_1, s_1^2)`` vs ``N(mu_2, s_2^2)``.

    The ML rule allocates ``x`` to population 1 iff ``f_1(x) > f_2(x)``, which, taking logarithms
    and collecting terms, is ``A x^2 + B x + C > 0`` with ``A = 1/s_2^2 - 1/s_1^2``,
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
    the roots are computed in the standard units ``u = (x - mu_a) / sigma_a`` of the population
    with the smaller standard deviation, relative to its mean, with a cancellation-free and
    overflow-free form of the quadratic formula: the boundaries keep their precision relative
    to the spread at means of 1e9 and for standard deviations from 1e-150 to 1e150 (expanding
    the quadratic in ``x`` lost 0.025 standard deviations at means of 1e8 and overflowed for tiny or huge
    standard deviations). A boundary beyond the float range (nearly equal standard deviations
    and means far apart) raises ValueError; boundaries closer than the rounding of the means
    collapse into one point. Boundary points themselves go to population 2, as in the textbook rule ("allocate it
    to Pi_2 otherwise"); they have probability zero under either population.

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
    coefficients = _seed_coefficients(m1, s1, m2, s2)
    inf = math.inf
    if s1 == s2:
        if m1 == m2:
            return NormalBoundaries(np.empty(0), [], coefficients, True)
        # Linear rule: the midpoint of the means, halved first so it cannot overflow.
        x0 = 0.5 * m1 + 0.5 * m2
        region = [(x0, inf)] if m1 > m2 else [(-inf, x0)]
        return NormalBoundaries(np.array([x0]), region, coefficients, False)
    first_sharper = s1 < s2
    ma, sa, mb, sb = (m1, s1, m2, s2) if first_sharper else (m2, s2, m1, s1)
    lo, hi = _sharper_roots(ma, sa, mb, sb)
    roots = sorted({lo, hi})
    if first_sharper:  # population 1 has the smaller variance: it wins between the roots
        region = [(lo, hi)] if lo < hi else []
    else:
        region = [(-inf, lo), (hi, inf)]
    return NormalBoundaries(np.array(roots), region, coefficients, False)


def _seed_coefficients(m1, s1, m2, s2):
    """``(A, B, C)`` of eq. (8.2); infinite or NaN where they overflow (tiny or huge sds)."""
    m1, s1, m2, s2 = (np.float64(v) for v in (m1, s1, m2, s2))  # inf, not OverflowError
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        p1, p2 = 1.0 / s1**2, 1.0 / s2**2
        a = p2 - p1
        b = 2.0 * (m1 * p1 - m2 * p2)
        c = m2**2 * p2 - m1**2 * p1 + 2.0 * (math.log(s2) - math.log(s1))
    return (float(a), float(b), float(c))


def _sharper_roots(ma, sa, mb, sb):
    """The two points where ``N(ma, sa^2)`` and ``N(mb, sb^2)`` have equal densities, ``sa < sb``.

    In the sharper population's standard units ``u = (x - ma) / sa``, with ``r = sa / sb < 1``
    and ``d = (ma - mb) / sb``,
    ``2 (log f_a - log f_b) = -(1 - r^2) u^2 + 2 r d u + d^2 - 2 log r``, which is positive
    between its roots ``u = (r d +- S) / q``, ``q = (1 - r)(1 + r)``,
    ``S = sqrt(d^2 + q L)``, ``L = -2 log r > 0``. The root away from zero is
    ``sign(d) (|r d| + S) / q`` and the other ``-sign(d) (d^2 + L) / (|r d| + S)`` (the
    product of the roots is ``-(d^2 + L) / q``), so nothing cancels; the sums are scaled by
    ``M = max(|d|, sqrt L)`` so that ``d^2`` cannot overflow. Working relative to ``ma`` keeps
    the precision of the boundaries relative to the spread, not to the size of the means.

    Returns
    -------
    lo, hi : float
        The two boundaries in ``x``, ``lo <= hi``.

    Raises
    ------
    ValueError
        If the means are so far apart in units of ``sb``, or ``sa`` and ``sb`` so close, that a
        boundary lies beyond the float range.
    """
    with np.errstate(over="ignore"):
        diff = np.float64(ma) - np.float64(mb)
        d = float(diff / np.float64(sb))
    if not math.isfinite(d):
        raise ValueError(
            f"the means differ by {float(diff):.3g}, {abs(float(diff)) / sb:.3g} standard "
            "deviations: the boundaries cannot be represented in floating point; rescale "
            "mean1, mean2, std1 and std2 (for example to standard units)."
        )
    r = sa / sb  # < 1; may underflow to 0, only used as a factor below
    one_minus_r = (sb - sa) / sb  # exact difference of close values (Sterbenz)
    q = one_minus_r * (1.0 + r)
    # -2 log r: for close sds from the exact difference (log sb - log sa rounds to 0 when
    # sb = sa (1 + eps), which left S = 0 and a division by zero), else from r itself, rounded by
    # one eps (log sb - log sa keeps only eps |log s| absolutely, 1e-13 at sds of 1e146); from
    # the two logs only where r underflows
    if one_minus_r < 0.5:
        big_l = -2.0 * math.log1p(-one_minus_r)
    elif r >= sys.float_info.min:
        big_l = -2.0 * math.log(r)
    else:
        big_l = 2.0 * (math.log(sb) - math.log(sa))
    scale = max(abs(d), math.sqrt(big_l))
    ds, ls = d / scale, big_l / (scale * scale)
    s_over = math.hypot(ds, math.sqrt(q * ls))  # S / M
    near = (ds * ds + ls) / (abs(r * ds) + s_over) * scale  # |near root| in u, from the product
    far = (abs(r * d) + s_over * scale) / q  # inf (not an exception) when beyond the range
    sign = 1.0 if d >= 0 else -1.0
    u = (sign * far, -sign * near)
    with np.errstate(over="ignore"):
        xs = [float(np.float64(ma) + np.float64(sa) * np.float64(v)) for v in u]
    if not all(math.isfinite(x) for x in xs):
        raise ValueError(
            "a boundary lies beyond the float range: std1 and std2 are too close relative to the "
            f"distance between mean1 and mean2 (std ratio {r!r}, means {abs(d):.3g} larger "
            "standard deviations apart); rescale the parameters or treat the variances as equal."
        )
    return min(xs), max(xs)
