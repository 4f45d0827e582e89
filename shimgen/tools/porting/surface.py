"""What the stable surface has for each call of an ATen op: the wrappers shimgen generates for the C++ names
called (`Surface`, shimgen.generate.signatures.cpp's variants: the same answer the generated ops.h gives) and the
answer at one target release (`Answer`); the caveats the reports print for the routes an answer names."""

from __future__ import annotations

from dataclasses import dataclass

from torchgen.model import Variant

from shimgen.base.errors import ShimgenError
from shimgen.generate import plan as plan_mod
from shimgen.generate import table as table_mod
from shimgen.generate.parse import NativeYaml
from shimgen.generate.signatures import cpp as sig_cpp
from shimgen.tools.porting.calls import Call


@dataclass(frozen=True)
class Answer:
    status: str  # yes | overlay | from | removed | no | not-aten | varies
    text: str  # as printed

    @property
    def portable(self) -> bool:
        return self.status == "yes"


def _schema_names(cpp: str, known: set[str]) -> tuple[str, str]:
    """(schema name, C++ wrapper name) a written C++ name refers to: `sum_out`/`sum_outf` -> (sum, sum_out)."""
    for suffix in ("_outf", "_out"):
        if cpp.endswith(suffix) and cpp[: -len(suffix)] in known:
            return cpp[: -len(suffix)], cpp[: -len(suffix)] + "_out"
    return cpp, cpp


class Surface:
    """The wrappers shimgen generates for a set of C++ names (from the installed torch's yaml, or `yaml`)."""

    def __init__(self, cpp_names: set[str], yaml_path: str | None = None) -> None:
        self.native = NativeYaml(yaml_path)
        known = set(self.native.by_name)
        self.names = {c: _schema_names(c, known) for c in cpp_names}
        schema_names = sorted({s for s, _ in self.names.values() if s in known})
        table = table_mod.load()
        self.refused: dict[str, str] = {}
        ok = []
        for name in schema_names:
            try:
                self.native.select([name], table, [])
                ok.append(name)
            except ShimgenError as e:
                self.refused[name] = e.line()
        self.wrappers: dict[str, list] = {}
        self.reasons: dict[str, str] = {}
        self.methods: set[str] = set()
        if ok:
            self.plan = plan_mod.make(ok, yaml_path, additive=False)
            ws, refusals = sig_cpp.wrappers(self.plan)
            # what a build without SHIMGEN_OVERLAY calls (libtorch alone): the answer, where it has a form
            self.plain = {w.op.name: w for w in sig_cpp.wrappers(self.plan.in_world(plan_mod.DEFAULT_WORLD))[0]}
            for w in ws:
                if w.op.added:
                    continue
                self.wrappers.setdefault(w.name, []).append(w)
            for r in refusals:
                op = r.removeprefix("op ").partition(":")[0].partition(".")[0]
                self.reasons.setdefault(op, r)
            for op in self.plan.ops:
                if Variant.method in op.f.variants:
                    self.methods.add(sig_cpp.cpp_name(op))
        self.known = known

    def is_aten(self, call: Call) -> bool:
        schema, cpp = self.names[call.name]
        if schema not in self.known:
            return False
        if call.method:  # only Tensor methods of native_functions.yaml are ATen ops
            return cpp in self.methods or (schema in self.refused and self._yaml_method(schema))
        return True

    def _yaml_method(self, schema: str) -> bool:
        try:
            return any(Variant.method in op.f.variants for op in self.native.select([schema]))
        except ShimgenError:
            return False

    def candidates(self, call: Call) -> list:
        """The wrappers of the call's C++ name whose parameter count fits the arguments written."""
        schema, cpp = self.names[call.name]
        ws = self.wrappers.get(cpp, [])
        if call.method:
            ws = [w for w in ws if _is_method(w)]
        fit = [w for w in ws if sum(p.default is None for p in w.params) <= call.nargs <= len(w.params)
               and not any(i < len(w.params) and "stable::Tensor" in w.params[i].cpp_type for i in call.numbers)]
        return fit or ws

    def answer(self, call: Call, target) -> tuple[Answer, list[str]]:
        """The call's availability at `target`, and the overloads it may reach."""
        schema, cpp = self.names[call.name]
        if not self.is_aten(call):
            return Answer("not-aten", "not an ATen op"), []
        ws = self.candidates(call)
        if not ws:
            why = self.refused.get(schema) or self.reasons.get(schema) or f"no wrapper for {cpp}"
            return Answer("no", f"no: {_short(why)}"), []
        answers = {_answer_one(w, target, self.plain.get(w.op.name)) for w in ws}
        names = [w.op.name for w in ws]
        if len(answers) == 1:
            return answers.pop(), names
        if len({a.status for a in answers}) == 1:  # the same outcome on different routes
            head = {a.text.partition(" (")[0] for a in answers}
            if len(head) == 1:
                routes = sorted({a.text.partition(" (")[2].rstrip(")") for a in answers})
                return Answer(answers.pop().status, f"{head.pop()} ({' or '.join(routes)})"), names
        return Answer("varies", "varies: " + "; ".join(f"{w.op.name} {_answer_one(w, target, self.plain.get(w.op.name)).text}"
                                               for w in ws)), names


def _is_method(w) -> bool:
    return Variant.method in w.op.f.variants


def _short(reason: str) -> str:
    return reason.removeprefix("shimgen: ").split(" (see ")[0]


def _answer_one(w, target, plain=None) -> Answer:
    """`w` as a build with the overlay sees it; `plain`: the same op's wrapper in a default build (libtorch
    alone), whose form, where it has one at `target`, is the answer."""
    mine = plain.variants if plain is not None else ()
    v = plain.active(target) if plain is not None else None
    if v is not None:
        return Answer("yes", f"yes ({v.route.name})")
    v = w.active(target)
    if v is not None:
        if v.route.overlay:
            return Answer("overlay", "overlay (shimgen's C shim)")
        return Answer("yes", f"yes ({v.route.name})")
    later = sorted([x for x in (*mine, *w.variants) if x.start > target], key=lambda x: (x.start, x.route.overlay))
    if later:
        first = later[0]
        route = "overlay" if first.route.overlay else first.route.name
        return Answer("from", f"from {first.start} ({route})")
    return Answer("removed", f"removed by {w.variants[-1].end}" if w.variants and w.variants[-1].end else "no")


# What each route costs or asks of the caller, as the reports say it (shimgen.tools.porting.report adds its own).
CAVEATS = (
    ("shim", "libtorch's own C shim: about the cost of the at:: call"),
    ("dispatcher", "libtorch's boxed dispatcher (torch_call_dispatcher, from 2.10): about 1.4-1.7x an at:: call"),
    ("sibling", "a Scalar argument travels as a 0-dim tensor to aten's Tensor overload, exactly; a number that "
                "cannot (a complex or out-of-range value for that dtype) raises a `shimgen:` error at run time "
                "rather than giving a different result"),
    ("overlay", "needs shimgen's overlay library (C shims libtorch does not ship, compiled against one torch's "
                "ATen: not ABI-stable); without `overlay = true` the setuptools build refuses it"),
    ("from", "hidden at that target: a compile error naming the release to target"),
)
