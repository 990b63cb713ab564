"""The 14 Gaussian covariance models of Celeux and Govaert (1995) and mclust: their M-steps and sizes.

Each component covariance is decomposed as ``Sigma_k = lambda_k D_k A_k D_k'`` with ``lambda_k``
its volume (``|Sigma_k|^(1/d)``), ``A_k`` a diagonal shape of determinant 1 and ``D_k`` an
orthogonal orientation. A model name gives, in that order, whether volume, shape and orientation
are Equal across components, Variable, or the Identity (spherical shape, axis-aligned
orientation). ``EEE`` is one covariance for all components, ``VVV`` one free covariance each.

The M-step is a function of the components' weights ``n_k`` and scatter matrices
``W_k = sum_i r_ik (x_i - mu_k)(x_i - mu_k)'``: it minimises

    F = sum_k n_k log |Sigma_k| + tr(W_k Sigma_k^-1)

over the model's covariances (minus twice the profile log-likelihood, up to constants). Closed
forms exist for all but VEI, VEE, VEV, EVE and VVE: VEI, VEE and VEV alternate between blocks of
parameters, each step closed form; EVE and VVE take Newton steps on the orientation (plane
rotations where Newton's step would not lower F). Every step decreases F; they start from the
current parameters of EM, so a few steps per EM iteration suffice near convergence.

``m_step="mclust"`` computes EVE and VVE as mclust 6 does instead (:func:`_mclust_common_orientation`):
its VVE M-step does not minimise F over the orientation, so EM from the same start ends elsewhere.
"""

import numpy as np
import scipy.linalg

from discrim.distributions._gaussian_linalg import identity

__all__ = ["COVARIANCE_MODELS", "M_STEP_METHODS", "SKLEARN_TYPES", "UNIVARIATE_TYPES", "covariance_mle",
           "n_covariance_parameters",
           "storage_of"]

#: Every model and how its covariances are stored (the layout of scikit-learn's four types).
COVARIANCE_MODELS = {
    "EII": "spherical", "VII": "spherical",
    "EEI": "diag", "VEI": "diag", "EVI": "diag", "VVI": "diag",
    "EEE": "tied",
    "VEE": "full", "EVE": "full", "VVE": "full", "EEV": "full", "VEV": "full", "EVV": "full", "VVV": "full",
}
#: scikit-learn's covariance types and the mclust model each is.
SKLEARN_TYPES = {"spherical": "VII", "diag": "VVI", "tied": "EEE", "full": "VVV"}
#: mclust's names of its two models of one feature (equal or varying variance), as the models
#: of several features that they are on one.
UNIVARIATE_TYPES = {"E": "EII", "V": "VII"}

# The alternating M-steps stop when F changes by less than this, relative (mclust's inner
# tolerance is sqrt(machine epsilon), 1.5e-8), or after this many steps.
_INNER_RTOL = 1e-10
_INNER_MAX_ITER = 100
_SCREEN_RTOL = 1e-4  # the cold EVE/VVE M-step's rough descents from each start (see _common_orientation)

#: How an M-step is computed: "exact" minimises F; "mclust" runs mclust 6's own algorithm for
#: EVE and VVE (:func:`_mclust_common_orientation`) and is "exact" for the other models.
M_STEP_METHODS = ("exact", "mclust")
# mclust's inner stopping rule for EVE and VVE: emControl()'s default tol[2], sqrt(machine
# epsilon). Its itmax[2] is .Machine$integer.max; this cap only guards against a loop that would
# not end.
_MCLUST_INNER_RTOL = float(np.sqrt(np.finfo(np.float64).eps))
_MCLUST_INNER_MAX_ITER = 100_000


def model_name(covariance_type):
    """mclust's name of a covariance type (an mclust name, or one of scikit-learn's four)."""
    return SKLEARN_TYPES.get(covariance_type, UNIVARIATE_TYPES.get(covariance_type, covariance_type))


def storage_of(covariance_type):
    """The storage layout ("full", "diag", "tied" or "spherical") of a covariance type."""
    return COVARIANCE_MODELS[model_name(covariance_type)]


def n_covariance_parameters(covariance_type, n_features, n_components):
    """Free covariance parameters of ``n_components`` components (mclust's ``nVarParams``).

    Parameters
    ----------
    covariance_type : str
    n_features : int
    n_components : int

    Returns
    -------
    n : int
    """
    d, k = n_features, n_components
    volume, shape, orientation = model_name(covariance_type)
    n = k if volume == "V" else 1
    if shape != "I":
        n += (k if shape == "V" else 1) * (d - 1)
    if orientation != "I":
        n += (k if orientation == "V" else 1) * d * (d - 1) // 2
    return n


