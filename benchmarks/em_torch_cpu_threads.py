"""EM per iteration on torch CPU tensors beside numpy (200,000 x 10, K = 3, full covariance).

Three rounds, alternating numpy and torch in one process: seconds of an 11-iteration fit less a
1-iteration fit, over 10. Run with ``PYTHONPATH=<tree>/src`` to time another tree.
"""
import time, numpy as np, torch, discrim
from discrim.mixture import FiniteMixture
from discrim.distributions import Gaussian
rng = np.random.default_rng(0); n, d, k = 200_000, 10, 3
X = rng.normal(size=(n, d)) + rng.integers(0, k, n)[:, None] * 1.5
start = FiniteMixture(Gaussian("full"), k, max_iter=0, random_state=0).fit(X)
p = dict(weights_init=start.weights_, params_init=start.params_, tol=0.0)
Xt = torch.from_numpy(X)
res = {"numpy": [], "torch": []}
for rep in range(3):
    for name, data in (("numpy", X), ("torch", Xt)):
        FiniteMixture(Gaussian("full"), k, max_iter=1, **p).fit(data)
        t = time.perf_counter(); FiniteMixture(Gaussian("full"), k, max_iter=11, **p).fit(data); a = time.perf_counter() - t
        t = time.perf_counter(); FiniteMixture(Gaussian("full"), k, max_iter=1, **p).fit(data); b = time.perf_counter() - t
        res[name].append((a - b) / 10 * 1000)
print(discrim.__file__.split("/src")[0], {k: [round(v, 1) for v in vals] for k, vals in res.items()}, "torch threads", torch.get_num_threads())
