"""Route `legacy_shim`: libtorch's legacy C shims, AOTInductor's older hand-written shims of
torch/csrc/inductor/aoti_torch/c/shim.h (`aoti_torch_addmm_out(out, self, mat1, mat2, float beta, float alpha)`),
exported by libtorch_cpu.so on every runtime 2.9.1-2.15.0. Each calls at::<op>_out, through the dispatcher:
autograd, autocast and Python modes see aten::<op>.out. The facts are rows of data/legacy_shims.yaml (the shim,
its C parameters, the C type its numbers travel as, the form it serves, the proven number cells, since), each
proven before use (`python -m shimgen.dev prove legacy-shims`: the shim called as the wrapper calls it,
against aten, on every runtime).

A row serves one overload in one of two forms:
- `out`: the caller's out= is the shim's;
- `functional`: the result is `dispatch_probe(probe, *like)` (aten::mm of empty 0x0 tensors of mat1's and mat2's
  dtype and device), which the shim resizes and fills: its dtype is the one aten's dispatch gives, so where
  autocast would compute in a lower precision the operands are first cast as autocast's policy casts them
  (scalar.h autocast_like; the out= shim itself does not autocast).
An out= call is one autograd refuses where an input requires grad in grad mode, measured also inside a kernel
registered for CPU: the wrapper's error then names the remedy (grad mode off, as in a custom op's forward under
torch.library.register_autograd, or SHIMGEN_OVERLAY). Numbers are checked per call: the float must hold
the caller's value exactly, in a (tensor category, number kind) cell the prover measured, else the call raises
naming SHIMGEN_OVERLAY.

shim.h declares these shims deprecated ("will be removed in future versions"); the call is bracketed by
`#pragma GCC diagnostic` (and MSVC's `#pragma warning`) lines so that -Werror builds still build. Ranks after shimgen's
own shim, which carries every number exactly: a build that opts in to the overlay keeps it."""

from __future__ import annotations

import functools

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.base.inputs import package_yaml
from shimgen.generate.parse import Op
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.table import Row, Table
from shimgen.facts.versions import Version

DATA = "data/legacy_shims.yaml"
CATEGORIES = {"bool": 0, "integral": 1, "floating": 2, "complex": 3}
KINDS = {"int": 1, "float": 2}
# shim.h declares the legacy shims deprecated: the call is bracketed so that -Werror builds still build
DEPRECATION_OFF = ("#if defined(__GNUC__)", "#pragma GCC diagnostic push",
                   '#pragma GCC diagnostic ignored "-Wdeprecated-declarations"', "#elif defined(_MSC_VER)",
                   "#pragma warning(push)", "#pragma warning(disable : 4996)", "#endif")
DEPRECATION_ON = ("#if defined(__GNUC__)", "#pragma GCC diagnostic pop", "#elif defined(_MSC_VER)",
                  "#pragma warning(pop)", "#endif")
CARRIED = {"Tensor", "Scalar"}  # the schema types a legacy shim's C parameters carry (a handle, a float)


@functools.cache
def rules() -> dict[str, dict]:
    """overload -> its row of data/legacy_shims.yaml, for the rows proven on some runtime."""
    raw = package_yaml(DATA)["legacy_shims"]
    return {op: r for op, r in raw.items() if r.get("proven")}


def cells_mask(rule: dict) -> int:
    """The row's proven cells as shimgen::detail::float_carries reads them: bit 4 * category + kind."""
    return sum(1 << (4 * CATEGORIES[c] + KINDS[k]) for c, kinds in rule["cells"].items() for k in kinds)


