"""Test tiers. `python -m pytest -q` runs everything (what CI runs); `python -m pytest -q -m "not slow"` is the fast
tier for iteration: no C++ build, no torch runtime venv, no whole-yaml generation.

A test is slow when it is marked `@pytest.mark.slow`, or when its file is in SLOW_FILES: files whose tests share a
module-scoped build (an extension compiled against the generated headers, the overlay library), run other torch
runtimes, or generate the whole yaml. A new file of such tests goes in this list; a single slow test in an
otherwise fast file gets the mark."""

from __future__ import annotations

import gc
import os
import sys

import pytest

# The suite runs shimgen in hundreds of subprocesses: with bytecode written (__pycache__, which git ignores) each one
# imports shimgen's compiled modules instead of compiling them again. PYTHONDONTWRITEBYTECODE, where set, is lifted
# for the test run (tests/test_cli_errors.py: a quarter less CPU time).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# The workers hold large object graphs for a whole file (the parsed yaml, plans, torch's modules), which Python's
# collector, at its default thresholds (700, 10, 10), scans again and again: a quarter of the CPU of the tests that
# generate in process (test_model_memo, test_device_rule, test_layout, ...: 143 s with the defaults, 105 s with these,
# measured together with -n 0), for 0.9 GB of memory instead of 0.6 GB.
gc.set_threshold(100_000, 50, 1000)

# Every C++ compile of the run, in this process and in every subprocess, goes through the run's compiler cache
# (tests/cxx.py: use_compiler_cache, tests/compile_cache.py), put on PATH before any test module reads the compiler.
import tests.cxx  # noqa: E402, F401

# third-party sources kept as test corpora (tests/port_ext/*/: a real extension's own tests among them), read by the
# tests that port them, never collected themselves
collect_ignore_glob = ["port_ext/*/*"]

SLOW_FILES = frozenset({
    # extensions built against the generated headers (tests.cxx)
    "test_addbmm_loop.py", "test_addc_scalars_tensor.py", "test_autocast_rules.py", "test_c_shim_compile.py",
    "test_call_sites.py", "test_cpp_versions.py", "test_cpu_activation.py", "test_deferred_wrappers.py",
    "test_device_route.py",
    "test_elu_backward_composition.py", "test_factory_outs.py", "test_fill_diagonal_scatter.py", "test_history.py",
    "test_implicit_autograd_compositions.py", "test_index_add.py", "test_inplace_compositions.py",
    "test_integral_add.py", "test_item.py", "test_kernel_composition.py", "test_legacy_shim.py", "test_list_args.py",
    "test_matrix_norm_composition.py", "test_number_argument_compositions.py", "test_out_compositions.py",
    "test_overlay_build.py", "test_overloads.py", "test_pow_numbers.py", "test_renorm_composition.py",
    "test_result_type_numbers.py", "test_runtime_checks.py", "test_scalars.py", "test_upstream_compat.py",
    "test_kernel_sections.py", "test_shipped_header.py", "test_python_stubs.py",
    # --verify builds, the example's wheel, the release matrix, other runtimes
    "test_example_ext.py", "test_matrix.py", "test_stable_calls.py", "test_verify.py", "test_verify_world.py",
    "test_real_models.py", "test_independent.py", "test_torchgen_differential.py",
    # the whole yaml, or many generation runs
    "test_cpp_whole_yaml.py", "test_cpp_layout.py", "test_layout.py", "test_model_memo.py", "test_determinism.py",
    "test_hardening.py",
    # the ported extensions' wheel and their ATen originals on other runtimes; CUDA toolkit builds
    "test_port_fix.py", "test_quickstart.py",
    # numbers on the operand's device, libtorch's error text, autocast's casts, half-type cells (extensions built)
    "test_device_rule.py", "test_error_text.py", "test_autocast_addmm.py", "test_half_cells.py",
    # the default build's str refusals compiled
    "test_leak_free_default.py",
    # compositions built at target 2.10 and run on each runtime
    "test_conv_padding_composition.py", "test_pow_inplace.py", "test_gelu_addmm.py", "test_einsum_composition.py",
    "test_meshgrid_composition.py",
    # port --fix's rewrites compiled, run against their ATen originals, and a real extension ported
    "test_port_dispatch.py", "test_port_fix_forms.py", "test_port_real_ext.py", "test_port_spline_conv.py",
    "test_port_scatter.py", "test_port_cluster.py",
    # built binaries audited and loaded on the runtimes; the audit after linking in setuptools and CMake builds
    "test_audit_matrix.py", "test_link_audit.py",
})


# The files that take longest, longest first. pytest-xdist (pyproject's addopts: `--dist loadfile`) hands whole
# files to its workers in collection order, so these go first: they start at once on separate workers instead of
# one of them being last and running alone. Re-measure with `python -m pytest -q -p no:xdist --durations=0`
# summed per file (docs/development.md).
LONGEST_FIRST = (
    "test_audit_matrix.py", "test_port_spline_conv.py", "test_port_scatter.py", "test_port_cluster.py",
    "test_port_fix.py", "test_hardening_surfaces.py", "test_example_ext.py", "test_matrix.py",
    "test_upstream_compat.py", "test_verify.py", "test_hardening.py", "test_model_memo.py", "test_probe.py",
    "test_stable_calls.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if os.path.basename(str(item.path)) in SLOW_FILES:
            item.add_marker(pytest.mark.slow)
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(os.path.basename(str(item.path)), len(rank)))  # stable: the rest in order
