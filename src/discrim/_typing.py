"""Type aliases of the public API's annotations (array inputs and outputs on every data path)."""

import os
from typing import TYPE_CHECKING, Union

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:  # optional dependencies and discrim's own classes: only type checkers resolve these names
    import dask.array
    import pandas
    import sklearn.pipeline
    import torch

    from discrim.model_selection.prototype_cv import PrototypeClassifierCV
    from discrim.prototype.classifier import PrototypeClassifier

#: What estimators accept as rows, labels or weights: anything NumPy converts, a pandas object,
#: a torch tensor (computed on its device) or a dask collection (read chunk by chunk).
ArrayLike = Union[npt.ArrayLike, "pandas.DataFrame", "pandas.Series", "torch.Tensor", "dask.array.Array"]

#: What prediction methods return: a NumPy array, or a tensor / dask array for such an input.
Array = Union[np.ndarray, "torch.Tensor", "dask.array.Array"]

#: ``n_batches`` as several counts (a list or tuple of ints): one result per count.
BatchCounts = Union[list[int], tuple[int, ...]]

#: ``random_state``: a seed, a legacy RandomState, a Generator, or None (fresh entropy).
RandomStateLike = Union[int, np.random.RandomState, np.random.Generator, None]

#: ``device``: a torch device or its name ("cpu", "cuda", "cuda:1"), or None (the data's own).
Device = Union[str, "torch.device", None]

#: A file name: a string or a path-like object.
PathLike = Union[str, "os.PathLike[str]"]

#: A fitted prototype set model as the explanation functions and plots take it.
PrototypeModel = Union["PrototypeClassifier", "PrototypeClassifierCV", "sklearn.pipeline.Pipeline"]

__all__ = ["Array", "ArrayLike", "BatchCounts", "Device", "PathLike", "PrototypeModel", "RandomStateLike"]