def covariance_mle(covariance_type, weight, scatter, reg_covar=0.0, current=None, m_step="exact"):
    """The covariances of a model that maximise the likelihood given weights and scatter matrices.

    Parameters
    ----------
    covariance_type : str
        An mclust model name or one of scikit-learn's four types.
    weight : ndarray of shape (n_components,)
        ``n_k``, the (weighted) responsibility totals; components with ``n_k = 0`` get the
        identity (or a unit variance), a placeholder the caller replaces.
    scatter : ndarray of shape (n_components, n_features, n_features) or (n_components, n_features)
        ``W_k``, or only its diagonal for the models stored "diag" or "spherical".
    reg_covar : float, default=0.0
        Added to the diagonal of the scatter per unit weight (``W_k + reg_covar n_k I``): the
        regularised covariances keep the model's constraints, and the "full" model gets
        ``W_k / n_k + reg_covar I`` as scikit-learn does.
    current : ndarray or None, default=None
        The current covariances in the model's storage; the alternating M-steps start there.
    m_step : {"exact", "mclust"}, default="exact"
        "exact": the covariances that minimise F. "mclust": EVE and VVE by mclust 6's algorithm
        (:func:`_mclust_common_orientation`), which for VVE does not minimise F; the other
        models as "exact".

    Returns
    -------
    covariance : ndarray
        (K, d, d) for "full", (d, d) for "tied", (K, d) for "diag", (K,) for "spherical".
    """
    model = model_name(covariance_type)
    storage = COVARIANCE_MODELS[model]
    k = weight.shape[0]
    d = scatter.shape[-1]
    occupied = weight > 0
    n_k = weight[occupied]
    n = n_k.sum()
    if storage in ("full", "tied"):
        W = scatter[occupied]  # a copy (boolean index): its diagonal gets reg_covar n_k in place
        W.reshape(-1, d * d)[:, :: d + 1] += reg_covar * n_k[:, None]
        W = 0.5 * (W + np.swapaxes(W, 1, 2))
    else:
        W = scatter[occupied] + reg_covar * n_k[:, None]
    if model == "EEE":
        return W.sum(axis=0) / n
    start = None if current is None else _occupied(current, storage, occupied)
    # one component: every model with a free orientation is the full covariance W / n in closed
    # form, which mclust itself fits at G = 1 (mvnXXX), not its iterative EVE/VVE M-step
    if m_step == "mclust" and model in ("EVE", "VVE") and n_k.shape[0] > 1:
        cov = _mclust_common_orientation(W, n_k, start, equal_volume=model == "EVE")
    else:
        cov = _M_STEPS[model](W, n_k, start)
    if n_k.shape[0] == k:  # every component occupied: no placeholders to fill in
        return np.ascontiguousarray(cov, dtype=np.float64)
    placeholder = np.eye(d) if storage == "full" else (np.ones(d) if storage == "diag" else 1.0)
    out = np.empty((k, *np.shape(placeholder)))
    out[:] = placeholder
    out[occupied] = cov
    return out


def _occupied(current, storage, occupied):
    current = np.asarray(current, dtype=np.float64)
    return current if storage == "tied" else current[occupied]


def _geometric_mean(values, axis=-1):
    """``prod(values) ** (1/d)`` along an axis, through logs (no overflow)."""
    with np.errstate(divide="ignore"):
        # np.mean's own arithmetic (a sum, then a division by the count), without its wrapper
        return np.exp(np.add.reduce(np.log(values), axis=axis) / values.shape[axis])


def _eii(W, n_k, start):
    # the diagonal of each W_k is stored: lambda = sum_k tr(W_k) / (n d)
    return np.full(n_k.shape[0], W.sum() / (n_k.sum() * W.shape[1]))


def _vii(W, n_k, start):
    return W.sum(axis=1) / (n_k * W.shape[1])


def _vvi(W, n_k, start):
    return W / n_k[:, None]


def _eei(W, n_k, start):
    return np.broadcast_to(W.sum(axis=0) / n_k.sum(), W.shape).copy()


