#!/usr/bin/env bash
# Regenerates the SDK's public API baseline (sdk/SieveQ.Sdk/PublicAPI.*.txt, checked at every build by
# Microsoft.CodeAnalysis.PublicApiAnalyzers: RS0016 for public API not in the baseline, RS0017 for baseline
# entries no longer in the code). The analyzer's code fix, applied by `dotnet format`, writes the entries.
#   bash sdk/api-baseline.sh          the API as it is now goes to PublicAPI.Unshipped.txt (after an intended change)
#   bash sdk/api-baseline.sh --ship   a release: the unshipped entries move to PublicAPI.Shipped.txt
# Review the diff: every line added or removed there is a change every application on the SDK sees.
set -euo pipefail
cd "$(dirname "$0")/SieveQ.Sdk"
shipped=PublicAPI.Shipped.txt
unshipped=PublicAPI.Unshipped.txt
if [ "${1:-}" = "--ship" ]; then
  { echo '#nullable enable'; grep -hv '^#nullable' "$shipped" "$unshipped" | grep -v '^\*REMOVED\*' | LC_ALL=C sort -u; } >"$shipped.new"
  mv "$shipped.new" "$shipped"
  echo '#nullable enable' >"$unshipped"
  echo "moved the unshipped API to $shipped"
  exit 0
fi
[ -s "$shipped" ] || echo '#nullable enable' >"$shipped"
echo '#nullable enable' >"$unshipped"
# Entries of the shipped baseline the code no longer has get marked *REMOVED* in the unshipped file (RS0017's fix).
dotnet format analyzers SieveQ.Sdk.csproj --diagnostics RS0016 RS0017 --severity warn --verbosity quiet || true
{ head -1 "$unshipped"; tail -n +2 "$unshipped" | LC_ALL=C sort -u; } >"$unshipped.new" && mv "$unshipped.new" "$unshipped"
echo "$(($(wc -l <"$unshipped") - 1)) entries in $unshipped; checking with a build:"
dotnet build SieveQ.Sdk.csproj -c Release --verbosity quiet -p:TreatWarningsAsErrors=true
