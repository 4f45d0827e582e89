"""Kernel `fft_norm` (fft_fft, fft_ifft, fft_rfft, fft_irfft, fft_hfft, fft_ihfft below target 2.14, in a build that did
not accept the str leak): the one-dimensional fft ops with a `norm` string as aten's CompositeImplicitAutograd
SpectralOps.cpp computes them (fft_c2c, fft_r2c, fft_c2r), by the same dispatching calls in the same order, each by its
wrapper (the row's `calls`; kernels/fft_norm.h names them unqualified, found by argument-dependent lookup where the
wrapper instantiates it): the input promoted (`cast`), resized to n (`sliced`, `padded`), then aten::_fft_c2c,
_fft_r2c or _fft_c2r with the normalization as a number, and the conjugate view where aten takes it (`conjugated`).
The string is compared in C++, so no `str` crosses the ABI on libtorch 2.10-2.13.

Row keys: `transform` (`c2c` for fft and ifft: complex to complex, real to complex for a real input; `r2c`; `c2r`),
`forward` and `onesided` (aten's for the op). Every other call takes the dispatcher's guarded form, aten's own op: a
call leaving `norm` None (nothing crosses), a half or bfloat16 input (whose promotion aten decides by device and
release: the leak error where the string would cross before 2.14), and every call on libtorch 2.14 and later."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import (guarded_body, guarded_calls_at, leak_free_release, literal,
                                                    proven)

# role -> how many leading parameters the body passes that role's wrapper
FFT_NORM_PASSED = {"cast": 2, "sliced": 5, "padded": 2, "c2c": 4, "r2c": 4, "c2r": 4, "conjugated": 1}
TRANSFORMS = {"c2c": 0, "r2c": 1, "c2r": 2}


class FftNorm(Kernel):
    name = "fft_norm"
    prover = "prove_fft_norm"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        return guarded_calls_at(route, q, rule, FFT_NORM_PASSED)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return ["Route: on a running libtorch before 2.14, a call passing `norm` on an input other than half or "
                "bfloat16 as aten computes it: the input promoted, resized to n, then aten's "
                f"_fft_{rule['transform']} with the normalization as a number, by the same dispatching calls, on any "
                f"device; no str crosses the ABI (proven equal, gradients included, on torch {proven(rule)}).",
                "Every other call takes the boxed dispatcher: aten's own op (a norm left None converts nothing); "
                "on libtorch 2.10-2.13 a half or bfloat16 input with a norm raises a shimgen: error naming the leak."]

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        arg = rule["argument"]
        x, n, d, _ = rule["params"]  # the input, the number of points, the dim, the norm
        transform = TRANSFORMS[rule["transform"]]
        return "\n".join([f"const bool given = {arg}.has_value();",
                          f"const bool leaks = given && shimgen::detail::running_release() < {leak_free_release(v)};",
                          f"if (leaks && shimgen::detail::fft_computes({x}.scalar_type())) {{",
                          f'return shimgen::detail::fft_norm_compute("{w.op.name}", {x}, {n}, {d}, {arg}, {transform}, '
                          f"{literal(rule['forward'])}, {literal(rule['onesided'])});",
                          "}",
                          guarded_body(w, v, plan, arg)])


register(FftNorm())
