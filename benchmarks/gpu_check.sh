#!/usr/bin/env bash
# The GPU proof in one command, for a CUDA machine with torch installed and no network (docs/cuda.md, "Checking
# on a GPU"). Prebuild on any machine first: bash benchmarks/gpu_prebuild.sh (the example's wheel, shimgen's
# dependencies as wheels) and carry .gpu-prebuilt/ with the working tree. Three parts, each timed:
#   1. example   the example wheel's own tests with the device as torch's default device
#                (STABLE_OPS_TEST_DEVICE), its CUDA kernel and current-stream tests included
#   2. bench     per-call cost, wrapper vs at::, small tensors on the device, the number routes
#                (benchmarks/bench_scalars.py --device; compiles with the machine's C++ compiler)
#   3. verify    shimgen --verify --device over every op of the installed torch's yaml (or --ops), stopped after
#                --verify-seconds (default 480)
# Artefacts (logs, the coverage report) go to $OUT when set, else /tmp/gpu-check. Exit 0 when every part passed;
# 1 when one failed or ran out of time; 2 for a usage error or no such device.
#
#   bash benchmarks/gpu_check.sh [--device cuda|cuda:N|cpu] [--ops LIST] [--verify-seconds N] [--jobs N]
#                                [--iters N] [--rounds N] [--skip example,bench,verify]
# --device cpu is the dry run: every part on CPU tensors, as on a machine without a GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
device=cuda
ops=""
verify_seconds=480
jobs=$(nproc 2>/dev/null || echo 2)
iters=2000
rounds=5
skip=""
while [ $# -gt 0 ]; do
  case "$1" in
    --device) device="$2"; shift 2 ;;
    --ops) ops="$2"; shift 2 ;;
    --verify-seconds) verify_seconds="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --iters) iters="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --skip) skip="$2"; shift 2 ;;
    *) echo "gpu_check: unknown argument $1 (see the head of $0)" >&2; exit 2 ;;
  esac
done
case "$device" in cpu|cuda|cuda:[0-9]*) ;; *) echo "gpu_check: --device $device: expected cpu, cuda or cuda:N" >&2; exit 2 ;; esac
art="${OUT:-/tmp/gpu-check}"
mkdir -p "$art"
art=$(cd "$art" && pwd)
prebuilt="$root/.gpu-prebuilt"
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
export SHIMGEN_VERIFY_OPINFO="${SHIMGEN_VERIFY_OPINFO:-off}"  # OpInfo's recording costs minutes cold: opt in

say() { echo "gpu_check: $*" | tee -a "$art/summary.txt"; }
: >"$art/summary.txt"

python -c "import torch" 2>/dev/null || { echo "gpu_check: $(command -v python || echo python) cannot import torch" >&2; exit 2; }
if ! info=$(python -c "import sys, torch; d = sys.argv[1]
ok = d == 'cpu' or (torch.cuda.is_available() and int((d.partition(':')[2] or '0')) < torch.cuda.device_count())
name = torch.cuda.get_device_name(torch.device(d)) if d != 'cpu' and ok else 'cpu'
print(torch.__version__, torch.version.cuda or '-', name.replace(' ', '_')); sys.exit(0 if ok else 3)" "$device" 2>&1); then
  read -r v c _ <<<"${info##*$'\n'}"
  echo "gpu_check: --device $device: torch $v (CUDA ${c:-?}) sees no such device here (torch.cuda.is_available() is False or the index is out of range)" >&2
  exit 2
fi
read -r torch_version cuda_version device_name <<<"$info"
say "torch $torch_version (CUDA $cuda_version), Python $(python -c 'import platform; print(platform.python_version())'), device $device ($device_name), $(nproc) cores"

# shimgen's own dependencies: installed ones, else the prebuilt wheels (no network here).
if ! python -c "import yaml, jinja2, black, clang_format" 2>/dev/null; then
  if [ -d "$prebuilt/wheels" ]; then
    python -m pip install -q --no-index --find-links "$prebuilt/wheels" --target "$art/site" \
      $(ls "$prebuilt/wheels" | sed -n 's/^\(PyYAML\|pyyaml\|Jinja2\|jinja2\|black\|clang_format\)-.*/\1/p' | sort -u) \
      >"$art/deps.log" 2>&1 || { say "deps: installing from $prebuilt/wheels failed (see $art/deps.log)"; exit 1; }
    export PYTHONPATH="$PYTHONPATH:$art/site"
    say "deps: installed shimgen's dependencies from $prebuilt/wheels into $art/site"
  else
    say "deps: yaml, jinja2, black or clang_format missing and no $prebuilt/wheels (run benchmarks/gpu_prebuild.sh)"
    exit 1
  fi
fi

status=0
declare -a rows
part() {  # part NAME RESULT SECONDS DETAIL
  rows+=("$(printf '%-8s %-8s %6ss  %s' "$1" "$2" "$3" "$4")")
  [ "$2" = ok ] || [ "$2" = skipped ] || status=1
}
skipped() { case ",$skip," in *",$1,"*) return 0 ;; esac; return 1; }

