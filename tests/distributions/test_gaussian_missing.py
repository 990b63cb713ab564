"""Rows conditioned on their observed entries (full and tied Gaussians), against the textbook formulas."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import multivariate_normal

from discrim.distributions import Gaussian
from discrim.distributions._gaussian_missing import BufferPool, ConditionedRows, MissingPatterns, pattern_inverses
from discrim.mixture import FiniteMixture
from discrim.mixture._em import RowBlocks, run_em


def _problem(seed, n, d, k, tied):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(1 if tied else k, d, d))
    cov = A @ A.transpose(0, 2, 1) + 0.5 * np.eye(d)
    mean = rng.normal(size=(k, d)) * 3
    X = rng.normal(size=(n, d)) * 2
    mask = rng.random((n, d)) < rng.uniform(0.2, 0.9)
    mask[0], mask[-1] = True, False  # a complete row and a row with nothing observed
    precision = np.linalg.inv(cov)
    rows = ConditionedRows(np.where(mask, X, np.nan), MissingPatterns(mask), mask, mean, precision,
                           np.linalg.slogdet(cov)[1])
    return rng, X, mask, mean, np.broadcast_to(cov, (k, d, d)), rows


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 40), d=st.integers(1, 6), k=st.integers(1, 3),
       tied=st.booleans())
def test_conditioning_matches_the_marginal_and_conditional_normal(seed, n, d, k, tied):
    rng, X, mask, mean, cov, rows = _problem(seed, n, d, k, tied)
    log_prob, completed = rows.log_prob, rows.completed
    wr_t = rng.random((k, n))
    scatter = np.zeros((k, d, d))
    for i in range(n):
        o, m = mask[i], ~mask[i]
        for j in range(k):
            S, mu = cov[j], mean[j]
            expected = multivariate_normal(mu[o], S[np.ix_(o, o)]).logpdf(X[i, o]) if o.any() else 0.0
            np.testing.assert_allclose(log_prob[i, j], expected, rtol=1e-9, atol=1e-9)
            gain = np.linalg.solve(S[np.ix_(o, o)], S[np.ix_(o, m)]).T if o.any() else np.zeros((m.sum(), 0))
            want = X[i].copy()
            want[m] = mu[m] + gain @ (X[i, o] - mu[o])
            np.testing.assert_allclose(completed[j, i], want, rtol=1e-9, atol=1e-9)
            scatter[j][np.ix_(m, m)] += wr_t[j, i] * (S[np.ix_(m, m)] - gain @ S[np.ix_(o, m)])
    np.testing.assert_allclose(rows.conditional_scatter(wr_t), scatter, rtol=1e-9, atol=1e-9)


def test_draws_have_the_conditional_mean_and_covariance():
    rng, X, mask, mean, cov, _ = _problem(3, 2, 3, 2, False)
    row = np.array([[0.5, np.nan, np.nan]])
    observed = np.array([[True, False, False]])
    many = np.repeat(row, 40_000, axis=0)
    rows = ConditionedRows(many, MissingPatterns(np.repeat(observed, 40_000, axis=0)),
                           np.repeat(observed, 40_000, axis=0), mean, np.linalg.inv(cov), np.linalg.slogdet(cov)[1])
    draws = rows.draw(np.ones(40_000, dtype=int), np.random.default_rng(0))
    S, mu = cov[1], mean[1]
    gain = S[1:, :1] / S[0, 0]
    np.testing.assert_array_equal(draws[:, 0], 0.5)
    np.testing.assert_allclose(draws[:, 1:].mean(axis=0), mu[1:] + gain[:, 0] * (0.5 - mu[0]), atol=0.05)
    np.testing.assert_allclose(np.cov(draws[:, 1:].T), S[1:, 1:] - gain @ S[:1, 1:], atol=0.05 * S.max())


def test_patterns_group_rows_by_their_missing_set():
    mask = np.array([[1, 0, 1], [1, 1, 1], [0, 0, 1], [1, 0, 1], [0, 1, 0]], dtype=bool)
    patterns = MissingPatterns(mask)
    np.testing.assert_array_equal(patterns.n_observed, [2, 3, 1, 2, 1])
    seen = {}
    for rows, missing, pattern in patterns.groups:
        for r, p in zip(rows, pattern):
            seen[int(r)] = tuple(missing[p])
    assert seen == {0: (1,), 2: (0, 1), 3: (1,), 4: (0, 2)}
    # laid out complete rows first, then by count and pattern: a pattern's rows side by side
    np.testing.assert_array_equal(patterns.order, np.concatenate([[1]] + [rows for rows, _, _ in patterns.groups]))
    for _, _, pattern in patterns.groups:
        assert np.all(np.diff(pattern) >= 0)


def test_patterns_of_wide_rows_are_exact():
    # more than 64 features: the rows' keys are byte strings instead of one integer
    rng = np.random.default_rng(0)
    mask = rng.random((300, 70)) < 0.97
    mask[150:] = mask[:150]  # repeated patterns
    for rows, missing, pattern in MissingPatterns(mask).groups:
        for r, p in zip(rows, pattern):
            np.testing.assert_array_equal(np.flatnonzero(~mask[r]), missing[p])
        assert len({tuple(m) for m in missing}) == missing.shape[0]


@pytest.mark.parametrize("d", [10, 60, 70])  # keys of 2 bytes (a table), 8 bytes (a number), 9 (byte strings)
def test_a_fortran_ordered_mask_groups_as_its_c_ordered_copy(d):
    # pandas often hands over Fortran-ordered arrays; 60 features once failed deep in numpy
    rng = np.random.default_rng(0)
    mask = rng.random((200, d)) < 0.7
    c_ordered, f_ordered = MissingPatterns(mask), MissingPatterns(np.asfortranarray(mask))
    np.testing.assert_array_equal(f_ordered.code, c_ordered.code)
    for a, b in zip(f_ordered.groups, c_ordered.groups):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    X = np.where(mask, rng.normal(size=mask.shape), np.nan)
    model = FiniteMixture(Gaussian(), 2, max_iter=3, random_state=0).fit(np.asfortranarray(X))
    np.testing.assert_allclose(model.score_samples(np.asfortranarray(X)),
                               FiniteMixture(Gaussian(), 2, max_iter=3, random_state=0).fit(X).score_samples(X))


def _per_pattern_reference(X, mask, mean, cov, wr_t):
    """log-densities, conditional means and the conditional scatter, one missingness pattern at a time."""
    n, d = X.shape
    k = mean.shape[0]
    log_prob, completed = np.zeros((n, k)), np.repeat(X[None], k, axis=0)
    scatter = np.zeros((k, d, d))
    patterns, inverse = np.unique(mask, axis=0, return_inverse=True)
    for p, o in enumerate(patterns):
        rows, m = np.flatnonzero(inverse.reshape(-1) == p), ~o
        for j in range(k):
            S, mu = cov[j], mean[j]
            if not o.any():
                completed[j][np.ix_(rows, m)] = mu
                scatter[j][np.ix_(m, m)] += wr_t[j, rows].sum() * S
                continue
            log_prob[rows, j] = multivariate_normal(mu[o], S[np.ix_(o, o)]).logpdf(X[np.ix_(rows, o)])
            gain = np.linalg.solve(S[np.ix_(o, o)], S[np.ix_(o, m)]).T  # Sigma_mo Sigma_oo^-1
            completed[j][np.ix_(rows, m)] = mu[m] + (X[np.ix_(rows, o)] - mu[o]) @ gain.T
            scatter[j][np.ix_(m, m)] += wr_t[j, rows].sum() * (S[np.ix_(m, m)] - gain @ S[np.ix_(o, m)])
    return log_prob, completed, scatter


@pytest.mark.parametrize("d, tied", [(5, False), (5, True), (12, False), (20, False)])
def test_batched_conditioning_equals_a_per_pattern_reference(d, tied):
    # many rows and patterns: every group of missing counts, rows sharing patterns, a row with
    # nothing observed; 20 features take the sorted keys instead of the lookup table
    rng = np.random.default_rng(d)
    k, n = 3, 3000
    A = rng.normal(size=(1 if tied else k, d, d))
    cov = np.broadcast_to(A @ A.transpose(0, 2, 1) / d + 0.5 * np.eye(d), (k, d, d))
    mean = rng.normal(size=(k, d)) * 2
    X = rng.normal(size=(n, d)) * 1.5
    mask = rng.random((n, d)) > rng.uniform(0.05, 0.6, size=(n, 1))
    mask[0], mask[1] = True, False
    wr_t = rng.random((k, n))
    precision = np.linalg.inv(cov[:1] if tied else cov)
    log_det = np.linalg.slogdet(cov[:1] if tied else cov)[1]
    rows = ConditionedRows(np.where(mask, X, np.nan), MissingPatterns(mask), mask, mean, precision, log_det)
    log_prob, completed, scatter = _per_pattern_reference(X, mask, mean, cov, wr_t)
    np.testing.assert_allclose(rows.log_prob, log_prob, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(rows.completed, completed, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(rows.conditional_scatter(wr_t), scatter, rtol=1e-10, atol=1e-10)


def test_pattern_inverses_are_the_inverse_and_log_determinant_of_each_block():
    rng = np.random.default_rng(7)
    A = rng.normal(size=(2, 6, 6))
    precision = A @ A.transpose(0, 2, 1) + 0.1 * np.eye(6)
    patterns = np.array([[0, 2, 5], [1, 3, 4], [0, 1, 2]])
    inverse, log_det = pattern_inverses(precision, patterns)
    for p, m in enumerate(patterns):
        for j in range(2):
            block = precision[j][np.ix_(m, m)]
            np.testing.assert_allclose(inverse[:, :, j, p], np.linalg.inv(block), rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(log_det[j, p], np.linalg.slogdet(block)[1], rtol=1e-12)


def _missing_sets(patterns):
    """{row: its missing features} of a MissingPatterns."""
    return {int(r): tuple(missing[p]) for rows, missing, pattern in patterns.groups for r, p in zip(rows, pattern)}


def test_blocks_of_one_table_group_their_rows_as_each_block_alone_and_share_the_pattern_lists():
    rng = np.random.default_rng(0)
    mask = rng.random((50, 4)) < 0.7
    mask[:5] = True  # a block may have complete rows only, or few counts of missing features
    slices = [slice(0, 5), slice(5, 20), slice(20, 50)]
    blocks = MissingPatterns.of_blocks(mask, slices)
    for sl, block in zip(slices, blocks):
        alone = MissingPatterns(mask[sl])
        np.testing.assert_array_equal(block.n_observed, alone.n_observed)
        assert _missing_sets(block) == _missing_sets(alone)
        want = {(r, j) for r, m in _missing_sets(alone).items() for j in m}
        n = sl.stop - sl.start  # positions in the rows transposed in the block's order, (features, rows)
        places = [divmod(int(at), n) for positions in block.positions for at in positions.ravel()]
        got = {(int(block.order[place]), feature) for feature, place in places}
        assert got == want
        if block.order is not None:
            np.testing.assert_array_equal(np.sort(block.order), np.arange(n))
            np.testing.assert_array_equal(block.order[block.inverse], np.arange(n))
    # every block lists the same patterns for a count of missing features: the inverses are shared
    lists = [{m.shape[1]: m.tobytes() for _, m, _ in block.groups} for block in blocks[1:]]
    for c in set(lists[0]) & set(lists[1]):
        assert lists[0][c] == lists[1][c]
    assert blocks[0].groups == []


def test_blocks_of_one_table_hold_one_copy_of_the_table_s_scatter_positions():
    """A pattern per row (30 features, 20 % missing) in 20 blocks: every block lists all the table's
    patterns of a count, so positions built per block held blocks x rows entries (4.3 GB at 40,000
    rows of 50 features); one copy per table keeps them linear in the rows."""
    rng = np.random.default_rng(1)
    mask = rng.random((2000, 30)) > 0.2
    blocks = MissingPatterns.of_blocks(mask, [slice(i, i + 100) for i in range(0, 2000, 100)])
    by_count = {}
    for block in blocks:
        for (_, missing, _), where in zip(block.groups, block.scatter_positions(3)):
            assert by_count.setdefault(missing.shape[1], where) is where
            assert where.shape == (missing.shape[1], missing.shape[1], 3, missing.shape[0])
    alone = MissingPatterns.of_blocks(mask, [slice(0, 2000)])[0].scatter_positions(3)
    assert sum(where.nbytes for where in by_count.values()) == sum(where.nbytes for where in alone)


def test_completed_rows_keep_the_observed_entries_exactly():
    rng, X, mask, mean, cov, rows = _problem(11, 30, 4, 2, False)
    completed, draws = rows.completed, rows.draw(np.zeros(30, dtype=int), rng)
    for out in (completed[0], completed[1], draws):
        np.testing.assert_array_equal(out[mask], X[mask])


def test_a_pool_hands_back_the_smallest_free_array_that_holds_the_shape():
    pool = BufferPool()
    big, small = pool.take((3, 40, 5)), pool.take((3, 10, 5))
    pool.give(big)
    pool.give(small)
    again = pool.take((2, 10, 5))
    assert again.shape == (2, 10, 5) and again.flags.c_contiguous
    assert np.shares_memory(again, small) and not np.shares_memory(again, big)
    assert np.shares_memory(pool.take((3, 40, 5)), big)
    assert not np.shares_memory(pool.take((3, 40, 5)), big)  # taken: never handed out twice


def _em_block(seed, tied=False):
    """A full (or tied) Gaussian, rows with missing entries and the parameters of one E-step."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, 4)) @ rng.normal(size=(4, 4))
    mask = rng.random(X.shape) < 0.6
    mask[:3] = False  # rows with nothing observed
    family = Gaussian("tied" if tied else "full")
    cov = np.cov(X.T) + 0.1 * np.eye(4)
    covariance = cov if tied else np.stack([cov, 2 * cov])
    params = family.make_params({"mean": rng.normal(size=(2, 4)), "covariance": covariance}, 2, 4)
    return family, np.where(mask, X, 0.0), mask, params, rng.dirichlet(np.ones(2), size=120)


