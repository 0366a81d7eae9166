#!/usr/bin/env bash
# Builds installer/msi/build/SieveQ.msi with Debian's wixl from SieveQ.wxs, the self-contained win-x64
# publishes of service/SieveQ.Cli (build/publish) and admin-ui/SieveQ.AdminUi (build/publish-console), the WFP
# driver (driver/, cross-built with mingw-w64 into build/driver) and the custom actions' sieveq-setup.exe
# (installer/setup/, mingw-w64). Needs the .NET SDK; installs wixl, msitools and mingw-w64 from apt when missing.
#
# Environment:
#   SIEVEQ_VERSION         ProductVersion of the package (major.minor.build), default 1.0.0
#   SIEVEQ_MSI_OUT         output file, default installer/msi/build/SieveQ.msi
#   SIEVEQ_MSI_SKIP_PUBLISH=1  reuse build/publish and build/publish-console if they exist (check.sh builds a second version this way)
#   SIEVEQ_WIN_X64_ARTIFACTS   the publishes' obj/ and bin/, default build/artifacts; the test command shares one with the
#                          driver's bridge check (driver/Makefile), locked with flock while a publish runs in it
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="$here/build"
publish="$build/publish"
version="${SIEVEQ_VERSION:-1.0.0}"
out="${SIEVEQ_MSI_OUT:-$build/SieveQ.msi}"

log() { printf '[msi build] %s\n' "$*" >&2; }

if ! command -v wixl >/dev/null || ! command -v msiinfo >/dev/null || ! command -v msibuild >/dev/null \
    || ! command -v x86_64-w64-mingw32-gcc >/dev/null || ! command -v x86_64-w64-mingw32-dlltool >/dev/null; then
    log "installing wixl, msitools and mingw-w64 from apt"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq wixl msitools gcc-mingw-w64-x86-64 binutils-mingw-w64-x86-64 make >/dev/null
fi

if [[ ! "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    echo "SIEVEQ_VERSION must be major.minor.build, got '$version'" >&2
    exit 2
fi

mkdir -p "$build"

# publish_project PROJECT OUT: self-contained win-x64, in the MSI's own artifacts folder (the repository's bin/ and obj/,
# Linux builds and tests, are left alone; the two publishes share it, so the projects both use are built once).
# RunAnalyzers=false: the analyzers (and code style, warnings as errors) are the solution build's job, on the same
# sources; here they would only double the compile's CPU time. Source generators still run (Roslyn's /skipanalyzers
# skips analyzers only), so the assemblies are the same.
artifacts="${SIEVEQ_WIN_X64_ARTIFACTS:-$build/artifacts}"
publish_project() {
    local t0=$SECONDS
    log "publishing $1 self-contained for win-x64"
    rm -rf "$2"
    mkdir -p "$(dirname "$artifacts")"
    flock "$artifacts.lock" dotnet publish "$repo/$1" -c Release -r win-x64 --self-contained -p:RunAnalyzers=false \
        --artifacts-path "$artifacts" -o "$2" -nologo -v quiet >"$build/publish.log" 2>&1 \
        || { tail -n 40 "$build/publish.log" >&2; exit 1; }
    log "published $1 ($((SECONDS - t0)) s)"
}

console_publish="$build/publish-console"
if [[ "${SIEVEQ_MSI_SKIP_PUBLISH:-0}" == 1 && -f "$publish/sieveq.exe" && -f "$console_publish/SieveQ.AdminUi.exe" ]]; then
    log "reusing $publish and $console_publish"
else
    publish_project service/SieveQ.Cli "$publish"
    publish_project admin-ui/SieveQ.AdminUi "$console_publish"
    # web.config is for hosting under IIS, which the service does not do.
    rm -f "$console_publish/web.config"
fi
[[ -f "$publish/sieveq.exe" ]] || { echo "publish produced no sieveq.exe" >&2; exit 1; }
[[ -f "$console_publish/SieveQ.AdminUi.exe" ]] || { echo "the console's publish has no SieveQ.AdminUi.exe" >&2; exit 1; }
if [[ -n "$(find "$publish" -mindepth 1 -type d -print -quit)" ]]; then
    echo "the CLI's publish has subfolders; ProgramFiles.wxs generation expects a flat folder there" >&2
    exit 1
fi
# The console finds its static assets through this manifest, relative to its own folder; the build tree's
# SieveQ.AdminUi.staticwebassets.runtime.json (paths into the NuGet cache and the source tree) must not be shipped.
[[ -f "$console_publish/SieveQ.AdminUi.staticwebassets.endpoints.json" ]] || { echo "the console's publish has no static assets manifest" >&2; exit 1; }
[[ ! -e "$console_publish/SieveQ.AdminUi.staticwebassets.runtime.json" ]] || { echo "the console's publish has the build tree's static web assets manifest" >&2; exit 1; }

# wixl has no heat that fits (wixl-heat adds a Directory named "."): one component per published file, ids from
# the file's path below INSTALLFOLDER (its name for the CLI's files, console/... for the console's) hashed with
# SHA-1 (stable across builds), Guid="*" (wixl derives it from the key path, stable too). The console is a publish of
# its own (a web app: its runtime resolves Microsoft.Extensions.* from the ASP.NET Core runtime pack where the CLI
# takes the newer NuGet packages, so the two cannot share one folder) in INSTALLFOLDER\console (CONSOLEFOLDER, in
# SieveQ.wxs). The app host's copies for the services are in SieveQ.wxs.
id_of() { printf '%s' "$1" | sha1sum | cut -c1-32 | tr a-f A-F; }
refs=()
# emit_dir ROOT PREFIX REL INDENT: the components of the files in ROOT/REL, then its subfolders as Directory elements;
# PREFIX + REL + name is the file's path below INSTALLFOLDER.
emit_dir() {
    local root="$1" prefix="$2" rel="$3" indent="$4" name path h sub
    while IFS= read -r name; do
        case "$name" in
            *'&'* | *'<'* | *'>'* | *'"'*) echo "unexpected character in published file name: $rel$name" >&2; exit 1 ;;
        esac
        path="$prefix$rel$name"
        h="$(id_of "$path")"
        echo "$indent<Component Id=\"c$h\" Guid=\"*\" Win64=\"yes\">"
        echo "$indent  <File Id=\"f$h\" Name=\"$name\" Source=\"\$(var.$5)/$rel$name\" KeyPath=\"yes\" />"
        echo "$indent</Component>"
        refs+=("c$h")
    done < <(cd "$root/$rel" && find . -maxdepth 1 -type f -printf '%f\n' | LC_ALL=C sort)
    while IFS= read -r sub; do
        case "$sub" in
            *'&'* | *'<'* | *'>'* | *'"'*) echo "unexpected character in published folder name: $rel$sub" >&2; exit 1 ;;
        esac
        echo "$indent<Directory Id=\"d$(id_of "$prefix$rel$sub")\" Name=\"$sub\">"
        emit_dir "$root" "$prefix" "$rel$sub/" "$indent  " "$5"
        echo "$indent</Directory>"
    done < <(cd "$root/$rel" && find . -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | LC_ALL=C sort)
}
group() { # ID: the ComponentGroup of the components emitted since refs was emptied
    echo '  <Fragment>'
    echo "    <ComponentGroup Id=\"$1\">"
    for r in "${refs[@]}"; do echo "      <ComponentRef Id=\"$r\" />"; done
    echo '    </ComponentGroup>'
    echo '  </Fragment>'
}
log "generating build/ProgramFiles.wxs"
{
    echo '<?xml version="1.0" encoding="utf-8"?>'
    echo '<!-- Generated by build.sh from the win-x64 publishes of service/SieveQ.Cli and admin-ui/SieveQ.AdminUi. Do not edit. -->'
    echo '<Wix xmlns="http://schemas.microsoft.com/wix/2006/wi">'
    echo '  <Fragment>'
    echo '    <DirectoryRef Id="INSTALLFOLDER">'
    emit_dir "$publish" "" "" "      " PublishDir
    echo '    </DirectoryRef>'
    echo '  </Fragment>'
    group ProgramFiles
    refs=()
    echo '  <Fragment>'
    echo '    <DirectoryRef Id="CONSOLEFOLDER">'
    emit_dir "$console_publish" "console/" "" "      " ConsolePublishDir
    echo '    </DirectoryRef>'
    echo '  </Fragment>'
    group ConsoleFiles
    echo '</Wix>'
} >"$build/ProgramFiles.wxs.tmp"
mv "$build/ProgramFiles.wxs.tmp" "$build/ProgramFiles.wxs"

