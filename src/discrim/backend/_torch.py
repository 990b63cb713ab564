"""torch's array namespace, imported lazily: torch is an optional extra."""


def torch_namespace(what="backend='torch'"):
    """Return array-api-compat's torch namespace, or raise a clear error without torch.

    Parameters
    ----------
    what : str, default="backend='torch'"
        What asked for torch, in the error message.
    """
    try:
        import array_api_compat.torch as xp  # noqa: F401  (imports torch)
    except ImportError:
        raise ImportError(
            f"{what} needs PyTorch: install it with `pip install torch` (discrim's torch extra)."
        ) from None
    return xp
