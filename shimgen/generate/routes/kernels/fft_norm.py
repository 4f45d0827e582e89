"""Kernel `fft_norm` (fft_fft, fft_ifft, fft_rfft, fft_irfft, fft_hfft, fft_ihfft below target 2.14, in a build that did
not accept the str leak): the one-dimensional fft ops with a `norm` string as aten's CompositeImplicitAutograd
SpectralOps.cpp computes them (fft_c2c, fft_r2c, fft_c2r), by the same dispatching calls in the same order, each by its
wrapper (the row's `calls`; kernels/fft_norm.h names them unqualified, found by argument-dependent lookup where the
wrapper instantiates it): the input promoted (`cast`), resized to n (`sliced`, `padded`), then aten::_fft_c2c,
_fft_r2c or _fft_c2r with the normalization as a number, and the conjugate view where aten takes it (`conjugated`).
The string is compared in C++, so no `str` crosses the ABI on libtorch 2.10-2.13.

Row keys: `transform` (`c2c` for fft and ifft: complex to complex, real to complex for a real input; `r2c`; `c2r`),
`forward` and `onesided` (aten's for the op). With `multi_dim` the row is an n-dimensional op (fftn, rfftn, irfftn,
hfftn, ihfftn and their 2-D forms, whose `s` and `dim` are lists), computed as aten's SpectralOps.cpp does
(kernels/fft_norm.h fftn_norm_compute: canonicalize_fft_shape_and_dim_args, promote_tensor_fft, resize_fft_input,
then the transform): `transform` `c2c` (a real input promoted to complex), `r2c` (onesided), `c2r`, `hfft` (c2c over
all but the last dim, then the conjugate's c2r) or `ihfft` (r2c over the last dim, then the physical conjugate's
inverse c2c over the rest): every n-dimensional row lists `physical` (conj_physical) among its calls, as each row
lists every role, since one helper holds every transform and its calls resolve where the wrapper instantiates it. Every other call takes the dispatcher's guarded form, aten's
own op: a call leaving `norm` None (nothing crosses), a half or bfloat16 input (whose promotion aten decides by device
and release: the leak error where the string would cross before 2.14), and every call on libtorch 2.14 and later."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import (guarded_body, guarded_calls_at, leak_free_release, literal,
                                                    proven)

# role -> how many leading parameters the body passes that role's wrapper
FFT_NORM_PASSED = {"cast": 2, "sliced": 5, "padded": 2, "c2c": 4, "r2c": 4, "c2r": 4, "conjugated": 1, "physical": 1}
# the row's `transform` -> the helper's number (`hfft`, `ihfft`: the n-dimensional ops')
TRANSFORMS = {"c2c": 0, "r2c": 1, "c2r": 2, "hfft": 3, "ihfft": 4}


class FftNorm(Kernel):
    name = "fft_norm"
    prover = "prove_fft_norm"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        return guarded_calls_at(route, q, rule, FFT_NORM_PASSED)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        called = {role: name.split(".")[0] for role, name in rule["calls"].items()}
        steps = _STEPS[rule["transform"]].format(**called) if rule.get("multi_dim") else called[rule["transform"]]
        resized = "its dims and sizes as aten reads s and dim, the input promoted and resized" \
            if rule.get("multi_dim") else "the input promoted, resized to n"
        return ["Route: on a running libtorch before 2.14, a call passing `norm` on an input other than half or "
                f"bfloat16 as aten computes it: {resized}, then aten's {steps} with the normalization as a number, "
                "by the same dispatching calls, on any device; no str crosses the ABI (proven equal, gradients "
                f"included, on torch {proven(rule)}).",
                "Every other call takes the boxed dispatcher: aten's own op (a norm left None converts nothing); "
                "on libtorch 2.10-2.13 a half or bfloat16 input with a norm raises a shimgen: error naming the leak."]

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        arg = rule["argument"]
        x, n, d, _ = rule["params"]  # the input, the number of points, the dim, the norm
        transform = TRANSFORMS[rule["transform"]]
        if rule.get("multi_dim"):
            compute = (f'return shimgen::detail::fftn_norm_compute("{w.op.name}", {x}, {n}, {d}, {arg}, {transform}, '
                       f"{literal(rule['forward'])});")
        else:
            compute = (f'return shimgen::detail::fft_norm_compute("{w.op.name}", {x}, {n}, {d}, {arg}, {transform}, '
                       f"{literal(rule['forward'])}, {literal(rule['onesided'])});")
        return "\n".join([f"const bool given = {arg}.has_value();",
                          f"const bool leaks = given && shimgen::detail::running_release() < {leak_free_release(v)};",
                          f"if (leaks && shimgen::detail::fft_computes({x}.scalar_type())) {{",
                          compute,
                          "}",
                          guarded_body(w, v, plan, arg)])

    def prover_spec(self, rule: dict, out: str) -> dict:
        """The n-dimensional rows' (`multi_dim`) own hook."""
        return {"prover": "prove_fftn_norm" if rule.get("multi_dim") else self.prover}


# an n-dimensional row's `transform` -> the calls its doc names (the row's `calls`, by role)
_STEPS = {"c2c": "{c2c}", "r2c": "{r2c}", "c2r": "{c2r}",
          "hfft": "{c2c} over all but the last dim, then {conjugated} and {c2r} over it",
          "ihfft": "{r2c} over the last dim, then {physical} and the inverse {c2c} over the rest"}


register(FftNorm())