# The driver, built here into build/driver (the test command builds driver/build at the same time), and the custom
# actions' program.
log "cross-building the WFP driver (sieveqfw.sys) and sieveq-setup.exe"
make -C "$repo/driver" --no-print-directory BUILD="$build/driver" "$build/driver/win/sieveqfw.sys" >"$build/driver.log" 2>&1 \
    || { tail -n 20 "$build/driver.log" >&2; exit 1; }
# --no-insert-timestamp: the same sources give the same bytes (the check compares the package's copy with this one)
x86_64-w64-mingw32-gcc -std=c11 -municode -O2 -s -Wall -Wextra -Werror -Wl,--no-insert-timestamp -o "$build/sieveq-setup.exe" \
    "$repo/installer/setup/sqsetup.c" "$repo/installer/setup/sqsetup_wfp.c" -lsetupapi -ladvapi32 -lfwpuclnt \
    || { echo "sieveq-setup.exe did not build" >&2; exit 1; }

log "wixl -a x64 (version $version) -> $out"
rm -f "$out"
# wixl looks File/@Source up relative to the current folder only (an absolute Source fails).
(cd "$here" && wixl -a x64 -D "Version=$version" -D "PublishDir=build/publish" -D "ConsolePublishDir=build/publish-console" -D "PolicyDir=../policy" \
    -D "SetupExe=build/sieveq-setup.exe" -D "DriverDir=build/driver/win" -D "DriverInfDir=../../driver/wfp" \
    -o "$out" SieveQ.wxs build/ProgramFiles.wxs)
# The custom actions wixl cannot write (SieveQ.wxs says which and why): exes run from the Binary table.
while IFS=$'\t' read -r action type target; do
    [[ -z "$action" || "$action" == '#'* ]] && continue
    [[ "$type" =~ ^[0-9]+$ && "$target" != *"'"* ]] || { echo "custom-actions.tsv: bad row for $action" >&2; exit 1; }
    (msibuild "$out" -q "INSERT INTO \`CustomAction\` (\`Action\`, \`Type\`, \`Source\`, \`Target\`) VALUES ('$action', $type, 'SieveQSetup', '$target')") \
        || { echo "msibuild could not add the custom action $action" >&2; exit 1; }
done <"$here/custom-actions.tsv"
for action in $(awk -F'\t' '!/^#/ && NF { print $1 }' "$here/custom-actions.tsv"); do
    msiinfo export "$out" InstallExecuteSequence | cut -f1 | grep -qx "$action" || { echo "$action has no place in InstallExecuteSequence" >&2; exit 1; }
done
log "built $out ($(du -h "$out" | cut -f1))"