def _evi(W, n_k, start):
    # A_k = diag(W_k) / |diag(W_k)|^(1/d); lambda = sum_k |diag(W_k)|^(1/d) / n
    g = _geometric_mean(W)
    volume = g.sum() / n_k.sum()
    return W / g[:, None] * volume  # the shapes first: volume * W overflows at |x| ~ 1e80


def _vei(W, n_k, start):
    # lambda_k = tr(W_k A^-1) / (d n_k) and A = sum_k W_k / lambda_k, normalised, in turn
    d = W.shape[1]
    shape = np.ones(d) if start is None else start[0] / _geometric_mean(start[0])
    for _ in _alternations(lambda: np.sum(n_k * np.log(volume)) * d + np.sum(W / shape / volume[:, None])):
        volume = (W / shape).sum(axis=1) / (d * n_k)
        pooled = (W / volume[:, None]).sum(axis=0)
        shape = pooled / _geometric_mean(pooled)
    return volume[:, None] * shape


def _vvv(W, n_k, start):
    return W / n_k[:, None, None]


def _evv(W, n_k, start):
    # C_k = W_k / |W_k|^(1/d), lambda = sum_k |W_k|^(1/d) / n
    d = W.shape[1]
    g = np.exp(np.linalg.slogdet(W)[1] / d)
    return W / g[:, None, None] * (g.sum() / n_k.sum())


def _eev(W, n_k, start):
    # D_k: the eigenvectors of W_k; lambda A = sum_k Omega_k / n with Omega_k its eigenvalues
    values, vectors = _eigh_descending(W)
    pooled = values.sum(axis=0) / n_k.sum()
    return _compose(vectors, np.broadcast_to(pooled, values.shape))


def _vev(W, n_k, start):
    # D_k the eigenvectors of W_k (they do not depend on lambda_k or A); then, in turn,
    # lambda_k = tr(Omega_k A^-1) / (d n_k) and A = sum_k Omega_k / lambda_k, normalised
    d = W.shape[1]
    values, vectors = _eigh_descending(W)
    shape = np.ones(d) if start is None else _start_shape(start)
    for _ in _alternations(lambda: d * np.sum(n_k * np.log(volume)) + np.sum(values / shape / volume[:, None])):
        volume = (values / shape).sum(axis=1) / (d * n_k)
        pooled = (values / volume[:, None]).sum(axis=0)
        shape = pooled / _geometric_mean(pooled)
    return _compose(vectors, volume[:, None] * shape)


def _vee(W, n_k, start):
    # lambda_k = tr(W_k C^-1) / (d n_k) and C = sum_k W_k / lambda_k, normalised, in turn
    d = W.shape[1]
    C = np.eye(d) if start is None else start[0] / np.exp(np.linalg.slogdet(start[0])[1] / d)

    def objective():  # F at the step's volumes and the C they were computed from (its traces)
        return d * np.sum(n_k * np.log(volume)) + np.sum(traces / volume)

    for _ in _alternations(objective):
        traces = np.einsum("kij,ji->k", W, np.linalg.inv(C))  # tr(W_k C^-1)
        volume = traces / (d * n_k)
        pooled = (W / volume[:, None, None]).sum(axis=0)
        C = pooled / np.exp(np.linalg.slogdet(pooled)[1] / d)
        C = 0.5 * (C + C.T)
    return volume[:, None, None] * C


def _eve(W, n_k, start):
    return _common_orientation(W, n_k, start, equal_volume=True)


def _vve(W, n_k, start):
    return _common_orientation(W, n_k, start, equal_volume=False)


