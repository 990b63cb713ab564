"""The two-coin example of EM, end to end: print every iteration of EM as a table.

The example is Do and Batzoglou's ("What is the expectation maximization algorithm?", Nature
Biotechnology 26, 2008), with an unknown mixing weight added.

Five experiments each choose coin 0 (probability lambda) or coin 1 and toss it ten times; only the
numbers of heads (5, 9, 8, 4, 7) are observed. Starting from p_0 = 0.6, p_1 = 0.5, lambda = 0.5,
each EM iteration applies the closed forms

    p_k    = sum_i w_ik x_i / sum_i 10 w_ik
    lambda = sum_i w_i0 / 5

where w_ik = P(z_i = k | x_i, theta_t) are the responsibilities. The mean log-likelihood never
decreases. Run with ``python examples/coin_tosses.py``.
"""

import numpy as np

from discrim.datasets import coin_tosses
from discrim.distributions import Binomial
from discrim.mixture import FiniteMixture


def main(max_iter=200, tol=1e-6):
    X = coin_tosses()
    fm = FiniteMixture(
        Binomial(n_trials=10),
        n_components=2,
        params_init={"prob": [[0.6], [0.5]]},  # p_0, p_1
        weights_init=[0.5, 0.5],  # lambda, 1 - lambda
        tol=tol,
        max_iter=max_iter,
        keep_history=True,
    ).fit(X)
    print(f"heads in each experiment: {X[:, 0].tolist()} (10 tosses each)\n")
    print(f"{'t':>3}  {'p_0':>8}  {'p_1':>8}  {'lambda':>8}  {'log-likelihood':>15}")
    for t, (snap, mean_ll) in enumerate(zip(fm.history_, fm.lower_bounds_)):
        total_ll = mean_ll * X.shape[0]  # lower_bounds_ holds the mean over the 5 experiments
        print(f"{t:>3}  {snap['prob'][0, 0]:8.5f}  {snap['prob'][1, 0]:8.5f}  {snap['weights'][0]:8.5f}  {total_ll:15.6f}")
    print(f"\nconverged: {fm.converged_} after {fm.n_iter_} iterations")
    print("P(coin 0 | heads) per experiment:", np.round(fm.predict_proba(X)[:, 0], 3).tolist())
    return fm


if __name__ == "__main__":
    main()
