"""shimgen: generate PyTorch stable-ABI C shims, torch::stable wrappers and Python stubs."""

__version__ = "0.1.0"