def _common_orientation(W, n_k, start, equal_volume):
    """EVE and VVE: one orientation D for all components, a shape A_k each.

    Given D, the diagonals ``B_k = diag(D' W_k D)`` give the rest in closed form:
    ``lambda_k A_k = B_k / n_k`` (VVE), or ``A_k = B_k / |B_k|^(1/d)`` and
    ``lambda = sum_k |B_k|^(1/d) / n`` (EVE). With them F is a function of D alone, the profile
    (:func:`_profile`): ``sum_k n_k log |diag(D' W_k D)|`` for VVE (Flury's common principal
    components), ``n d log sum_k |diag(D' W_k D)|^(1/d)`` for EVE, up to constants.

    Each step is a Newton step on the profile over the rotations of D (:func:`_newton_rotation`),
    or a half or a quarter of it, the first that lowers F; otherwise (far from the minimum, where
    the profile need not be convex in the rotation) a majorisation sweep
    (:func:`_majorisation_sweep`), which never raises F.
    Started from the current orientation, Newton's steps converge quadratically, a few per
    M-step. The profile can have several local minima over the rotations: without a current
    orientation (a cold M-step) the search starts from the eigenvectors of the pooled scatter
    and from those of every ``W_k``, and keeps the lowest profile (with the pooled start alone,
    about 1 in 200 random problems ended in a local minimum).
    """
    vectors = np.linalg.eigh((W if start is None else start).sum(axis=0))[1][:, ::-1]
    if start is None and W.shape[0] > 1 and W.shape[1] > 1:
        # descend from every start roughly, then from the best one only to the end
        starts = [vectors, *_eigh_descending(W)[1]]
        vectors = min((_descend_orientation(W, n_k, v, equal_volume, _SCREEN_RTOL) for v in starts),
                      key=lambda r: r[0])[1]
    _, D, B = _descend_orientation(W, n_k, vectors, equal_volume)
    return _compose(np.broadcast_to(D, W.shape), _scaled_shapes(B, n_k, equal_volume))


def _mclust_common_orientation(W, n_k, start, equal_volume):
    """EVE and VVE as mclust 6 computes them: its MM iterations on the common orientation D.

    mclust's Fortran (``mseve``/``meeve`` for EVE and ``msvve``/``mevve`` for VVE, in
    ``src/mclustaddson.f`` of mclust 6.0.0, ``src/mclust2.f`` from 6.1; ``mstepEVE``/``meEVE``
    and ``mstepVVE``/``meVVE`` call them from R) alternates two majorise-minimise (MM) updates of
    the orientation (algorithms MM 1 and MM 2 of Browne and McNicholas, 2014) with the shapes in
    closed form. Each inner iteration, with the unit-determinant shapes ``A_k`` of the iteration
    before and ``omega_k`` the largest eigenvalue of ``W_k``:

    1. MM 1: ``D' = P R'`` with ``P B R'`` the singular value decomposition of
       ``sum_k (A_k^-1 D' W_k - omega_k A_k^-1 D')``;
    2. MM 2: ``D = P R'`` from that of ``sum_k (W_k D A_k^-1 - max_j(1 / A_kj) W_k D)``;
    3. ``B_k = diag(D' W_k D)``; VVE: ``lambda_k A_k = B_k / n_k``; EVE: ``A_k = B_k / |B_k|^(1/d)``
       (``lambda = T / (n d)`` once the loop ends);
    4. the target ``T = sum_k sum_j B_kj / A_kj``; stop when ``|T - T_prev| / (1 + |T|)`` is at
       most ``emControl()$tol[2]`` (sqrt(machine epsilon)), so after two iterations at least.

    Both MM updates lower ``sum_k tr(D' W_k D A_k^-1)``. For EVE, whose volume is common, that is
    F over D given the shapes, and the iterations end where the exact M-step does. For VVE
    the orientation step ignores the volumes ``lambda_k``: F over D given the shapes is
    ``sum_k tr(D' W_k D A_k^-1) / lambda_k``, so mclust's iterations, even run to convergence,
    end at an orientation where F is higher than at its minimum (iris, hierarchical start, G = 3:
    -916.13 against -917.85), and EM from the same start follows another path.

    EM's first M-step (``start`` None) starts from ``D = I`` and ``A_k = I``, as ``meEVE`` and
    ``meVVE`` do; later M-steps from the current covariances, whose eigenvectors are D and whose
    normalised ``diag(D' Sigma_k D)`` are the ``A_k`` that mclust carries from one M-step to the
    next. (The eigenvectors are taken from the component whose eigenvalues lie furthest apart;
    the MM updates give the same covariances for any order and signs of D's columns.)

    References
    ----------
    Browne, R. P. and McNicholas, P. D. (2014). Estimating common principal components in high
    dimensions. Advances in Data Analysis and Classification, 8(2), 217-226.

    Parameters
    ----------
    W : ndarray of shape (n_components, n_features, n_features)
    n_k : ndarray of shape (n_components,)
    start : ndarray of shape (n_components, n_features, n_features) or None
    equal_volume : bool
        EVE (True) or VVE (False).

    Returns
    -------
    covariance : ndarray of shape (n_components, n_features, n_features)
    """
    k, d = W.shape[:2]
    if start is None:
        D, shape = np.eye(d), np.ones((k, d))
    else:
        D, shape = _orientation_and_shapes(start)
    omega = np.linalg.eigvalsh(W)[:, -1]
    previous = np.inf
    for _ in range(_MCLUST_INNER_MAX_ITER):
        # MM 1: A_k^-1 D' (rows of D' over the shapes), then D' from the polar factor of F
        scaled = D.T[None] / shape[:, :, None]
        P, _, Rt = np.linalg.svd((scaled @ W - omega[:, None, None] * scaled).sum(axis=0))
        D = (P @ Rt).T
        # MM 2, with the same shapes
        WD = W @ D
        largest = (1.0 / shape).max(axis=1)[:, None, None]
        P, _, Rt = np.linalg.svd((WD / shape[:, None, :] - largest * WD).sum(axis=0))
        D = P @ Rt
        B = np.einsum("ji,kjl,li->ki", D, W, D)
        if equal_volume:
            shape = B / _geometric_mean(B)[:, None]
        else:
            scaled_shape = B / n_k[:, None]
            volume = _geometric_mean(scaled_shape)
            shape = scaled_shape / volume[:, None]
        target = float((B / shape).sum())
        change = abs(target - previous) / (1.0 + abs(target))
        previous = target
        if change <= _MCLUST_INNER_RTOL:
            break
    values = (target / (n_k.sum() * d)) * shape if equal_volume else volume[:, None] * shape
    return _compose(np.broadcast_to(D, W.shape), values)


