"""The prover of kernel `cpu_number` (shimgen/generate/routes/kernels/cpu_number.py): the generated wrapper itself,
compiled at target 2.10 (the row's `library`), against aten's op bit for bit at each CPU capability and thread count,
by kernel cpu_activation's cases (its NUMBERS for the op: the helpers live in that kernel's C++ section and share its
loop), which run the row's op as the wrapper calls it: the number rules first, the helper, then the Tensor sibling.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

from mirror_common import prover_module


def prove_cpu_number(op, s):
    """cpu_activation's prove_cpu_activation on the row (one child process per capability and thread count)."""
    return prover_module("cpu_activation").prove_cpu_activation(op, s)


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_cpu_number,)}
