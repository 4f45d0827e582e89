"""Kernels `assert_scalar`, `constrain_range`, `constrain_range_for_size` and their `functional_` forms
(_assert_scalar, sym_constrain_range, sym_constrain_range_for_size, _functional_*): torch.compile's runtime checks,
called eagerly with a concrete number: aten's checks in its order and words (scalar.h <kernel>_select), no aten call
but the dependency token's clone (`token`); a size that is not an integer or a bool is refused (`size`)."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import register
from shimgen.generate.routes.kernels.common import proven
from shimgen.generate.routes.kernels.select import Select


class RuntimeCheck(Select):
    """`token`: the functional form returns a clone of dep_token; `size`: the check converts a size (constrain_*,
    else it asserts a number); `for_size`: constrain_range_for_size's bounds (min 0 by default, max above 2)."""

    def __init__(self, name: str, token: bool, size: bool, for_size: bool):
        super().__init__(name, prover="prove_runtime_checks")
        self.token, self.size, self.for_size = token, size, for_size

    def prover_spec(self, rule: dict, out: str) -> dict:
        return {"prover": self.prover, "asserts": not self.size, "for_size": self.for_size,
                "token": self.token}

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        """No dispatcher call: every type the headers have."""
        if any(p.row.since is None or p.row.since > q.level for p in q.params):
            return None
        return Variant(route, len(q.params), q.level)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        token = " and returns a clone of dep_token (aten::clone)" if self.token else ""
        return [f"Route: aten's checks of this torch.compile runtime check, in its order and words, on the "
                f"concrete number{token} (shimgen::detail::{self.name}_select; proven equal on torch "
                f"{proven(rule)})."] + (
                    ["A size that is not an integer or a bool raises an error (aten converts it with checks "
                     "of its own)."] if self.size else [])


register(*(RuntimeCheck(f"{form}{check}", token=bool(form), size=size, for_size=for_size)
           for form in ("", "functional_")
           for check, size, for_size in (("assert_scalar", False, False), ("constrain_range", True, False),
                                         ("constrain_range_for_size", True, True))))
