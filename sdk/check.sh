#!/usr/bin/env bash
# The SDK on NuGet: packs SieveQ.Sdk and SieveQ.Protocol, inspects the packages (dependencies, README, XML docs,
# .proto files, repository metadata, symbols with SourceLink), then builds sdk/samples/SieveQ.Sdk.Sample from the
# packed package through a local folder source, outside the repository, and runs it against a real deployment
# (`sieveq deploy init` + `sieveq up`), restarting the whole deployment while it sends. Prints "N passed, M failed".
# Expects the solution built in Release (the test command builds it first); pass --build to build here.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d)
up_pid=
# SIGTERM to `sieveq up` stops every component it started; any still alive after 30 s is killed by its id.
stop_deployment() {
  [ -n "$up_pid" ] || return 0
  local children
  children=$(ps -o pid= --ppid "$up_pid" 2>/dev/null)
  kill -TERM "$up_pid" 2>/dev/null
  for _ in $(seq 1 60); do kill -0 "$up_pid" 2>/dev/null || break; sleep 0.5; done
  kill -KILL "$up_pid" 2>/dev/null
  for c in $children; do kill -0 "$c" 2>/dev/null && kill -KILL "$c" 2>/dev/null; done
  up_pid=
  return 0
}
trap 'stop_deployment; rm -rf "$work"' EXIT
. installer/lib/checks.sh
build_flag=--no-build
if [ "${1:-}" = "--build" ]; then
  build_flag=
  dotnet build service/SieveQ.Cli -c Release >/dev/null || { echo "0 passed, 1 failed"; exit 1; }
fi
sieveq_dll=$root/service/SieveQ.Cli/bin/Release/net10.0/sieveq.dll
pkg=$work/pkg
nuspec() { unzip -p "$pkg"/"$1".[0-9]*.nupkg "$1.nuspec"; }
listing() { unzip -l "$pkg"/"$1".[0-9]*.nupkg; }
export pkg
export -f nuspec listing

head=$(git rev-parse HEAD)
# ---- the packages
check "dotnet pack makes SieveQ.Protocol and SieveQ.Sdk with symbol packages" \
  bash -c "dotnet pack service/SieveQ.Protocol -c Release $build_flag -o '$pkg' && dotnet pack sdk/SieveQ.Sdk -c Release $build_flag -o '$pkg' \
    && ls '$pkg'/SieveQ.Sdk.*.nupkg '$pkg'/SieveQ.Sdk.*.snupkg '$pkg'/SieveQ.Protocol.*.nupkg '$pkg'/SieveQ.Protocol.*.snupkg"
version=$(ls "$pkg"/SieveQ.Sdk.*.nupkg 2>/dev/null | grep -v snupkg | head -1 | sed -E 's/.*SieveQ\.Sdk\.(.*)\.nupkg/\1/')
echo "     version ${version:-?}"
# What a client may depend on: the protocol messages, protobuf, the console logger. No ASP.NET Core, no server code.
check "SieveQ.Sdk depends on SieveQ.Protocol, Google.Protobuf and logging only, no framework reference" bash -c "
  deps=\$(nuspec SieveQ.Sdk | grep -o '<dependency id=\"[^\"]*\"' | cut -d'\"' -f2 | sort -u | tr '\n' ' ')
  echo \"dependencies: \$deps\"
  for d in \$deps; do case \$d in SieveQ.Protocol|Google.Protobuf|Microsoft.Extensions.Logging.Console) ;; *) echo \"not a client dependency: \$d\"; exit 1;; esac; done
  echo \"\$deps\" | grep -q SieveQ.Protocol && ! nuspec SieveQ.Sdk | grep -qi 'frameworkReference'"
check "SieveQ.Sdk carries the client assemblies and none of the server's" bash -c "
  l=\$(listing SieveQ.Sdk)
  for a in SieveQ.Sdk SieveQ.Sieve SieveQ.Sieve.Hosting SieveQ.Bft SieveQ.Transport; do echo \"\$l\" | grep -q \"lib/net10.0/\$a.dll\" || { echo \"missing \$a.dll\"; exit 1; }; done
  if echo \"\$l\" | grep -E 'Transport\.Server|Deployment|ReplicaSq|Bft\.Hosting|Rules|PreSq|Agent|AspNetCore'; then echo 'server code in the client package'; exit 1; fi"
