"""Type aliases of the public API's annotations (array inputs and outputs on every data path)."""

from typing import TYPE_CHECKING, Union

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:  # optional dependencies: only type checkers resolve these names
    import dask.array
    import pandas
    import torch

#: What estimators accept as rows, labels or weights: anything NumPy converts, a pandas object,
#: a torch tensor (computed on its device) or a dask collection (read chunk by chunk).
ArrayLike = Union[npt.ArrayLike, "pandas.DataFrame", "pandas.Series", "torch.Tensor", "dask.array.Array"]

#: What prediction methods return: a NumPy array, or a tensor / dask array for such an input.
Array = Union[np.ndarray, "torch.Tensor", "dask.array.Array"]

__all__ = ["Array", "ArrayLike"]