def _orientation_and_shapes(cov):
    """A common orientation D (d, d) of covariances (K, d, d) and their unit-determinant shapes (K, d).

    D: the eigenvectors of the component whose log-eigenvalues are furthest apart (its smallest
    gap the largest); the shapes: ``diag(D' Sigma_k D)`` over their geometric means.
    """
    values, vectors = np.linalg.eigh(cov)
    gaps = np.diff(np.log(np.maximum(values, np.finfo(np.float64).tiny)), axis=1)
    D = vectors[int(np.argmax(gaps.min(axis=1, initial=np.inf)))]
    B = np.einsum("ji,kjl,li->ki", D, cov, D)
    return D, B / _geometric_mean(B)[:, None]


def _descend_orientation(W, n_k, vectors, equal_volume, rtol=_INNER_RTOL):
    """Minimise the profile over the common orientation D from ``vectors`` (d, d) (see :func:`_common_orientation`).

    Returns
    -------
    profile : float
        F at the orientation found.
    D : ndarray of shape (n_features, n_features)
    B : ndarray of shape (n_components, n_features)
        The diagonals ``diag(D' W_k D)``.
    """
    k, d = W.shape[:2]
    # D and the rows of every D' W_k D in one (K d + d, d) buffer: a rotation of D's columns is
    # then the same rotation of the buffer's columns, one step for both.
    buffer = np.empty((k * d + d, d))
    M = buffer[: k * d].reshape(k, d, d)  # D' W_k D, kept current under the rotations
    D = buffer[k * d :]
    M[:] = np.einsum("ji,kjl,lm->kim", vectors, W, vectors)
    D[:] = vectors
    profile = [_profile(M.diagonal(axis1=1, axis2=2), n_k, equal_volume)]
    if d > 1:
        rounds = []  # the majorisation sweep's rounds of planes, made when first needed
        for _ in _alternations(lambda: profile[0], rtol):
            half = _newton_rotation(M, n_k, equal_volume)
            # a descent direction where the Hessian is positive definite: the step, or a part of it
            for fraction in _STEP_FRACTIONS if half is not None else ():
                R = _cayley(fraction * half)
                turned = np.swapaxes(R, 0, 1) @ M @ R
                value = _profile(turned.diagonal(axis1=1, axis2=2), n_k, equal_volume)
                if value < profile[0]:
                    M[:] = turned
                    D[:] = D @ R
                    profile[0] = value
                    break
            else:  # no Newton step, or none of its fractions lowered F
                if not rounds:
                    rounds = [_Round(I, J, d) for I, J in _round_robin(d) if I.size]
                _majorisation_sweep(buffer, M, n_k, equal_volume, rounds)
                profile[0] = _profile(M.diagonal(axis1=1, axis2=2), n_k, equal_volume)
    return profile[0], D.copy(), M.diagonal(axis1=1, axis2=2).copy()