check "SieveQ.Sdk has its README, XML documentation and licence expression" bash -c "
  listing SieveQ.Sdk | grep -q ' README.md\$' && nuspec SieveQ.Sdk | grep -q '<readme>README.md</readme>' \
  && unzip -p '$pkg'/SieveQ.Sdk.$version.nupkg README.md | grep -q 'dotnet add package SieveQ.Sdk' \
  && unzip -p '$pkg'/SieveQ.Sdk.$version.nupkg lib/net10.0/SieveQ.Sdk.xml | grep -q 'M:SieveQ.Sdk.Sender.SieveQSender.SendAsync' \
  && nuspec SieveQ.Sdk | grep -q '<license type=\"expression\">'"
check "both packages name the repository and the commit they were built from" bash -c "
  for p in SieveQ.Sdk SieveQ.Protocol; do nuspec \$p | grep -E '<repository type=\"git\" url=\"https?://[^\"]+\"' | grep -q 'commit=\"$head\"' || { nuspec \$p | grep repository; echo \"\$p: no repository/commit $head\"; exit 1; }; done"
check "the symbol package holds every bundled assembly's PDB, with a SourceLink map to the repository at $head" bash -c "
  unzip -o -q '$pkg'/SieveQ.Sdk.$version.snupkg -d '$work/snupkg' \
  && for a in SieveQ.Sdk SieveQ.Sieve SieveQ.Sieve.Hosting SieveQ.Bft SieveQ.Transport; do test -f \"$work/snupkg/lib/net10.0/\$a.pdb\" || { echo \"no \$a.pdb\"; exit 1; }; done \
  && grep -a -q 'raw.githubusercontent.com/[^\"]*/$head/' '$work/snupkg/lib/net10.0/SieveQ.Sdk.pdb'"
check "SieveQ.Protocol carries the .proto files, its README and XML documentation" bash -c "
  l=\$(listing SieveQ.Protocol)
  for f in agent presq replicasq controller; do echo \"\$l\" | grep -q \"protos/sieveq/v1/\$f.proto\" || { echo \"missing \$f.proto\"; exit 1; }; done
  echo \"\$l\" | grep -q 'lib/net10.0/SieveQ.Protocol.xml' && echo \"\$l\" | grep -q ' README.md\$' && echo \"\$l\" | grep -q 'buildTransitive/SieveQ.Protocol.props' \
  && unzip -p '$pkg'/SieveQ.Protocol.$version.nupkg protos/sieveq/v1/agent.proto | grep -q 'service Agent'"

# ---- a deployment with ids of the application's own: the agent hosts senders 1,2 and receiver 100, the sample 7 and 107
dep=$work/deployment
app=$work/app
check "a deployment with the sample's sender 7 and receiver 107 enrolled" bash -c "
  dotnet '$sieveq_dll' deploy init --dir '$dep' --senders 1,2,7 --receivers 100,107 >/dev/null && python3 '$root/sdk/sample_settings.py' '$dep' '$app' 7 107"
start_deployment() {
  local log=$1
  dotnet "$sieveq_dll" up --dir "$dep" --rate 0 >"$log" 2>&1 &
  up_pid=$!
  for _ in $(seq 1 240); do
    grep -q 'all components healthy' "$log" && return 0
    kill -0 "$up_pid" 2>/dev/null || break
    sleep 0.5
  done
  cat "$log"; return 1
}
# Every pre-SQ and replica-SQ endpoint of the deployment refuses connections.
all_endpoints_closed() {
  local port
  for port in $(python3 -c "import json,sys; c=json.load(open(sys.argv[1])); print(' '.join(u.rsplit(':',1)[1] for u in [p['url'] for p in c['preSqs']]+[r['apiUrl'] for r in c['replicas']]))" "$dep/deployment.json"); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "port $port still answers"; return 1; fi
  done
}
check "the deployment starts (sieveq up --rate 0)" start_deployment "$work/up-1.log"

# ---- the sample, built from the package outside the repository
cp -r sdk/samples "$work/samples"
rm -rf "$work/samples"/*/bin "$work/samples"/*/obj
cat >"$work/samples/nuget.config" <<CONFIG
<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <add key="sieveq-local" value="$pkg" />
  </packageSources>
</configuration>
CONFIG
# A package cache of its own, so that a package packed earlier with the same version is never taken instead.
export NUGET_PACKAGES=$work/nuget-packages
check "the sample builds against the packed SieveQ.Sdk $version from a local folder source" bash -c "
  dotnet build '$work/samples/SieveQ.Sdk.Sample' -c Release -p:SieveQSdkVersion=$version -o '$work/sample-bin' \
  && test -f '$work/sample-bin/SieveQ.Sdk.dll' && test -f '$work/nuget-packages/sieveq.sdk/$version/sieveq.sdk.$version.nupkg'"

sample=$work/sample-1.log
(cd "$app" && timeout 300 dotnet "$work/sample-bin/SieveQ.Sdk.Sample.dll" sample.json >"$sample" 2>&1; echo "exit $?" >>"$sample") &
sample_pid=$!
for _ in $(seq 1 240); do grep -qE '^phase 1:|^exit ' "$sample" && break; sleep 0.5; done
check "the sample's sender and receiver are confirmed enrolled by the running deployment (ConnectAsync)" grep -q '^connected: sender 7 and receiver 107 are enrolled in the running deployment' "$sample"
check "the sample sends and receives the first half" grep -q '^phase 1: ' "$sample"
# The whole deployment stops (every replica-SQ, pre-SQ and the agent) and starts again while the sample sends.
stop_deployment
check "every pre-SQ and replica-SQ of the deployment is down" all_endpoints_closed
check "the sample goes on accepting messages while the deployment is down" bash -c "! grep -q '^phase 2: all' '$sample' && kill -0 $sample_pid"
sleep 3
check "the deployment restarts" start_deployment "$work/up-2.log"
wait "$sample_pid"
echo "     --- sample output"; sed 's/^/     /' "$sample"
check "the sample's sends above the route's limit and to an unenrolled receiver are refused at the call" bash -c "
  grep -q '^refused: TooLarge (limit 65536 bytes) for receiver 107' '$sample' && grep -q '^refused: ReceiverNotEnrolled .*receiver 999999' '$sample'"
check "every message arrived in order and exactly once across the restart" bash -c "grep -q '^done: 200 sent, 200 received in order, exactly once' '$sample' && grep -q '^exit 0' '$sample'"
check "the sample's sender saw the outage (it reconnected to a pre-SQ)" grep -qE '^done: .* [1-9][0-9]* reconnects' "$sample"
# Not a pass/fail: a slow restart (more than the sender's UnavailableAfter of 30 s without acknowledgements) makes the
# sample replace its sender, which is what it is written to do.
if grep -qE '^done: .*sender replaced [1-9]' "$sample"; then
  echo "     note: acknowledgements stopped for 30 s or more after the restart, and the sample replaced its sender on its state folder"
fi
check "a second run on the same state continues (numbers, cursors) and delivers its own messages" bash -c "
  cd '$app' && timeout 300 dotnet '$work/sample-bin/SieveQ.Sdk.Sample.dll' sample.json >'$work/sample-2.log' 2>&1; rc=\$?
  cat '$work/sample-2.log'; [ \$rc -eq 0 ] && grep -q '^done: 200 sent, 200 received in order, exactly once' '$work/sample-2.log'"
check "the sample refuses a malformed settings file with a clear error" bash -c "
  echo '{\"deployment\": 3}' >'$work/bad.json'; dotnet '$work/sample-bin/SieveQ.Sdk.Sample.dll' '$work/bad.json' 2>'$work/bad.err'; rc=\$?
  cat '$work/bad.err'; [ \$rc -eq 2 ] && grep -q '^error: .*bad.json' '$work/bad.err'"
stop_deployment
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