class LegacyShim(Route):
    def carries(self, row: Row, leaky: bool = False) -> Version | None:
        return None  # what a row carries is the data's: variant_at reads it

    def returns_need(self, op: Op, table: Table) -> Version | None:
        rule = rules().get(op.name)
        return Version.parse(str(rule["since"])) if rule else None

    def variant_at(self, q: Query) -> Variant | None:
        rule = rules().get(q.op.name)
        if rule is None or not q.at.c_compatible or Version.parse(str(rule["since"])) > q.level:
            return None
        names = [p.name for p in q.params]
        if any(str(p.arg.type) not in CARRIED for p in q.params):
            return None
        if sorted(names) != sorted(rule["c_args"] if rule["form"] == "out" else
                                   [a for a in rule["c_args"] if a != "out"]):
            return None
        return Variant(self, len(q.params), q.level, shim=rule["function"], shim_nargs=len(rule["c_args"]))

    def describe(self, w: Wrapper, v: Variant) -> list[str]:
        rule = rules()[w.op.name]
        lines = [f"Route: libtorch's legacy C shim {v.shim} (shim.h, deprecated there), which calls aten::"
                 f"{w.op.name.split('.')[0]}.out through the dispatcher (proven equal on torch "
                 f"{', '.join(map(str, rule['proven']))}).",
                 f"Numbers travel as a {rule['numbers']}: one it would change raises an error (shimgen::Scalar)."]
        if rule["form"] == "functional":
            lines.append("An out= call: where an input requires grad in grad mode autograd refuses it (the error "
                         "names the remedy); under autocast the operands are cast as autocast casts them for "
                         f"aten::{rule['probe'].split('::')[1]}'s dtype, then the shim computes there.")
        return lines

    def body(self, w: Wrapper, v: Variant, plan: Plan) -> str:
        rule = rules()[w.op.name]
        op = w.op.name
        params = {p.name: p for p in w.kept(v)}
        like = rule["like"]
        why = (f"aten::{op}'s numbers reach libtorch's {v.shim} only as a {rule['numbers']}, which does not carry "
               "this one exactly for these tensors: define SHIMGEN_OVERLAY and link libshimgen_overlay (rebuilt for "
               "each torch release) for a route that carries them")
        lines = []
        for p in params.values():
            if str(p.arg.type) == "Scalar":
                lines.append(f"if (!shimgen::detail::float_carries({p.name}, {like[0]}, {cells_mask(rule):#x})) {{\n"
                             f'shimgen::detail::refuse("{op}", "{p.name}", {p.name}, "{why}");\n}}')
        def call(cast: set[str]) -> list[str]:
            args = []
            for c in rule["c_args"]:
                if c in cast:  # the operand as autocast hands it to the op (scalar.h autocast_like)
                    args.append(f"shimgen::detail::autocast_like({c}, out).get()")
                elif c == "out" or str(params[c].arg.type) == "Tensor":
                    args.append(f"{c}.get()")
                else:
                    args.append(f"static_cast<{rule['numbers']}>({c}.to_double())")
            return [*DEPRECATION_OFF, f"err = {v.shim}({', '.join(args)});", *DEPRECATION_ON]

        lines.append("AOTITorchError err = AOTI_TORCH_SUCCESS;")
        if rule["form"] == "functional":
            # where aten's dispatch computes the op in another dtype (autocast's lower-precision policy), the
            # operands are cast as autocast casts them, and the out= shim (which autocast leaves alone) computes there
            cast = {c for c in rule["c_args"] if c != "out" and str(params[c].arg.type) == "Tensor"}
            lines += [f'torch::stable::Tensor out = shimgen::detail::dispatch_probe("{rule["probe"]}", '
                      f"{like[0]}, {like[1]});",
                      f"if (out.scalar_type() != {like[0]}.scalar_type()) {{", *call(cast), "} else {",
                      *call(set()), "}"]
        else:
            lines += call(set())
        lines.append(f'if (err != AOTI_TORCH_SUCCESS) {{\nshimgen::detail::legacy_failed("aten::{op}", "{v.shim}");'
                     "\n}")
        lines.append("return out;" if rule["form"] == "functional" else w.return_outs())
        return "\n".join(x for x in lines if x)


ROUTE_CLASS = LegacyShim
