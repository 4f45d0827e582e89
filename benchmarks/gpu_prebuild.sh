#!/usr/bin/env bash
# Prebuild, on a machine without a GPU, what benchmarks/gpu_check.sh needs on a CUDA machine that has torch but no
# network: into .gpu-prebuilt/ (ignored by git; carry it with the working tree)
#   shimgen_example_stable_ops-*.whl   the example's one abi3 wheel, CPU and CUDA kernels (nvcc found here, or
#                    installed: .ci/run), target 2.10: it loads on every torch from 2.10, CPU or CUDA build, and
#                    on any CPython >= 3.9
#   wheels/          shimgen's own dependencies (pyyaml, jinja2, black, clang-format) as wheels for the GPU
#                    machine's Python (--python 3.12 by default), installed there only where missing
#
#   bash benchmarks/gpu_prebuild.sh [--python 3.12] [--no-wheels]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
pyver=3.12
wheels=1
while [ $# -gt 0 ]; do
  case "$1" in
    --python) pyver="$2"; shift 2 ;;
    --no-wheels) wheels=0; shift ;;
    *) echo "gpu_prebuild: unknown argument $1 (--python X.Y, --no-wheels)" >&2; exit 2 ;;
  esac
done
out=.gpu-prebuilt
mkdir -p "$out"
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"

# The wheel, from a copy of the example (its build tree stays out of the source tree); CUDA kernels required.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r examples/stable_ops "$work/"
rm -rf "$work/stable_ops/build" "$work/stable_ops/dist"
(cd "$work/stable_ops" && STABLE_OPS_CUDA=1 python -m pip wheel -q --no-build-isolation --no-deps --no-index \
  -w dist . >"$work/build.log" 2>&1) || { tail -30 "$work/build.log" >&2; echo "gpu_prebuild: the wheel did not build" >&2; exit 1; }
whl=$(ls "$work"/stable_ops/dist/*.whl)
rm -f "$out"/*.whl
cp "$whl" "$out/"  # pip installs a wheel only under its own file name
echo "gpu_prebuild: $out/$(basename "$whl") ($(du -k "$whl" | cut -f1) KiB)"

if [ "$wheels" = 1 ]; then
  deps=$(python - <<'PY'
import tomllib
with open("pyproject.toml", "rb") as f:
    print(" ".join(tomllib.load(f)["project"]["dependencies"]))
PY
)
  # shellcheck disable=SC2086
  python -m pip download -q --only-binary=:all: --python-version "$pyver" --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 --platform linux_x86_64 \
    -d "$out/wheels" $deps
  echo "gpu_prebuild: $out/wheels: $(ls "$out/wheels" | wc -l) wheels for Python $pyver ($deps and theirs)"
fi
echo "gpu_prebuild: $(du -sh "$out" | cut -f1) in $out (carry it: run(carry=[\"$out\"]))"
