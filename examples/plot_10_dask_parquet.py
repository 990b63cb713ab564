"""
A Dask fit on a folder of Parquet files
=======================================

Data larger than memory: a folder of Parquet files read lazily with ``dask.dataframe``. Every
discrim estimator takes the dask collection where it takes an array and reads it chunk by chunk:
for a mixture, each E-step computes the responsibilities and the sufficient statistics of every
chunk where the chunk lives, only statistics of size :math:`K d^2` travel, and the M-step runs on
the client. With at most 2**17 rows, k-means++ seeds from all of them and the fit equals the
in-memory fit up to rounding (beyond, it seeds from a uniform sample of that many).

Here the folder holds 100,000 rows in 8 files, and the default threaded scheduler computes the
chunks; a ``distributed.Client`` (local or a cluster's address) created before the fit runs the
same code on its workers.
"""

import tempfile
from pathlib import Path

import dask.dataframe as dd
import numpy as np
import pandas as pd

from discrim.distributions import Gaussian
from discrim.mixture import FiniteMixture

rng = np.random.default_rng(0)
folder = Path(tempfile.mkdtemp()) / "rows"
folder.mkdir()
means = np.array([[0.0, 0.0, 0.0], [4.0, 0.0, 2.0], [0.0, 5.0, -2.0]])
for part in range(8):  # 8 files of 12,500 rows from a three-component mixture
    component = rng.integers(0, 3, 12_500)
    X_part = means[component] + rng.normal(size=(12_500, 3))
    pd.DataFrame(X_part, columns=["x0", "x1", "x2"]).to_parquet(folder / f"part-{part}.parquet")

frame = dd.read_parquet(str(folder))
print(frame)  # lazy: nothing read yet

# %%
# The fit reads the files chunk by chunk at every E-step; the fitted attributes are NumPy arrays
# on the client, and predictions on a dask input are dask arrays, computed when asked.
mixture = FiniteMixture(Gaussian("full"), n_components=3, random_state=0).fit(frame)
print("weights", mixture.weights_.round(3))
print("means\n", mixture.params_["mean"].round(2))
labels = mixture.predict(frame)
print(type(labels).__name__, labels.shape, "->", np.bincount(labels.compute()))

# %%
# The same rows in memory give the same fit, up to rounding.
in_memory = FiniteMixture(Gaussian("full"), n_components=3, random_state=0).fit(frame.compute())
print("largest difference of the means:",
      float(np.abs(in_memory.params_["mean"] - mixture.params_["mean"]).max()))
