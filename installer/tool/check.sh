#!/usr/bin/env bash
# `sieveq` as a .NET tool: packs service/SieveQ.Cli (PackAsTool), installs the package into a temporary tool path
# from a local source, and runs the installed command. Prints "N passed, M failed". Expects the solution built
# in Release (the test command builds it first); pass --build to build here.
set -uo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. installer/lib/checks.sh
build_flag=--no-build
[ "${1:-}" = "--build" ] && build_flag=

check "dotnet pack makes a tool package" \
  bash -c "dotnet pack service/SieveQ.Cli -c Release $build_flag -o '$work/pkg' && ls '$work/pkg'/SieveQ.Cli.*.nupkg"
check "the package is a .NET tool named sieveq" \
  bash -c "unzip -p '$work'/pkg/SieveQ.Cli.*.nupkg 'tools/*/any/DotnetToolSettings.xml' | grep -q 'Command Name=\"sieveq\"'"
check "dotnet tool install from a local source" \
  timeout 300 dotnet tool install --tool-path "$work/tools" --add-source "$work/pkg" SieveQ.Cli
check "the installed sieveq lists its commands" \
  bash -c "'$work/tools/sieveq' --help | grep -q 'replica-sq' && '$work/tools/sieveq' --help | grep -q 'pre-sq'"
check "the installed sieveq runs the simulator" \
  bash -c "'$work/tools/sieveq' sim --seeds 20 --faults all | grep -q '^20 passed, 0 failed'"
check "the installed sieveq creates a deployment" \
  bash -c "'$work/tools/sieveq' deploy init --dir '$work/deployment' && test -f '$work/deployment/deployment.json'"
check "dotnet tool uninstall" \
  dotnet tool uninstall --tool-path "$work/tools" SieveQ.Cli
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