def _scaled_shapes(B, n_k, equal_volume):
    """``lambda_k A_k`` (K, d) given the diagonals ``B_k = diag(D' W_k D)`` (K, d) of an orientation D."""
    if equal_volume:
        g = _geometric_mean(B)
        return B / g[:, None] * (g.sum() / n_k.sum())
    return B / n_k[:, None]


def _profile(B, n_k, equal_volume):
    """F at an orientation D with the best volumes and shapes for it, from its diagonals B (K, d)."""
    S = _scaled_shapes(B, n_k, equal_volume)
    return (n_k * np.log(S).sum(axis=1)).sum() + (B / S).sum()


def _majorisation_sweep(buffer, M, n_k, equal_volume, rounds):
    """One sweep of plane rotations of D's columns, in place; F never rises.

    Each round fixes the scaled shapes S at the current D (their best values there) and
    minimises ``sum_k tr(D' W_k D S_k^-1)`` exactly over the rotations of its disjoint planes, a
    majorisation of the profile: rotating columns i and j by an angle t changes it by
    ``B cos 2t + C sin 2t`` plus a constant.
    """
    k = M.shape[0]
    flat = M.reshape(k, -1)
    for r in rounds:  # disjoint planes: their rotations commute
        inv = 1.0 / _scaled_shapes(M.diagonal(axis1=1, axis2=2), n_k, equal_volume)
        m = flat[:, r.entries].reshape(k, 3, -1)  # M_ii, M_jj and M_ij of every pair
        half = r.pairs.size // 2
        # 1/S_j - 1/S_i of every pair: the negated gaps, and then -B and -C
        negative_gap = inv[:, r.pairs[half:]] - inv[:, r.pairs[:half]]
        minus_B = 0.5 * np.add.reduce(negative_gap * (m[:, 0] - m[:, 1]), axis=0)
        minus_C = np.add.reduce(negative_gap * m[:, 2], axis=0)
        t = 0.5 * np.arctan2(minus_C, minus_B)  # where B cos 2t + C sin 2t is smallest
        first, second = r.coefficients(t)
        _rotate(buffer, r.pairs, first, second)  # columns of D and of every D' W_k D
        _rotate(M, r.pairs, first, second, axis=1)  # then the rows of D' W_k D


def _cayley(half):
    """The rotation ``(I - half)^-1 (I + half)`` of a skew-symmetric ``half = Omega / 2``; ``exp(Omega)`` to second order."""
    eye = identity(half.shape[0])
    return np.linalg.solve(eye - half, eye + half)


