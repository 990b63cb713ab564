"""
A mixture fitted on a GPU (skipped without CUDA)
================================================

Every discrim estimator takes ``device=``: ``None`` computes with NumPy on the host; ``"cuda"``,
``"cuda:1"``, ``"cpu"`` or a ``torch.device`` computes with torch there. The formulas are written
once against the array API, so the device runs the same code as NumPy: the E-step, the
log-densities and sufficient statistics of every family (in blocks sized for the device) run on
the device; the M-step runs on the host in float64 from statistics of size :math:`K d^2`. Fitted
attributes are NumPy arrays on the host; predictions come back in the namespace and on the
device of the input, with probabilities and densities in float64 whatever the input's dtype.

This page was built on a machine without CUDA (the documentation CI has none), so the GPU fit
below is skipped and only the torch CPU device is compared with NumPy. With a GPU, the same
script fits on it.
"""

import time

import numpy as np

from discrim.distributions import Gaussian
from discrim.mixture import FiniteMixture

try:
    import torch
except ImportError:  # the torch extra is not installed
    torch = None

rng = np.random.default_rng(0)
X = np.vstack([rng.normal(m, 1.0, size=(5_000, 8)) for m in (-2.0, 0.0, 3.0)])
start = time.perf_counter()
numpy_fit = FiniteMixture(Gaussian("full"), 3, random_state=0).fit(X)
print(f"NumPy on the host: {time.perf_counter() - start:.2f} s, weights {numpy_fit.weights_.round(3)}")

# %%
# The torch CPU device runs the array-API code path and equals NumPy to rounding.
if torch is None:
    print('torch is not installed (pip install ".[torch]" from the checkout): skipping the device fits')
else:
    torch_fit = FiniteMixture(Gaussian("full"), 3, random_state=0, device="cpu").fit(X)
    difference = np.abs(torch_fit.params_["mean"] - numpy_fit.params_["mean"]).max()
    print(f"torch on the CPU: largest difference of the means from NumPy {difference:.1e}")

# %%
# The GPU fit, in float32, with the data sent to the device once; the tensor's predictions stay
# there.
if torch is None or not torch.cuda.is_available():
    print("CUDA is not available: skipping the GPU fit")
else:
    X_gpu = torch.as_tensor(X, dtype=torch.float32, device="cuda")
    start = time.perf_counter()
    gpu_fit = FiniteMixture(Gaussian("full"), 3, dtype="float32", device="cuda", random_state=0).fit(X_gpu)
    print(f"CUDA: {time.perf_counter() - start:.2f} s, weights {gpu_fit.weights_.round(3)}")
    proba = gpu_fit.predict_proba(X_gpu)
    print(type(proba).__name__, proba.device, proba.dtype, tuple(proba.shape))
