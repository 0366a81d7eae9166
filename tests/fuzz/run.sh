#!/usr/bin/env bash
# Coverage-guided fuzzing of SieveQ's parsers: afl-fuzz (AFL++) drives tests/fuzz/SieveQ.Fuzz through
# SharpFuzz, over copies of the product assemblies that the sharpfuzz tool instrumented (the build output
# that other tests use is never touched).
#
#   tests/fuzz/run.sh [seconds-per-target] [target...]     (default: 20 s, every target)
#
# Prints per target the execs done, the paths (corpus entries) found, crashes and hangs, each crash as hex
# with the exception its replay throws, then one line "N passed, M failed". A target passes when afl-fuzz
# ran, executed inputs and saved no crash and no hang that reproduces outside afl.
# SIEVEQ_FUZZ_NO_BUILD=1 skips the build when the caller has just built the solution in Release.
# SIEVEQ_FUZZ_KEEP=DIR keeps afl's output directories (queue, crashes, hangs) under DIR.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

seconds=${1:-20}
shift || true
all_targets=(handshake subscription id-lease admin-command snapshot policy-mirror endpoint-policy execute-result)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")
case "$seconds" in '' | *[!0-9]*) echo "usage: $0 [seconds-per-target] [target...]" >&2; exit 2 ;; esac

# The assemblies that hold the parsers under test; the harness itself and the framework stay uninstrumented.
instrumented=(SieveQ.Bft SieveQ.Bft.Hosting SieveQ.Sieve SieveQ.Rules SieveQ.Policy SieveQ.Firewall)
# The canary's planted bug lives in an assembly of its own, instrumented only when the canary is asked for.
for t in "${targets[@]}"; do [ "$t" = canary ] && instrumented+=(SieveQ.Fuzz.Canary); done
harness_dir=tests/fuzz/SieveQ.Fuzz
harness_out=$harness_dir/bin/Release/net10.0

fail_setup() {
  echo "fuzz setup failed: $1"
  echo "0 passed, ${#targets[@]} failed"
  exit 1
}

# afl++ from Debian, installed the way driver/scripts/ensure-deps.sh installs its packages.
if ! command -v afl-fuzz >/dev/null 2>&1; then
  echo "installing afl++ (Debian package)"
  sudo=""
  [ "$(id -u)" != "0" ] && sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  timeout 300 $sudo apt-get update -q >/dev/null 2>&1 || true
  timeout 600 $sudo apt-get install -y -q --no-install-recommends afl++ >/dev/null 2>&1 || true
  command -v afl-fuzz >/dev/null 2>&1 || fail_setup "afl-fuzz is not installed and apt-get install afl++ did not provide it"
fi
echo "afl-fuzz: $(command -v afl-fuzz) ($(dpkg-query -W -f='${Version}' afl++ 2>/dev/null || echo 'version unknown'))"

timeout 300 dotnet tool restore >/dev/null || fail_setup "dotnet tool restore (sharpfuzz) failed"

if [ "${SIEVEQ_FUZZ_NO_BUILD:-0}" != "1" ] || [ ! -f "$harness_out/SieveQ.Fuzz.dll" ]; then
  timeout 900 dotnet build "$harness_dir" -c Release -v q -nologo >/dev/null 2>&1 \
    || { timeout 900 dotnet build "$harness_dir" -c Release -v q -nologo 2>&1 | grep -E 'error' | head -20; fail_setup "building the harness failed"; }
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/sieveq-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp -r "$harness_out" "$work/bin"
for assembly in "${instrumented[@]}"; do
  timeout 300 dotnet sharpfuzz "$work/bin/$assembly.dll" >"$work/instrument-$assembly.log" 2>&1 \
    || { cat "$work/instrument-$assembly.log"; fail_setup "sharpfuzz could not instrument $assembly.dll"; }
done
echo "instrumented copies of: ${instrumented[*]}"

# No root-only system changes: afl's checks of core_pattern and the CPU governor are waived instead.
export AFL_SKIP_BIN_CHECK=1             # the target is dotnet; the instrumentation is in the .NET assemblies
export AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1
export AFL_NO_UI=1 AFL_FAST_CAL=1
unset AFL_DEBUG

stat_of() { awk -F' *: *' -v k="$1" '$1 == k {print $2}' "$2" 2>/dev/null | head -1; }