@pytest.mark.parametrize("tied", [False, True])
def test_the_blocks_data_of_a_fit_give_the_densities_and_statistics_of_the_rows_alone(tied):
    # one code path: a fit's block data (patterns from the whole mask's table, the E-step's
    # conditioning handed to the M-step, arrays from the pool) and the rows alone give the same numbers
    family, X, mask, params, resp = _em_block(5, tied)
    slices = [slice(0, 50), slice(50, 120)]
    for sl, data in zip(slices, family.block_rows(mask, None, slices)):
        for _ in range(2):  # the pool's arrays are reused by the second pass
            log_prob = family.log_prob(X[sl], params, mask=mask[sl], rows=data)
            stats = family.suff_stats(X[sl], resp[sl], mask=mask[sl], rows=data, params=params)
            np.testing.assert_array_equal(log_prob, family.log_prob(X[sl], params, mask=mask[sl]))
            alone = family.suff_stats(X[sl], resp[sl], mask=mask[sl], params=params)
            for field in ("weight", "mean"):
                np.testing.assert_array_equal(getattr(stats, field), getattr(alone, field))
            # the conditional scatter sums the same inverses over the fit's table or the block's
            # own (a product over more patterns, most of weight 0): equal to rounding
            np.testing.assert_allclose(stats.scatter, alone.scatter, rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("tied", [False, True])
def test_the_conditional_scatter_is_the_same_from_the_dense_table_and_from_the_inverses(tied, monkeypatch):
    # small tables embed every pattern's inverse in a d x d matrix; large ones scatter each inverse
    import discrim.distributions._gaussian_missing as missing_module

    family, X, mask, params, resp = _em_block(7, tied)
    # soft responsibilities, and labelled rows weighing under one component only (the scatter's
    # shortcut for zero weights)
    weights = [resp, np.eye(2)[np.arange(120) % 2]]
    dense = [family.suff_stats(X, r, mask=mask, params=params).scatter for r in weights]
    monkeypatch.setattr(missing_module, "_DENSE_SCATTER_ENTRIES", 0)
    fresh = family.make_params(params.as_dict(), 2, 4)  # nothing cached from the dense path
    for r, want in zip(weights, dense):
        np.testing.assert_allclose(family.suff_stats(X, r, mask=mask, params=fresh).scatter, want,
                                   rtol=1e-13, atol=1e-12)


def test_em_finds_the_missingness_patterns_once_per_fit():
    calls = []

    class Counting(Gaussian):
        def block_rows(self, mask, rows, slices):
            calls.append(len(slices))
            return super().block_rows(mask, rows, slices)

    family, X, mask, params, _ = _em_block(2)
    family = Counting("full").check_options()
    result = run_em(family, RowBlocks(X, np.ones(120), 32, mask=mask), np.full(2, 0.5), params, tol=0.0, max_iter=6)
    assert calls == [4] and result.n_iter == 6
    assert np.all(np.diff(result.lower_bounds) > -1e-10)