def _newton_rotation(M, n_k, equal_volume):
    """The Newton step on the profile F over rotations ``D -> D R``, or None where F is not convex there.

    With ``R = cayley(Omega)`` for a skew-symmetric ``Omega = sum_p theta_p G_p`` (``G_p`` the
    generator of the rotation in plane p), ``B_kl(theta)`` is to second order
    ``M_ll + 2 (M G_p)_ll theta_p + theta' H_kl theta / 2`` with
    ``(H_kl)_pq = 2 (G_p e_l)' M_k (G_q e_l) + e_l' M_k (G_p G_q + G_q G_p) e_l``, and F is a
    function of B whose first and second derivatives are closed form (:func:`_profile`). The
    step solves ``H theta = -g`` for F's gradient g and Hessian H in theta.

    Parameters
    ----------
    M : ndarray of shape (n_components, n_features, n_features)
        ``D' W_k D`` at the current orientation.
    n_k : ndarray of shape (n_components,)
    equal_volume : bool

    Returns
    -------
    half : ndarray of shape (n_features, n_features) or None
        ``Omega / 2`` of the step (skew-symmetric): the rotation is ``_cayley(half)``.
    """
    k, d = M.shape[:2]
    basis = _rotation_basis(d)
    I, J = basis.I, basis.J
    P = I.size
    B = M.diagonal(axis1=1, axis2=2)
    # dF/dB_kl = c_k / B_kl: c_k = n_k (VVE), n g_k / sum_k g_k with g_k = |B_k|^(1/d) (EVE)
    if equal_volume:
        g = _geometric_mean(B)
        c = n_k.sum() * g / g.sum()
    else:
        c = n_k
    # dB_kl/dtheta_p / B_kl: 2 M_ij in row i and -2 M_ij in row j of the pair p = (i, j)
    every = np.arange(P)
    x = np.zeros((k, d, P))
    x[:, I, every] = 2.0 * M[:, I, J]
    x[:, J, every] = -x[:, I, every]
    x /= B[:, :, None]
    cx = c[:, None, None] * x
    gradient = cx.sum(axis=(0, 1))
    # sum_kl dF/dB_kl H_kl from N_l = sum_k w_kl M_k (w_kl = dF/dB_kl): G_p e_l is e_j (l = i),
    # -e_i (l = j) or 0, so both terms of H_kl are entries of N_l where the pairs p, q share l
    N = ((c[:, None] / B).T @ M.reshape(k, d * d)).reshape(d, d, d)  # N_l = sum_k w_kl M_k
    # hessian = 2 (N[i_p, j_p, j_q] ii - N[i_p, j_p, i_q] ij - N[j_p, i_p, j_q] ji + N[j_p, i_p, i_q] jj)
    # and, with rows = N[l, l, :] (row l of N_l), tr(rows (G_p G_q + G_q G_p)) = -(Y + Y')_pq with
    # Y_pq = <rows G_p, G_q> = rows[j_q, j_p] ii - rows[i_q, j_p] ij - rows[j_q, i_p] ji + rows[i_q, i_p] jj:
    # all eight terms from one gather of N, their signs and masks in basis.signs
    terms = N.reshape(-1)[basis.gather]
    terms *= basis.signs
    hessian = 2.0 * np.add.reduce(terms[:4], axis=0)
    Y = np.add.reduce(terms[4:], axis=0)
    hessian -= Y + Y.T
    # F's second derivatives in B: -c_k / B_kl^2 on the diagonal, and (EVE) the coupling through the volume
    hessian -= cx.reshape(-1, P).T @ x.reshape(-1, P)
    if equal_volume:
        y = x.sum(axis=1)  # (K, P)
        cy = c @ y
        hessian += ((y.T * c) @ y - np.outer(cy, cy) / n_k.sum()) / d
    try:
        factor = np.linalg.cholesky(hessian)  # positive definite: the step goes down
    except np.linalg.LinAlgError:
        return None
    step, info = _POTRS(factor, gradient, lower=1)  # H^-1 g from the Cholesky factor
    if info != 0:
        return None
    return ((-0.5 * step) @ basis.G.reshape(P, d * d)).reshape(d, d)


_BASES = {}
_POTRS = scipy.linalg.lapack.dpotrs
# Fractions of the Newton step tried, in turn, before a majorisation sweep.
_STEP_FRACTIONS = (1.0, 0.5, 0.25)


class _RotationBasis:
    """The pairs of columns of d and their rotations' generators, for :func:`_newton_rotation`.

    Attributes
    ----------
    I, J : ndarray of int of shape (P,)
        The pairs ``p = (I[p], J[p])``, I < J, P = d (d - 1) / 2.
    G : ndarray of shape (P, d, d)
        ``G_p = e_j e_i' - e_i e_j'``: ``D (I + t G_p)`` turns column i towards column j, as
        :func:`_rotate` does.
    gather : ndarray of int of shape (8, P, P)
        Flat indices into ``N`` (d, d, d) of the Hessian's eight terms in :func:`_newton_rotation`.
    signs : ndarray of shape (8, P, P)
        Their signs times the masks: ``ii, -ij, -ji, jj`` twice, with ``ii`` 1.0 where pair p's
        first index (i) is pair q's first, ``ij`` where it is q's second (j), and so on; else 0.
    """

    def __init__(self, d):
        self.I, self.J = np.triu_indices(d, 1)
        P = self.I.size
        self.G = np.zeros((P, d, d))
        self.G[np.arange(P), self.J, self.I] = 1.0
        self.G[np.arange(P), self.I, self.J] = -1.0
        first, second = self.I[:, None], self.J[:, None]
        ii, ij = (first == self.I).astype(float), (first == self.J).astype(float)
        ji, jj = (second == self.I).astype(float), (second == self.J).astype(float)
        # flat indices into N (d, d, d) of the eight terms of the Hessian (see _newton_rotation)
        # and their signs times the masks
        Ip, Jp, Iq, Jq = self.I[:, None], self.J[:, None], self.I[None, :], self.J[None, :]

        def flat(a, b, c):
            return np.broadcast_to((a * d + b) * d + c, (P, P))

        self.gather = np.stack([flat(Ip, Jp, Jq), flat(Ip, Jp, Iq), flat(Jp, Ip, Jq), flat(Jp, Ip, Iq),
                                flat(Jq, Jq, Jp), flat(Iq, Iq, Jp), flat(Jq, Jq, Ip), flat(Iq, Iq, Ip)])
        masks = np.stack([ii, -ij, -ji, jj])
        self.signs = np.concatenate([masks, masks])


