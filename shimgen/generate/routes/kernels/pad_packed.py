"""Kernel `pad_packed` (_pad_packed_sequence.default): aten's CompositeImplicitAutograd function (PackedSequence.cpp)
as the same dispatching calls in the same order, each by its wrapper (the row's `calls`: the op of each role below):
batch_sizes made contiguous, aten's checks (scalar.h pad_packed_sizes, pad_packed_length), the output `full` of
padding_value with data's dtype, layout and device, the lengths tensor `empty` with batch_sizes' options (new_empty
of it), then per run of equal batch sizes `output.slice(0, prev_i, i).slice(1, 0,
prev_batch_size).copy_(data.slice(0, offset, offset + l).view(...))`, the lengths written as aten writes them
(pad_packed_lengths), and the transpose for batch_first. Batch sizes that grow or are negative (aten writes out of
bounds there) are refused (pad_packed_check_runs). From 2.10: the int[] of full, new_empty and view cross the
dispatcher from then."""

from __future__ import annotations

from shimgen.generate.cpp_model import Variant, Wrapper
from shimgen.generate.plan import Plan
from shimgen.generate.routes import Query, Route
from shimgen.generate.routes.kernels import Kernel, register
from shimgen.generate.routes.kernels.common import LISTS_CROSS, callees, calls_at

# role -> how many leading parameters the body passes that role's wrapper
PAD_PACKED_PASSED = {"dense": 1, "fill": 5, "blank": 2, "part": 4, "shape": 2, "write": 2, "swap": 3}


def _pad_packed_body(w: Wrapper, plan: Plan, rule: dict) -> str:
    f = callees(rule, plan)
    data, batch_sizes, batch_first, padding_value, total_length = rule["params"]
    op, part = w.op.name, f["part"]
    return "\n".join([
        f"const torch::stable::Tensor sizes_t = {f['dense']}({batch_sizes});",
        f'const std::vector<int64_t> sizes = shimgen::detail::pad_packed_sizes("{op}", sizes_t);',
        "const int64_t max_batch_size = sizes[0];",
        "const int64_t max_real_seq_length = static_cast<int64_t>(sizes.size());",
        f'const int64_t max_seq_length = shimgen::detail::pad_packed_length("{op}", sizes, {total_length});',
        f'std::vector<int64_t> view_size = shimgen::detail::pad_packed_output_size("{op}", {data}, max_seq_length, '
        "max_batch_size);",
        f"torch::stable::Tensor output = {f['fill']}(view_size, {padding_value}, {data}.scalar_type(), "
        f"shimgen::detail::layout_of({data}), {data}.device());",
        f"const torch::stable::Tensor lengths = {f['blank']}(sizes_t, {{max_batch_size}});",
        f'shimgen::detail::pad_packed_check_runs("{op}", sizes);',
        "int64_t data_offset = 0;",
        "int64_t prev_batch_size = max_batch_size;",
        "int64_t prev_i = 0;",
        "for (int64_t i = 0; i <= max_real_seq_length; ++i) {",
        "const int64_t batch_size = i != max_real_seq_length ? sizes[i] : 0;",
        "if (batch_size != prev_batch_size) {",
        "const int64_t l = prev_batch_size * (i - prev_i);",
        f"const torch::stable::Tensor tmp = {part}({data}, 0, data_offset, data_offset + l);",
        "view_size[0] = i - prev_i;",
        "view_size[1] = prev_batch_size;",
        f"const torch::stable::Tensor rows = {part}({part}(output, 0, prev_i, i), 1, 0, prev_batch_size);",
        f"{f['write']}(rows, {f['shape']}(tmp, view_size));",
        "data_offset += l;",
        "prev_i = i;",
        "}",
        "prev_batch_size = batch_size;",
        "}",
        "shimgen::detail::pad_packed_lengths(lengths, sizes);",
        f"if ({batch_first}) {{",
        f"output = {f['swap']}(output, 0, 1);",
        "}",
        "return std::make_tuple(output, lengths);"])


def _pad_packed_doc(rule: dict) -> list[str]:
    return ["Route: aten computes it with dispatching calls (PackedSequence.cpp): batch_sizes made contiguous and "
            "read, the output full of padding_value with data's options, then per run of equal batch sizes a slice "
            "of data viewed and copied into a slice of the output, the lengths, and a transpose for batch_first; "
            "so does this wrapper, by the same calls in the same order through their wrappers (proven equal, "
            f"gradients included, on torch {', '.join(map(str, rule['proven']))}).",
            "Batch sizes that grow or are negative (aten writes its lengths out of bounds there) and a padding "
            "value full's wrapper refuses raise an error."]


class PadPacked(Kernel):
    name = "pad_packed"
    prover = "prove_pad_packed"

    def variant_at(self, route: Route, q: Query, rule: dict) -> Variant | None:
        """As calls_at, from 2.10 (its list arguments cross the dispatcher from then on)."""
        return None if q.level < LISTS_CROSS else calls_at(route, q, rule, PAD_PACKED_PASSED)

    def describe(self, w: Wrapper, rule: dict) -> list[str]:
        return _pad_packed_doc(rule)

    def body(self, w: Wrapper, v: Variant, plan: Plan, rule: dict) -> str:
        return _pad_packed_body(w, plan, rule)


register(PadPacked())