# 1. The example's tests, the device as torch's default device.
if skipped example; then part example skipped 0 "--skip"; else
  t0=$SECONDS
  whl=$(ls "$prebuilt"/shimgen_example_stable_ops-*.whl 2>/dev/null | head -1)
  if [ ! -f "$whl" ]; then
    say "example: no prebuilt wheel in $prebuilt: building it here"
    rm -rf "$art/example-src" && cp -r examples/stable_ops "$art/example-src" && rm -rf "$art/example-src/build"
    (cd "$art/example-src" && python -m pip wheel -q --no-build-isolation --no-deps --no-index -w dist .) \
      >"$art/example-build.log" 2>&1 && whl=$(ls "$art"/example-src/dist/*.whl 2>/dev/null | head -1)
  fi
  if [ ! -f "$whl" ]; then
    part example FAIL $((SECONDS - t0)) "no wheel (see $art/example-build.log)"
  else
    rm -rf "$art/example-site"
    tests="$root/examples/stable_ops/tests"
    python -m pip install -q --no-deps --no-index --target "$art/example-site" "$whl" >"$art/example.log" 2>&1 &&
    (cd "$art" && PYTHONPATH="$art/example-site:$PYTHONPATH" STABLE_OPS_TEST_DEVICE="$device" \
      timeout 600 python -m unittest discover -v -s "$tests" -t "$tests") >>"$art/example.log" 2>&1
    rc=$?
    ran=$(grep -E "^Ran [0-9]+ tests" "$art/example.log" | tail -1)
    verdict=$(tail -1 "$art/example.log")
    part example "$([ $rc = 0 ] && echo ok || echo FAIL)" $((SECONDS - t0)) "$(basename "$whl"), default device $device: $ran, $verdict (log: $art/example.log)"
  fi
fi

# 2. Per-call cost, wrapper vs at::, the number routes (it stops on a wrapper result that differs from at::'s).
if skipped bench; then part bench skipped 0 "--skip"; elif ! command -v "${CXX:-g++}" >/dev/null && ! command -v c++ >/dev/null; then
  part bench FAIL 0 "no C++ compiler (g++/c++): the at:: and wrapper builds compile here"
else
  t0=$SECONDS
  timeout 900 python benchmarks/bench_scalars.py --device "$device" --iters "$iters" --rounds "$rounds" \
    >"$art/bench_scalars.txt" 2>"$art/bench_scalars.log"
  rc=$?
  cat "$art/bench_scalars.txt"
  part bench "$([ $rc = 0 ] && echo ok || echo FAIL)" $((SECONDS - t0)) "bench_scalars.py --device $device --iters $iters --rounds $rounds: $art/bench_scalars.txt"
fi

# 3. shimgen --verify --device over the whole yaml (or --ops), bounded in time.
if skipped verify; then part verify skipped 0 "--skip"; else
  t0=$SECONDS
  if [ -z "$ops" ]; then
    ops=$(python -c "from shimgen.generate.parse import NativeYaml; print(','.join(sorted(NativeYaml().by_name)))")
    what="every op of torch $torch_version's yaml"
  else
    what="--ops $ops"
  fi
  rm -rf "$art/verify"
  mkdir -p "$art/verify"
  timeout --signal=INT --kill-after=30 "$verify_seconds" python -m shimgen --ops "$ops" --out "$art/verify/out" \
    --verify --device "$device" --build-dir "$art/verify/build" --report "$art/verify/coverage.md" --jobs "$jobs" \
    >"$art/verify/table.txt" 2>"$art/verify/verify.log"
  rc=$?
  summary=$(grep -E "overloads proven" "$art/verify/table.txt" | tr '\n' ' ')
  if [ $rc = 124 ] || [ $rc = 130 ]; then
    part verify TIMEOUT $((SECONDS - t0)) "$what: ran past ${verify_seconds}s (pass --ops or --verify-seconds; log $art/verify/verify.log)"
  else
    part verify "$([ $rc = 0 ] && echo ok || echo FAIL)" $((SECONDS - t0)) "$what, SHIMGEN_VERIFY_OPINFO=$SHIMGEN_VERIFY_OPINFO: $summary(report $art/verify/coverage.md)"
  fi
fi

say "part     result   time   detail"
for r in "${rows[@]}"; do say "$r"; done
exit $status
