"""ops.matmul: numpy's dot for numpy operands of at most two dimensions, the same product as ``@``."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discrim.backend import ops


@settings(max_examples=50, deadline=None)
@given(m=st.integers(1, 7), k=st.integers(1, 30), n=st.integers(1, 7), seed=st.integers(0, 1000),
       left_vector=st.booleans(), right_vector=st.booleans(), transposed=st.booleans())
def test_matmul_is_the_matrix_product(m, k, n, seed, left_vector, right_vector, transposed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(k,) if left_vector else (m, k))
    b = rng.normal(size=(n, k)).T if transposed else rng.normal(size=(k, n))  # a strided operand
    b = b[:, 0] if right_vector else b
    np.testing.assert_allclose(ops.matmul(a, b), a @ b, rtol=1e-12, atol=1e-12)


def test_matmul_writes_into_out_and_stacks_keep_matmuls_meaning():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(4, 5))
    out = np.empty((3, 5))
    assert ops.matmul(a, b, out=out) is out
    np.testing.assert_allclose(out, a @ b, rtol=1e-12)
    # three dimensions: a stack of products (np.dot would contract across the stack instead)
    A, B = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 4, 5))
    np.testing.assert_allclose(ops.matmul(A, B), A @ B, rtol=1e-12)
    gram = ops.matmul(a, a.T)  # a symmetric rank update
    np.testing.assert_array_equal(gram, gram.T)


def test_matmul_of_tensors_is_torchs_product():
    torch = pytest.importorskip("torch")
    a, b = torch.randn(3, 4, dtype=torch.float64), torch.randn(4, 2, dtype=torch.float64)
    product = ops.matmul(a, b)
    assert isinstance(product, torch.Tensor)
    torch.testing.assert_close(product, a @ b)


@pytest.mark.filterwarnings("error")  # torch's sparse constructors warned about invariant checks (torch 2.11)
def test_label_sums_are_the_weighted_sums_of_each_labels_rows_in_numpy_and_torch():
    rng = np.random.default_rng(0)
    X, labels, weights = rng.normal(size=(50, 3)), rng.integers(0, 4, 50), rng.random(50)
    expected = np.stack([(weights[labels == k, None] * X[labels == k]).sum(axis=0) for k in range(5)])
    np.testing.assert_allclose(ops.label_sums(labels, weights, X, 5), expected, rtol=1e-12, atol=1e-15)
    torch = pytest.importorskip("torch")
    np.testing.assert_allclose(ops.label_sums(labels, weights, torch.as_tensor(X), 5), expected, rtol=1e-12, atol=1e-15)