def _rotation_basis(d):
    """The :class:`_RotationBasis` of d columns, made once per d."""
    if d not in _BASES:
        _BASES[d] = _RotationBasis(d)
    return _BASES[d]


class _Round:
    """One round of disjoint column pairs (I[m], J[m]) of a d x d matrix, as indices for one gather each."""

    def __init__(self, I, J, d):
        self.pairs = np.concatenate([I, J])
        self.entries = np.concatenate([I * d + I, J * d + J, I * d + J])
        self._coefficients = np.empty((2, 2, I.size))

    def coefficients(self, t):
        """``[c, -s]`` and ``[s, c]`` (each (2, n_pairs)) of the angles t, for :func:`_rotate`."""
        first, second = self._coefficients
        np.cos(t, out=first[0])
        np.sin(t, out=second[0])
        np.negative(second[0], out=first[1])
        second[1] = first[0]
        return first, second


def _rotate(A, pairs, first, second, axis=-1):
    """Rotate the index pairs (I[m], J[m]) of one axis of A in place, ``pairs`` = [I, J].

    Column (or, with ``axis=1`` of a stack, row) I[m] becomes ``c_m a_i + s_m a_j`` and J[m]
    ``c_m a_j - s_m a_i``, with ``first = [c, -s]`` and ``second = [s, c]`` of shape (2, n_pairs).
    """
    if axis == -1:
        a = A[..., pairs].reshape(*A.shape[:-1], 2, -1)
        A[..., pairs] = (a[..., :1, :] * first + a[..., 1:, :] * second).reshape(*A.shape[:-1], -1)
    else:  # the rows of a (K, d, d) stack: contiguous rows gathered
        k, _, d = A.shape
        a = A[:, pairs].reshape(k, 2, -1, d)
        A[:, pairs] = (a[:, :1] * first[:, :, None] + a[:, 1:] * second[:, :, None]).reshape(k, -1, d)


def _round_robin(d):
    """The d (d - 1) / 2 pairs of columns as d - 1 rounds of disjoint pairs (the circle method).

    Returns
    -------
    rounds : list of (ndarray of int, ndarray of int)
    """
    players = list(range(d)) + ([-1] if d % 2 else [])  # -1: a bye
    n = len(players)
    rounds = []
    for _ in range(n - 1):
        pairs = [(players[k], players[n - 1 - k]) for k in range(n // 2)]
        pairs = [(min(a, b), max(a, b)) for a, b in pairs if a >= 0 and b >= 0]
        rounds.append((np.array([a for a, _ in pairs], dtype=np.intp), np.array([b for _, b in pairs], dtype=np.intp)))
        players = [players[0], players[-1], *players[1:-1]]
    return rounds


def _alternations(objective, rtol=_INNER_RTOL):
    """Yield until ``objective()`` (evaluated after each step) stops decreasing by more than ``rtol``, relative."""
    yield 0
    previous = objective()
    for step in range(1, _INNER_MAX_ITER):
        yield step
        value = objective()
        if abs(previous - value) <= rtol * max(1.0, abs(value)):
            return
        previous = value


def _eigh_descending(W):
    """Eigenvalues (K, d) and eigenvectors (K, d, d) of every W_k, largest first."""
    values, vectors = np.linalg.eigh(W)
    return values[:, ::-1], vectors[:, :, ::-1]


def _start_shape(start):
    # the shape of the current covariances (their eigenvalues, largest first, over the volume)
    values = np.linalg.eigvalsh(start)[:, ::-1]
    shape = values / _geometric_mean(values)[:, None]
    return shape.mean(axis=0) / _geometric_mean(shape.mean(axis=0))


def _compose(vectors, values):
    """``D_k diag(values_k) D_k'`` for every k: (K, d, d)."""
    cov = np.einsum("kij,kj,klj->kil", vectors, values, vectors)
    return 0.5 * (cov + np.swapaxes(cov, 1, 2))


_M_STEPS = {
    "EII": _eii, "VII": _vii,
    "EEI": _eei, "VEI": _vei, "EVI": _evi, "VVI": _vvi,
    "VEE": _vee, "EVE": _eve, "VVE": _vve, "EEV": _eev, "VEV": _vev, "EVV": _evv, "VVV": _vvv,
}
