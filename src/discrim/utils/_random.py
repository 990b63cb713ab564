"""Independent random streams from scikit-learn style ``random_state`` arguments."""

import numbers

import numpy as np


def as_seed_sequence(random_state):
    """Turn a ``random_state`` argument into a :class:`numpy.random.SeedSequence`.

    Parameters
    ----------
    random_state : int, RandomState instance, Generator, SeedSequence or None
        ``None`` draws fresh entropy; an int is used as the seed; a RandomState or Generator
        is advanced once to draw the seed, so repeated calls give different sequences.

    Returns
    -------
    seed_sequence : numpy.random.SeedSequence
    """
    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if isinstance(random_state, numbers.Integral):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer, got {random_state}.")
        return np.random.SeedSequence(int(random_state))
    if isinstance(random_state, np.random.RandomState):
        return np.random.SeedSequence(int(random_state.randint(0, 2**31 - 1)))
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(int(random_state.integers(0, 2**63 - 1)))
    raise TypeError(
        "random_state must be None, an int, a numpy RandomState, Generator or SeedSequence; "
        f"got {type(random_state).__name__}."
    )


def spawn_generators(random_state, n):
    """Return ``n`` statistically independent generators derived from ``random_state``.

    Parameters
    ----------
    random_state : int, RandomState instance, Generator, SeedSequence or None
    n : int

    Returns
    -------
    generators : list of numpy.random.Generator of length n
    """
    return [np.random.default_rng(s) for s in as_seed_sequence(random_state).spawn(n)]


def side_stream(random_state):
    """A generator apart from the streams :func:`spawn_generators` gives for the same ``random_state``.

    For draws beside a fit's own streams (a sample of the rows to seed from), so that they do not
    repeat the first initialisation's random numbers.

    Parameters
    ----------
    random_state : int, RandomState instance, Generator, SeedSequence or None

    Returns
    -------
    generator : numpy.random.Generator
    """
    return np.random.default_rng([*as_seed_sequence(random_state).generate_state(2), 1])
