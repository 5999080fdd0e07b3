#!/usr/bin/env bash
# Builds one libFuzzer target of Fuzz/ with the fuzzer and address sanitizers (Courier's own
# modules instrumented too) and runs it for SECONDS on a temporary copy of its committed seed
# corpus (Fuzz/Corpus/TARGET), so that new inputs never land in the repository.
#
#   Scripts/fuzz.sh TARGET SECONDS     # e.g. Scripts/fuzz.sh FuzzGzip 60
#   Scripts/fuzz.sh --list             # the targets
#
# Exits non-zero on a crash, a sanitizer report, a leak of the time or memory bounds
# (timeout, out-of-memory); the reproducer is written to $FUZZ_ARTIFACTS (default
# .build/fuzz-artifacts/TARGET/) and can be replayed with
#   Fuzz/.build/release/TARGET FILE
# Prints `FUZZ TARGET executions=N seconds=S` at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi

targets=(FuzzGzip FuzzEnvelope FuzzJSONDecoding FuzzHeaders FuzzURLBuilder FuzzRequestReader)
if [ "${1:-}" = "--list" ]; then printf '%s\n' "${targets[@]}"; exit 0; fi
if [ $# -ne 2 ] || ! [[ "$2" =~ ^[0-9]+$ ]] || ! [[ " ${targets[*]} " == *" $1 "* ]]; then
  echo "usage: $0 TARGET SECONDS   (TARGET: ${targets[*]})" >&2
  exit 2
fi
target="$1"
seconds="$2"

# Release (optimised, as fuzzing usually is: several times the executions of a debug build),
# with -enable-testing because the targets use `@testable import` for internal entry points
# (RequestReader, JSONScanner, the pipeline's validate/decode). -Xswiftc reaches every module,
# so Courier's own code is instrumented for coverage and checked by the address sanitizer.
build_log="$(mktemp)"
if ! swift build --package-path Fuzz --product "$target" -c release -Xswiftc -enable-testing \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -warnings-as-errors >"$build_log" 2>&1; then
  cat "$build_log" >&2
  rm -f "$build_log"
  echo "fuzz.sh: building $target failed" >&2
  exit 1
fi
rm -f "$build_log"
binary="Fuzz/.build/release/$target"
[ -x "$binary" ] || { echo "fuzz.sh: $binary was not built" >&2; exit 1; }

corpus="$(mktemp -d)"
artifacts="${FUZZ_ARTIFACTS:-.build/fuzz-artifacts/$target}"
mkdir -p "$artifacts"
log="$artifacts/fuzz.log"
trap 'rm -rf "$corpus"' EXIT
cp Fuzz/Corpus/"$target"/* "$corpus"/

export SWIFT_BACKTRACE=enable=no
# XCTest and Foundation hold memory until exit by design; leaks are not what is looked for.
export ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}"
status=0
# -max_len: bodies, headers and requests up to 64 KiB (the request reader's socket pair holds
# the whole input). -rss_limit_mb/-malloc_limit_mb: an input that makes Courier allocate
# more than 64 MiB at once is a finding (inputs are at most 64 KiB; the gzip limit here is
# 1 MiB; MockServer grows a body by at most 1 MiB ahead of what arrived).
"$binary" "$corpus" \
  -max_total_time="$seconds" -max_len=65536 -timeout=10 \
  -rss_limit_mb=2048 -malloc_limit_mb=64 \
  -print_final_stats=1 -artifact_prefix="$artifacts/" 2>&1 | tee "$log" \
  | grep -vE '^#[0-9]+\s+(NEW|REDUCE|pulse)|NEW_FUNC|# Uses: ' || status=${PIPESTATUS[0]}
executions="$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -1)"
echo "FUZZ $target executions=${executions:-0} seconds=$seconds status=$status"
exit "$status"
