# Sourced by the package checks (installer/tool/check.sh, sdk/check.sh): the pass/fail tally behind their final
# "N passed, M failed" line, and unzip for reading packages. Needs $work (a scratch folder) set by the caller.
passed=0
failed=0
check() {
  local name=$1; shift
  if "$@" >"$work/out.txt" 2>&1; then
    passed=$((passed + 1)); echo "ok   $name"
  else
    failed=$((failed + 1)); echo "FAIL $name"; tail -20 "$work/out.txt" | sed 's/^/     /'
  fi
}
if ! command -v unzip >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null 2>&1; apt-get install -y -qq unzip >/dev/null 2>&1
fi