passed=0
failed=0
for target in "${targets[@]}"; do
  corpus=tests/fuzz/corpus/$target
  out=$work/out-$target
  echo
  echo "== $target (${seconds}s)"
  if [ ! -d "$corpus" ]; then
    echo "no seed corpus at $corpus"
    failed=$((failed + 1))
    continue
  fi
  dict=()
  [ -f "tests/fuzz/dict/$target.dict" ] && dict=(-x "tests/fuzz/dict/$target.dict")
  start=$(date +%s)
  for attempt in 1 2; do
    # -V stops afl after the budget; the outer timeout only catches an afl that fails to stop.
    timeout --kill-after=10 $((seconds + 90)) afl-fuzz -i "$corpus" -o "$out" -t 2000 -m none -V "$seconds" "${dict[@]}" \
      -- dotnet "$work/bin/SieveQ.Fuzz.dll" "$target" >"$work/afl-$target.log" 2>&1
    rc=$?
    # On a machine at a load of 15 per core, afl's dry run once saw an empty coverage map for a target that
    # runs fine alone ("No instrumentation detected"): a start-up that aborts before executing anything gets
    # one more try. A target that really lacks instrumentation aborts twice and fails below.
    if [ "$attempt" -eq 1 ] && [ "$rc" -ne 0 ] && grep -q "PROGRAM ABORT" "$work/afl-$target.log" \
      && [ ! -s "$out/default/fuzzer_stats" ] && [ -z "$(ls "$out"/default/crashes/id:* 2>/dev/null)" ]; then
      echo "afl-fuzz aborted before running: $(grep -A0 'PROGRAM ABORT' "$work/afl-$target.log" | sed 's/\x1b\[[0-9;]*m//g' | tr -s ' ' | head -1); trying once more"
      rm -rf "$out"
      sleep 5
      continue
    fi
    break
  done
  stats=$out/default/fuzzer_stats
  execs=$(stat_of execs_done "$stats"); execs=${execs:-0}
  paths=$(stat_of corpus_count "$stats"); paths=${paths:-$(stat_of paths_total "$stats")}; paths=${paths:-0}
  crashes=$(stat_of saved_crashes "$stats"); crashes=${crashes:-$(stat_of unique_crashes "$stats")}; crashes=${crashes:-0}
  hangs=$(stat_of saved_hangs "$stats"); hangs=${hangs:-$(stat_of unique_hangs "$stats")}; hangs=${hangs:-0}
  echo "afl-fuzz exit $rc after $(($(date +%s) - start))s: execs $execs, paths $paths (seeds $(ls "$corpus" | wc -l)), crashes $crashes, hangs $hangs"
  ok=1
  if [ "$rc" -ne 0 ] || [ ! -f "$stats" ] || [ "$execs" -eq 0 ]; then
    ok=0
    echo "afl-fuzz did not run this target; its last words:"
    grep -vE '^\s*$' "$work/afl-$target.log" | tail -15 | sed 's/^/  /'
  fi
  if [ "$crashes" -gt 0 ]; then
    ok=0
    for f in $(ls "$out"/default/crashes/id:* 2>/dev/null | head -5); do
      echo "crash $(basename "$f")"
      echo "  input ($(stat -c %s "$f") bytes, hex): $(od -An -v -tx1 "$f" | tr -d ' \n' | cut -c1-1024)"
      timeout 60 dotnet "$harness_out/SieveQ.Fuzz.dll" replay "$target" "$f" 2>&1 | sed -n '1,8p' | sed 's/^/  /'
    done
  fi
  if [ "$hangs" -gt 0 ]; then
    # afl counts an input as a hang past -t; a GC pause or a loaded machine can do that once, so a hang fails the
    # target only when its replay, alone and without instrumentation, still runs past 10 s.
    for f in $(ls "$out"/default/hangs/id:* 2>/dev/null | head -5); do
      timeout 10 dotnet "$harness_out/SieveQ.Fuzz.dll" replay "$target" "$f" >"$work/replay.log" 2>&1
      replay_rc=$?
      if [ "$replay_rc" -eq 0 ]; then
        echo "hang $(basename "$f") did not reproduce outside afl (replay finished within 10 s)"
        continue
      fi
      ok=0
      if [ "$replay_rc" -eq 124 ]; then
        echo "hang $(basename "$f") reproduces: replay still running after 10 s"
      else
        echo "hang $(basename "$f") crashes on replay:"
        sed -n '1,8p' "$work/replay.log" | sed 's/^/  /'
      fi
      echo "  input ($(stat -c %s "$f") bytes, hex): $(od -An -v -tx1 "$f" | tr -d ' \n' | cut -c1-1024)"
    done
  fi
  if [ -n "${SIEVEQ_FUZZ_KEEP:-}" ]; then
    mkdir -p "$SIEVEQ_FUZZ_KEEP" && cp -r "$out" "$SIEVEQ_FUZZ_KEEP/" && echo "afl output kept in $SIEVEQ_FUZZ_KEEP/out-$target"
  fi
  if [ "$ok" -eq 1 ]; then
    echo "PASS $target"
    passed=$((passed + 1))
  else
    echo "FAIL $target"
    failed=$((failed + 1))
  fi
done

echo
echo "fuzzing took ${SECONDS}s in all (setup, instrumentation, ${#targets[@]} targets of ${seconds}s)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
