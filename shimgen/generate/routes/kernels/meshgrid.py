"""Kernel `meshgrid` (meshgrid.indexing): aten's CompositeImplicitAutograd meshgrid with an indexing string
(TensorShape.cpp) as the same views: each input viewed along its own dimension and expanded to the grid, the first
two swapped for "xy" (the row's `calls`: `viewed`, `expanded`; kernels/meshgrid.h names them unqualified, found by
argument-dependent lookup where the wrapper instantiates it). The string is compared in C++, so no `str` crosses
the ABI and nothing leaks on libtorch 2.10-2.13; from 2.14 the dispatcher carries the op itself and wins. Views
compute nothing: the results are aten's on every device."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import calls_at, proven

# role -> how many leading parameters the body passes that role's wrapper
MESHGRID_PASSED = {"viewed": 2, "expanded": 2}


class Meshgrid(Kernel):
    name = "meshgrid"
    prover = "prove_meshgrid"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        return calls_at(route, q, rule, MESHGRID_PASSED)

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        return "return shimgen::detail::meshgrid_compute(tensors, indexing);"

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return ["Route: aten computes aten::meshgrid.indexing as views (each input viewed along its own dimension and "
                "expanded to the grid, the first two swapped for \"xy\"); so does this wrapper, by the same calls, "
                f"comparing the string here with aten's checks (proven equal, gradients included, on torch "
                f"{proven(rule)})."]


register(Meshgrid())
