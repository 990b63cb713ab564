"""The only module that imports torch, lazily; torch is an optional extra."""


def torch_namespace():
    """Return array-api-compat's torch namespace, or raise a clear error without torch."""
    try:
        import array_api_compat.torch as xp  # noqa: F401  (imports torch)
    except ImportError:
        raise ImportError(
            "backend='torch' needs PyTorch: install it with `pip install torch` "
            "(or `pip install discrim[torch]`)."
        ) from None
    return xp
