#!/usr/bin/env bash
# Builds the MSI (build.sh) and checks it: its tables with msiinfo, a test signature with osslsigncode, then
# install / upgrade / downgrade / uninstall with Wine's msiexec in a fresh, throwaway Wine prefix.
# Prints one line per check and ends with exactly one line "N passed, M failed"; exits 1 if any failed.
#
# Wine's msiexec is a reimplementation: what it proves is that the tables and actions work there, not that
# Windows Installer accepts everything (the table checks cover what Windows reads).
set -uo pipefail
# (With pipefail, "producer | grep -q" can fail when grep -q exits first and the producer gets SIGPIPE: the checks
# read files or process substitutions instead.)

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="$here/build"
publish="$build/publish"
console_publish="$build/publish-console"
console_manifest="$console_publish/SieveQ.AdminUi.staticwebassets.endpoints.json"
msi="$build/SieveQ.msi"
msi2="$build/SieveQ-1.0.1.msi"
upgrade_code='{6F1C2B52-3E0B-4C5D-9A43-2D5E8B7C9A10}'

passed=0
failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
# check NAME FUNCTION ARGS...: the function prints the reason and returns non-zero on failure.
check() {
    local name="$1" out
    shift
    if out="$("$@" 2>&1)"; then pass "$name"; else fail "$name" "$(printf '%s' "$out" | tr '\n' ' ' | cut -c1-400)"; fi
}
# step NAME: the seconds since the previous step, all printed on one line before the tally, to keep the test command's
# budget in view (tests/run-all.sh runs this beside the .NET tests and shows the log's last lines).
steps=()
step_start=$SECONDS
step() { steps+=("$1 $((SECONDS - step_start)) s"); step_start=$SECONDS; }
finish() {
    local IFS=';'
    [[ ${#steps[@]} -eq 0 ]] || echo "[steps] ${steps[*]}" | sed 's/;/; /g'
    echo "$passed passed, $failed failed"
    [[ $failed -eq 0 ]]
    exit $?
}

tmp="$(mktemp -d /tmp/sieveq-msi-check.XXXXXX)"
export WINEPREFIX="$tmp/prefix"
cleanup() {
    if command -v wineserver >/dev/null 2>&1 || [[ -x /usr/lib/wine/wineserver ]]; then
        PATH="/usr/lib/wine:$PATH" timeout 30 wineserver -k >/dev/null 2>&1
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

apt_install() {
    export DEBIAN_FRONTEND=noninteractive
    if [[ -z "${apt_updated:-}" ]]; then apt-get update -qq >/dev/null 2>&1; apt_updated=1; fi
    apt-get install -y -qq "$@" >"$tmp/apt.log" 2>&1
}

# ---------------------------------------------------------------------------------------------- build
start=$SECONDS
if bash "$here/build.sh" >"$tmp/build.log" 2>&1 && [[ -f "$msi" ]]; then
    pass "build.sh builds SieveQ.msi ($(du -h "$msi" | cut -f1), $((SECONDS - start)) s)"
else
    fail "build.sh builds SieveQ.msi" "$(tail -n 5 "$tmp/build.log" | tr '\n' ' ')"
    finish
fi
if SIEVEQ_MSI_SKIP_PUBLISH=1 SIEVEQ_VERSION=1.0.1 SIEVEQ_MSI_OUT="$msi2" bash "$here/build.sh" >>"$tmp/build.log" 2>&1 && [[ -f "$msi2" ]]; then
    pass "build.sh builds version 1.0.1 of the same package (for the upgrade checks)"
else
    fail "build.sh builds version 1.0.1" "$(tail -n 5 "$tmp/build.log" | tr '\n' ' ')"
fi
step "build.sh (1.0.0 and 1.0.1)"

# ---------------------------------------------------------------------------------------------- tables
tables="$tmp/tables"
mkdir -p "$tables"
msiinfo tables "$msi" >"$tables/list" 2>&1
for t in File Component Feature FeatureComponents ServiceInstall ServiceControl Directory Property Upgrade \
         CreateFolder Registry AppSearch RegLocator CustomAction LaunchCondition InstallExecuteSequence; do
    # Skip the three header lines (column names, types, table name).
    msiinfo export "$msi" "$t" 2>/dev/null | tr -d '\r' | tail -n +4 >"$tables/$t"
done
msiinfo suminfo "$msi" >"$tables/suminfo" 2>&1
prop() { awk -F'\t' -v k="$1" '$1 == k { print $2 }' "$tables/Property"; }

t_tables() {
    local t missing=""
    for t in File Component Feature FeatureComponents ServiceInstall ServiceControl Directory Property Upgrade \
             CreateFolder Registry AppSearch RegLocator CustomAction LaunchCondition; do
        grep -qx "$t" "$tables/list" || missing="$missing $t"
    done
    [[ -z "$missing" ]] || { echo "missing tables:$missing"; return 1; }
}
check "msiinfo tables lists File, Component, Feature, FeatureComponents, ServiceInstall, ServiceControl, Directory, Property, Upgrade, CreateFolder, Registry, AppSearch, CustomAction" t_tables

t_suminfo() {
    grep -q '^Template: x64;1033$' "$tables/suminfo" || { echo "Template is not x64;1033: $(grep Template "$tables/suminfo")"; return 1; }
}
check "summary information: Template x64;1033 (a 64-bit package)" t_suminfo

t_property() {
    [[ "$(prop ProductName)" == SieveQ ]] || { echo "ProductName '$(prop ProductName)'"; return 1; }
    [[ "$(prop UpgradeCode)" == "$upgrade_code" ]] || { echo "UpgradeCode '$(prop UpgradeCode)'"; return 1; }
    [[ "$(prop ProductVersion)" == 1.0.0 ]] || { echo "ProductVersion '$(prop ProductVersion)'"; return 1; }
    [[ "$(prop ALLUSERS)" == 1 ]] || { echo "ALLUSERS '$(prop ALLUSERS)' (not per-machine)"; return 1; }
    [[ "$(prop ProductCode)" =~ ^\{[0-9A-F-]{36}\}$ ]] || { echo "ProductCode '$(prop ProductCode)'"; return 1; }
    local pc2
    pc2="$(msiinfo export "$msi2" Property | tr -d '\r' | awk -F'\t' '$1 == "ProductCode" { print $2 }')"
    [[ -n "$pc2" && "$pc2" != "$(prop ProductCode)" ]] || { echo "version 1.0.1 has the same ProductCode"; return 1; }
}
check "Property: ProductName SieveQ, fixed UpgradeCode, ProductVersion 1.0.0, per-machine, a new ProductCode per build" t_property

t_upgrade() {
    grep -qxF "$upgrade_code		1.0.0		1		WIX_UPGRADE_DETECTED" "$tables/Upgrade" \
        || { echo "no row removing older versions: $(cat "$tables/Upgrade")"; return 1; }
    grep -qxF "$upgrade_code	1.0.0			2		WIX_DOWNGRADE_DETECTED" "$tables/Upgrade" \
        || { echo "no row detecting newer versions: $(cat "$tables/Upgrade")"; return 1; }
    grep -q '^NOT WIX_DOWNGRADE_DETECTED	' "$tables/LaunchCondition" || { echo "no downgrade launch condition"; return 1; }
    local frp rep iv ii
    frp="$(awk -F'\t' '$1 == "FindRelatedProducts" { print $3 }' "$tables/InstallExecuteSequence")"
    rep="$(awk -F'\t' '$1 == "RemoveExistingProducts" { print $3 }' "$tables/InstallExecuteSequence")"
    iv="$(awk -F'\t' '$1 == "InstallValidate" { print $3 }' "$tables/InstallExecuteSequence")"
    ii="$(awk -F'\t' '$1 == "InstallInitialize" { print $3 }' "$tables/InstallExecuteSequence")"
    [[ -n "$frp" && -n "$rep" && "$rep" -gt "$iv" && "$rep" -lt "$ii" ]] \
        || { echo "FindRelatedProducts '$frp', RemoveExistingProducts '$rep' not between InstallValidate $iv and InstallInitialize $ii"; return 1; }
    local cf mfs
    cf="$(awk -F'\t' '$1 == "CostFinalize" { print $3 }' "$tables/InstallExecuteSequence")"
    mfs="$(awk -F'\t' '$1 == "MigrateFeatureStates" { print $3 }' "$tables/InstallExecuteSequence")"
    [[ -n "$mfs" && "$mfs" -gt "$cf" && "$mfs" -lt "$iv" ]] || { echo "MigrateFeatureStates at '$mfs'"; return 1; }
}
check "Upgrade: older versions removed first (RemoveExistingProducts after InstallValidate) keeping their features (MigrateFeatures, MigrateFeatureStates), newer ones refused" t_upgrade

t_feature() {
    local got
    got="$(awk -F'\t' '{ print $1 "|" $2 "|" $6 }' "$tables/Feature" | LC_ALL=C sort | tr '\n' ' ')"
    [[ "$got" == "Agent||1 Console||1 Controller||1 Driver||1 PreSq||1 ReplicaSq||1 " ]] || { echo "features: $got"; return 1; }
}
check "Feature: exactly Agent, Console, Controller, Driver, PreSq, ReplicaSq (top level, installed by default)" t_feature

t_directory() {
    local row
    for row in "INSTALLFOLDER	ProgramFiles64Folder	SieveQ" "PolicyDefinitions	WindowsFolder	PolicyDefinitions" \
               "PolicyDefinitionsEnUs	PolicyDefinitions	en-US" "SIEVEQ_DATA_DIR	CommonAppDataFolder	SieveQ" \
               "SIEVEQ_DEPLOYMENT_DIR	SIEVEQ_DATA_DIR	deployment" "DRIVERFOLDER	INSTALLFOLDER	driver"; do
        grep -qxF "$row" "$tables/Directory" || { echo "no Directory row '$row'"; return 1; }
    done
}
check "Directory: ProgramFiles64Folder\\SieveQ(\\driver), WindowsFolder\\PolicyDefinitions(\\en-US), CommonAppDataFolder\\SieveQ\\deployment" t_directory

# Program files: every published file once, with its size, in a component of its folder: the CLI's publish in
# INSTALLFOLDER, the console's (with its wwwroot\ subfolders) in INSTALLFOLDER\console.
# dir_path ID: a Directory row's path below INSTALLFOLDER ("" for INSTALLFOLDER itself).
dir_path() {
    awk -F'\t' -v id="$1" '
        { parent[$1] = $2; n = $3; sub(/^[^|]*\|/, "", n); name[$1] = n }
        END {
            p = ""; d = id
            while (d != "INSTALLFOLDER") {
                if (!(d in parent)) { print "?"; exit }
                p = (p == "" ? name[d] : name[d] "/" p); d = parent[d]
            }
            print p
        }' "$tables/Directory"
}
t_files() {
    local n_pub n_prog rel name size comp dir want found c
    n_pub=$(( $(find "$publish" -type f | wc -l) + $(find "$console_publish" -type f | wc -l) ))
    n_prog="$(grep -cP '^f[0-9A-F]{32}\tc[0-9A-F]{32}\t' "$tables/File")"
    [[ "$n_pub" -gt 200 && "$n_pub" == "$n_prog" ]] || { echo "$n_prog program files in the MSI, $n_pub published"; return 1; }
    declare -A paths=()
    while IFS=$'\t' read -r rel size; do
        name="${rel##*/}"
        want="$(dirname "$rel")"; [[ "$want" == . ]] && want=""
        comp="$(awk -F'\t' -v n="$name" -v s="$size" '$3 == n && $4 == s { print $2 }' "$tables/File")"
        [[ -n "$comp" ]] || { echo "published $rel ($size bytes) not in File"; return 1; }
        # A file of that name and size in both publishes (coreclr.dll...): one of them must be in this folder.
        found=""
        for c in $comp; do
            dir="$(awk -F'\t' -v c="$c" '$1 == c { print $3 }' "$tables/Component")"
            [[ -z "${paths[$dir]+x}" ]] && paths[$dir]="$(dir_path "$dir")"
            [[ "${paths[$dir]}" == "$want" ]] && found=1
        done
        [[ -n "$found" ]] || { echo "$rel installed to '${paths[$dir]}'"; return 1; }
    done < <(find "$publish" -type f -printf '%P\t%s\n'; find "$console_publish" -type f -printf 'console/%P\t%s\n')
    for name in sieveq.exe sieveq.dll sieveq.runtimeconfig.json sieveq.deps.json coreclr.dll hostfxr.dll \
                SieveQ.AdminUi.exe SieveQ.AdminUi.dll SieveQ.AdminUi.runtimeconfig.json SieveQ.AdminUi.deps.json \
                SieveQ.AdminUi.staticwebassets.endpoints.json MudBlazor.dll; do
        [[ -n "$(awk -F'\t' -v n="$name" '$3 == n' "$tables/File")" ]] || { echo "no $name"; return 1; }
    done
}
check "File: the CLI's self-contained win-x64 publish under INSTALLFOLDER, the console's (its runtime, wwwroot\\...) under INSTALLFOLDER\\console, each file in its folder, sizes match" t_files

# The console serves what its endpoints manifest lists, from wwwroot\ beside it: every listed asset must be
# published and packaged, and the build tree's manifest (paths into the source tree and the NuGet cache) must not.
t_console_assets() {
    local n=0 asset
    [[ -f "$console_manifest" ]] || { echo "no $console_manifest"; return 1; }
    [[ ! -e "$console_publish/SieveQ.AdminUi.staticwebassets.runtime.json" ]] || { echo "the build tree's static web assets manifest is published"; return 1; }
    grep -q 'staticwebassets.runtime.json' <(cut -f3 "$tables/File") && { echo "File has a staticwebassets.runtime.json"; return 1; }
    while IFS= read -r asset; do
        n=$((n + 1))
        [[ -f "$console_publish/wwwroot/$asset" ]] || { echo "the manifest lists $asset, not in the publish's wwwroot"; return 1; }
    done < <(grep -oP '"AssetFile":\s*"\K[^"]+' "$console_manifest" | sort -u)
    [[ $n -gt 0 ]] || { echo "the manifest lists no asset"; return 1; }
    grep -q '^_framework/blazor.web.js$' <(grep -oP '"AssetFile":\s*"\K[^"]+' "$console_manifest") || { echo "no _framework/blazor.web.js asset"; return 1; }
    grep -q '^_content/MudBlazor/MudBlazor.min.js$' <(grep -oP '"AssetFile":\s*"\K[^"]+' "$console_manifest") || { echo "no MudBlazor script"; return 1; }
}
check "File: the console's static assets manifest and every asset it lists (Blazor's and MudBlazor's scripts and styles) under wwwroot\\; no build-tree manifest" t_console_assets

t_role_files() {
    local exe_size row
    exe_size="$(stat -c %s "$publish/sieveq.exe")"
    for row in "AgentExe	AgentService	sieveq-agent.exe	$exe_size" "PreSqExe	PreSqService	sieveq-pre-sq.exe	$exe_size" \
               "ReplicaSqExe	ReplicaSqService	sieveq-replica-sq.exe	$exe_size" "ControllerExe	ControllerService	sieveq-controller.exe	$exe_size" \
               "ConsoleExe	ConsoleService	sieveq-console.exe	$(stat -c %s "$console_publish/SieveQ.AdminUi.exe")" \
               "SieveQAdmx	PolicyAdmx	SieveQ.admx	$(stat -c %s "$repo/installer/policy/SieveQ.admx")" \
               "SieveQAdml	PolicyAdml	SieveQ.adml	$(stat -c %s "$repo/installer/policy/en-US/SieveQ.adml")" \
               "DriverSys	DriverFiles	sieveqfw.sys	$(stat -c %s "$build/driver/win/sieveqfw.sys")" \
               "DriverInf	DriverFiles	sieveqfw.inf	$(stat -c %s "$repo/driver/wfp/sieveqfw.inf")" \
               "DriverSetupExe	DriverFiles	sieveq-setup.exe	$(stat -c %s "$build/sieveq-setup.exe")"; do
        grep -qxF "$row" < <(cut -f1-4 "$tables/File") || { echo "no File row '$row'"; return 1; }
    done
    for row in "PolicyAdmx	PolicyDefinitions" "PolicyAdml	PolicyDefinitionsEnUs" "ConsoleService	CONSOLEFOLDER" "ControllerService	INSTALLFOLDER" \
               "DriverFiles	DRIVERFOLDER"; do
        grep -qxF "$row" < <(cut -f1,3 "$tables/Component") || { echo "no Component row '$row'"; return 1; }
    done
}
check "File: one app host per service (sieveq-agent.exe, sieveq-pre-sq.exe, sieveq-replica-sq.exe, sieveq-controller.exe; console\\sieveq-console.exe the console's), SieveQ.admx, en-US\\SieveQ.adml, driver\\sieveqfw.sys, .inf and sieveq-setup.exe" t_role_files

t_components() {
    local n id guid dir attr rest
    n="$(wc -l <"$tables/Component")"
    [[ "$n" -gt 100 ]] || { echo "only $n components"; return 1; }
    while IFS=$'\t' read -r id guid dir attr rest; do
        (( attr & 256 )) || { echo "$id is not 64-bit (Attributes $attr)"; return 1; }
        [[ "$guid" =~ ^\{[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}\}$ ]] || { echo "$id GUID '$guid'"; return 1; }
    done <"$tables/Component"
    [[ "$(cut -f2 "$tables/Component" | sort -u | wc -l)" == "$n" ]] || { echo "duplicate component GUIDs"; return 1; }
    local pc1 pc2
    # Component GUIDs must not change between builds (Guid="*" is derived, not random).
    pc1="$(cut -f1,2 "$tables/Component" | sort | sha1sum)"
    pc2="$(msiinfo export "$msi2" Component | tr -d '\r' | tail -n +4 | cut -f1,2 | sort | sha1sum)"
    [[ "$pc1" == "$pc2" ]] || { echo "component GUIDs differ between the 1.0.0 and 1.0.1 builds"; return 1; }
}
check "Component: all 64-bit, unique GUIDs, the same GUIDs in two builds" t_components

t_feature_components() {
    local c f expect got bad="" rel h
    declare -A console_only=()
    # The console's files: their components' ids are c + the hash of their path below INSTALLFOLDER (build.sh).
    while IFS= read -r rel; do
        h="$(printf '%s' "console/$rel" | sha1sum | cut -c1-32 | tr a-f A-F)"
        console_only["c$h"]=1
    done < <(find "$console_publish" -type f -printf '%P\n')
    [[ ${#console_only[@]} -gt 100 ]] || { echo "only ${#console_only[@]} console files"; return 1; }
    for c in $(cut -f1 "$tables/Component"); do
        case "$c" in
            AgentService | PolicyAdmx | PolicyAdml) expect="Agent" ;;
            PreSqService) expect="PreSq" ;;
            ReplicaSqService) expect="ReplicaSq" ;;
            ControllerService) expect="Controller" ;;
            ConsoleService) expect="Console" ;;
            DriverFiles) expect="Driver" ;;
            InstallerSettings | DataFolder | DeploymentFolder) expect="Agent Console Controller PreSq ReplicaSq" ;;
            *) if [[ -n "${console_only[$c]:-}" ]]; then expect="Console"; else expect="Agent Controller PreSq ReplicaSq"; fi ;;
        esac
        got="$(awk -F'\t' -v c="$c" '$2 == c { print $1 }' "$tables/FeatureComponents" | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')"
        [[ "$got" == "$expect" ]] || { bad="$c in '$got', expected '$expect'"; break; }
    done
    [[ -z "$bad" ]] || { echo "$bad"; return 1; }
}
check "FeatureComponents: the CLI's files shared by Agent, Controller, PreSq, ReplicaSq; the console's (wwwroot too) only in Console; settings and data folders in all five roles; each service in its own feature, ADMX/ADML with Agent; the driver's files only in Driver" t_feature_components

# The custom actions (installer/setup/sqsetup.c, rows from custom-actions.tsv): the program in the Binary table is the
# one built, each row runs it deferred as LocalSystem, and each sits where its work can be done and undone.
t_custom_actions() {
    local row a seq
    msiinfo extract "$msi" Binary.SieveQSetup >"$tmp/setup-from-msi.exe" 2>/dev/null || { echo "no Binary.SieveQSetup stream"; return 1; }
    cmp -s "$tmp/setup-from-msi.exe" "$build/sieveq-setup.exe" || { echo "Binary.SieveQSetup is not build/sieveq-setup.exe"; return 1; }
    for row in "DriverRemoveRollback	3394	SieveQSetup	driver-install \"[DRIVERFOLDER]sieveqfw.inf\"	" \
               "DriverRemove	3074	SieveQSetup	driver-remove	" \
               "LockDataFolders	3074	SieveQSetup	lock-folder \"[SIEVEQ_DATA_DIR].\" \"[SIEVEQ_DEPLOYMENT_DIR].\"	" \
               "DriverInstallRollback	3394	SieveQSetup	driver-remove	" \
               "DriverInstall	3074	SieveQSetup	driver-install \"[DRIVERFOLDER]sieveqfw.inf\"	" \
               "ServiceRecovery	3074	SieveQSetup	recovery SieveQAgent SieveQPreSq SieveQReplicaSq SieveQController SieveQConsole	"; do
        grep -qxF "$row" "$tables/CustomAction" || { echo "no CustomAction row '$row'"; return 1; }
    done
    declare -A at=()
    # (awk: read would merge the empty condition's two tabs into one separator)
    while read -r a seq; do at[$a]=$seq; done < <(awk -F'\t' '{ print $1, $3 }' "$tables/InstallExecuteSequence")
    for a in InstallInitialize RemoveFiles CreateFolders InstallFiles InstallServices InstallFinalize DriverRemoveRollback \
             DriverRemove LockDataFolders DriverInstallRollback DriverInstall ServiceRecovery; do
        [[ -n "${at[$a]:-}" ]] || { echo "$a not in InstallExecuteSequence"; return 1; }
    done
    (( at[InstallInitialize] < at[DriverRemoveRollback] && at[DriverRemoveRollback] < at[DriverRemove] && at[DriverRemove] < at[RemoveFiles] )) \
        || { echo "the driver's removal must come before RemoveFiles, its rollback before it"; return 1; }
    (( at[CreateFolders] < at[LockDataFolders] && at[LockDataFolders] < at[InstallFinalize] )) || { echo "LockDataFolders before CreateFolders"; return 1; }
    (( at[InstallFiles] < at[DriverInstallRollback] && at[DriverInstallRollback] < at[DriverInstall] && at[DriverInstall] < at[InstallFinalize] )) \
        || { echo "DriverInstall must follow InstallFiles, its rollback before it"; return 1; }
    (( at[InstallServices] < at[ServiceRecovery] && at[ServiceRecovery] < at[InstallFinalize] )) || { echo "ServiceRecovery before InstallServices"; return 1; }
    grep -qxF 'DriverInstall	$DriverFiles=3	'"${at[DriverInstall]}" "$tables/InstallExecuteSequence" \
        || { echo "DriverInstall's condition: $(grep '^DriverInstall	' "$tables/InstallExecuteSequence")"; return 1; }
    grep -qxF 'DriverRemove	(?DriverFiles=3) AND ($DriverFiles=2)	'"${at[DriverRemove]}" "$tables/InstallExecuteSequence" \
        || { echo "DriverRemove's condition: $(grep '^DriverRemove	' "$tables/InstallExecuteSequence")"; return 1; }
}
check "CustomAction: sieveq-setup.exe from the Binary table, deferred as LocalSystem: the driver installed after InstallFiles and removed before RemoveFiles (each with its rollback), the data folders locked after CreateFolders, recovery actions after InstallServices" t_custom_actions

t_service_install() {
    local row
    for row in \
        "AgentServiceInstall	SieveQAgent	SieveQ Agent	16	3	1					agent --deployment \"[SIEVEQ_DEPLOYMENT_DIR].\" --name \"[SIEVEQ_AGENT_NAME]\"	AgentService" \
        "PreSqServiceInstall	SieveQPreSq	SieveQ Pre-SQ Gateway	16	3	1					pre-sq --deployment \"[SIEVEQ_DEPLOYMENT_DIR].\" --id [SIEVEQ_PRESQ_ID]	PreSqService" \
        "ReplicaSqServiceInstall	SieveQReplicaSq	SieveQ Replica-SQ	16	3	1					replica-sq --deployment \"[SIEVEQ_DEPLOYMENT_DIR].\" --id [SIEVEQ_REPLICA_ID]	ReplicaSqService" \
        "ControllerServiceInstall	SieveQController	SieveQ Controller	16	3	1					controller --deployment \"[SIEVEQ_DEPLOYMENT_DIR].\"	ControllerService" \
        "ConsoleServiceInstall	SieveQConsole	SieveQ Console	16	3	1					serve --deployment \"[SIEVEQ_DEPLOYMENT_DIR].\"[SIEVEQ_CONSOLE_OPTIONS]	ConsoleService"; do
        grep -qxF "$row" < <(cut -f1-12 "$tables/ServiceInstall") || { echo "no ServiceInstall row '$row'"; return 1; }
    done
    [[ "$(wc -l <"$tables/ServiceInstall")" == 5 ]] || { echo "$(wc -l <"$tables/ServiceInstall") rows"; return 1; }
}
check "ServiceInstall: SieveQAgent, SieveQPreSq, SieveQReplicaSq, SieveQController, SieveQConsole (own process, demand start, LocalSystem) with their arguments" t_service_install

t_service_control() {
    local row
    # Event 162 = stop on install (2) + stop on uninstall (32) + delete on uninstall (128); Wait 1.
    for row in "AgentServiceControl	SieveQAgent	162		1	AgentService" "PreSqServiceControl	SieveQPreSq	162		1	PreSqService" \
               "ReplicaSqServiceControl	SieveQReplicaSq	162		1	ReplicaSqService" \
               "ControllerServiceControl	SieveQController	162		1	ControllerService" "ConsoleServiceControl	SieveQConsole	162		1	ConsoleService"; do
        grep -qxF "$row" "$tables/ServiceControl" || { echo "no ServiceControl row '$row'"; return 1; }
    done
}
check "ServiceControl: each service stopped on install and uninstall, deleted on uninstall" t_service_control

t_create_folder() {
    grep -qxF "SIEVEQ_DATA_DIR	DataFolder" "$tables/CreateFolder" && grep -qxF "SIEVEQ_DEPLOYMENT_DIR	DeploymentFolder" "$tables/CreateFolder" \
        || { echo "CreateFolder: $(cat "$tables/CreateFolder" | tr '\n' ' ')"; return 1; }
}
check "CreateFolder: ProgramData\\SieveQ and ProgramData\\SieveQ\\deployment" t_create_folder

t_remembered() {
    local v frp cf seq
    for v in DeploymentDir AgentName PreSqId ReplicaId ConsoleUrl ControllerUrl ControllerPin; do
        grep -qP "^Saved$v\t2\tSOFTWARE\\\\SieveQ\\\\Installer\t$v\t18$" "$tables/RegLocator" || { echo "no 64-bit RegLocator for $v"; return 1; }
        grep -qP "\t2\tSOFTWARE\\\\SieveQ\\\\Installer\t$v\t\[SIEVEQ_" "$tables/Registry" || { echo "no Registry value $v"; return 1; }
    done
    cf="$(awk -F'\t' '$1 == "CostFinalize" { print $3 }' "$tables/InstallExecuteSequence")"
    for v in UseSavedDeploymentDir UseSavedAgentName UseSavedPreSqId UseSavedReplicaId DefaultAgentName DefaultPreSqId DefaultReplicaId \
             UseSavedConsoleUrl UseSavedControllerUrl UseSavedControllerPin ConsoleOptionUrl ConsoleOptionController ConsoleOptionPin; do
        seq="$(awk -F'\t' -v a="$v" '$1 == a { print $3 }' "$tables/InstallExecuteSequence")"
        [[ -n "$seq" && "$seq" -gt 50 && "$seq" -lt "$cf" ]] || { echo "$v at '$seq' (AppSearch 50, CostFinalize $cf)"; return 1; }
    done
    grep -qxF "DefaultPreSqId	2099	SIEVEQ_PRESQ_ID	4	" "$tables/CustomAction" || { echo "no default pre-SQ id 4"; return 1; }
    # The console's options: each only when its setting has a value, appended after the saved values are read.
    local row
    for row in "ConsoleOptionUrl	2099	SIEVEQ_CONSOLE_OPTIONS	 --url \"[SIEVEQ_CONSOLE_URL]\"	" \
               "ConsoleOptionController	2099	SIEVEQ_CONSOLE_OPTIONS	[SIEVEQ_CONSOLE_OPTIONS] --controller \"[SIEVEQ_CONTROLLER_URL]\"	" \
               "ConsoleOptionPin	2099	SIEVEQ_CONSOLE_OPTIONS	[SIEVEQ_CONSOLE_OPTIONS] --controller-pin \"[SIEVEQ_CONTROLLER_PIN]\"	"; do
        grep -qxF "$row" "$tables/CustomAction" || { echo "no CustomAction row '$row'"; return 1; }
    done
    for row in "ConsoleOptionUrl	SIEVEQ_CONSOLE_URL	61" "ConsoleOptionController	SIEVEQ_CONTROLLER_URL	62" "ConsoleOptionPin	SIEVEQ_CONTROLLER_PIN	63" \
               "UseSavedConsoleUrl	NOT SIEVEQ_CONSOLE_URL AND SIEVEQ_SAVED_CONSOLE_URL	58"; do
        grep -qxF "$row" "$tables/InstallExecuteSequence" || { echo "no InstallExecuteSequence row '$row'"; return 1; }
    done
}
check "silent-install properties (the console's too): remembered in HKLM\\SOFTWARE\\SieveQ\\Installer, read back before CostFinalize, defaults last; the console's options only when set" t_remembered
step "tables"

# ---------------------------------------------------------------------------------------------- signing
signed="$tmp/SieveQ-signed.msi"
t_sign() {
    command -v osslsigncode >/dev/null || apt_install osslsigncode || { echo "osslsigncode not installable"; return 1; }
    command -v openssl >/dev/null || apt_install openssl || { echo "openssl not installable"; return 1; }
    openssl req -x509 -newkey rsa:3072 -nodes -days 2 -subj "/CN=SieveQ throwaway test signer" \
        -addext "extendedKeyUsage=codeSigning" -addext "keyUsage=digitalSignature" \
        -keyout "$tmp/sign.key" -out "$tmp/sign.crt" >/dev/null 2>&1 || { echo "openssl req failed"; return 1; }
    osslsigncode sign -certs "$tmp/sign.crt" -key "$tmp/sign.key" -h sha256 -n "SieveQ" \
        -in "$msi" -out "$signed" >"$tmp/sign.log" 2>&1 || { cat "$tmp/sign.log"; return 1; }
}
check "osslsigncode signs SieveQ.msi with a throwaway self-signed code-signing certificate" t_sign
t_verify() {
    [[ -f "$signed" ]] || { echo "no signed MSI"; return 1; }
    osslsigncode verify -in "$signed" -CAfile "$tmp/sign.crt" >"$tmp/verify.log" 2>&1 || { tail -n 5 "$tmp/verify.log"; return 1; }
    grep -q 'Signature verification: ok' "$tmp/verify.log" || { tail -n 5 "$tmp/verify.log"; return 1; }
    # The same signature must not verify once the package is changed: one letter of a feature title in the
    # string pool (_StringData, stored uncompressed) becomes another.
    cp "$signed" "$tmp/tampered.msi"
    local off
    off="$(grep -obUaF 'SieveQ Pre-SQ Gateway' "$tmp/tampered.msi" | head -n 1 | cut -d: -f1)"
    [[ -n "$off" ]] || { echo "feature title not found in the package"; return 1; }
    printf 'Z' | dd of="$tmp/tampered.msi" bs=1 seek="$off" conv=notrunc status=none
    if osslsigncode verify -in "$tmp/tampered.msi" -CAfile "$tmp/sign.crt" >"$tmp/verify2.log" 2>&1 \
        && grep -q 'Signature verification: ok' "$tmp/verify2.log"; then
        echo "a changed package still verifies"; return 1
    fi
}
check "osslsigncode verifies the signature against the test certificate, and refuses a changed copy" t_verify
step "signing"

# ---------------------------------------------------------------------------------------------- Wine
# Per ../../shared/notes/wine.md: /usr/lib/wine first in PATH for the real wine64, mshtml off, every command
# under timeout, wineboot then wineserver -w, wineserver -k at the end (the EXIT trap).
export PATH="/usr/lib/wine:$PATH" WINEDLLOVERRIDES="mshtml=" WINEDEBUG=-all
wine_reason=""
if ! [[ -x /usr/lib/wine/wine64 ]]; then
    apt_install wine64 || wine_reason="apt-get install wine64 failed: $(tail -n 2 "$tmp/apt.log" | tr '\n' ' ')"
fi
if [[ -z "$wine_reason" ]]; then
    if ! timeout 180 wine64 wineboot --init >"$tmp/wineboot.log" 2>&1 || ! timeout 120 wineserver -w; then
        wine_reason="wine64 wineboot --init failed: $(tail -n 3 "$tmp/wineboot.log" | tr '\n' ' ')"
    elif ! [[ -d "$WINEPREFIX/drive_c/windows" ]]; then
        wine_reason="wineboot made no prefix at $WINEPREFIX"
    fi
fi
if [[ -z "$wine_reason" ]]; then
    pass "Wine: a fresh prefix (wine64 wineboot --init)"
else
    fail "Wine: a fresh prefix" "$wine_reason (Wine itself cannot run here: every Wine check below fails for this reason)"
fi
step "Wine prefix"

# TEST ONLY: Wine has no WFP, so the driver the MSI installs would not load; the driver's own Wine harness loads it
# with a stand-in for fwpkclnt.sys (driver/wine/standin.c) that records every registration and, at each unload,
# appends its balances to C:\sqfw-standin.log. Put in the prefix here, never in the package, it lets the installed
# driver start and the uninstall's removal be seen to undo everything.
standin_log="$WINEPREFIX/drive_c/sqfw-standin.log"
drivers_dir="$WINEPREFIX/drive_c/windows/system32/drivers"
if [[ -z "$wine_reason" ]]; then
    if make -C "$repo/driver" --no-print-directory BUILD="$build/driver" "$build/driver/wine/fwpkclnt.sys" >"$tmp/standin.log" 2>&1; then
        cp "$build/driver/wine/fwpkclnt.sys" "$drivers_dir/fwpkclnt.sys"
        pass "Wine: the test-only fwpkclnt.sys stand-in in the prefix (so that the installed driver can load)"
    else
        fail "Wine: the test-only fwpkclnt.sys stand-in" "$(tail -n 3 "$tmp/standin.log" | tr '\n' ' ')"
    fi
fi
step "the fwpkclnt.sys stand-in"

pf="$WINEPREFIX/drive_c/Program Files/SieveQ"
poldefs="$WINEPREFIX/drive_c/windows/PolicyDefinitions"
winpath() { printf 'Z:%s' "${1//\//\\}"; }
pc1="$(prop ProductCode)"
pc2="$(msiinfo export "$msi2" Property 2>/dev/null | tr -d '\r' | awk -F'\t' '$1 == "ProductCode" { print $2 }')"
install_msi="$msi"
[[ -f "$signed" ]] && install_msi="$signed"

# msiexec ACTION MSI LOG [PROPERTY=VALUE...]: Wine's msiexec exit status is the installer's result mod 256
# (0 success, 67 = 1603 fatal error).
msiexec_run() {
    local action="$1" file="$2" log="$3"
    shift 3
    # The custom actions' program prints what it did on msiexec's console: kept per run in $tmp/<log>.out.
    timeout 180 wine64 msiexec "$action" "$(winpath "$file")" /qn /l*v "$(winpath "$tmp/$log")" "$@" >"$tmp/$log.out" 2>&1
    local rc=$?
    cat "$tmp/$log.out" >>"$tmp/wine.log"
    return $rc
}
reg_value() { # KEY NAME: the value's data, or nothing
    # Wine's reg.exe now and then prints nothing for a value that is there (seen once in ten runs, right after an
    # install): ask up to three times before concluding the value is absent.
    local v attempt
    for attempt in 1 2 3; do
        v="$(timeout 60 wine64 reg query "$1" /v "$2" 2>/dev/null | tr -d '\r' | sed -n "s/^ *$2 *REG_[A-Z_]* *//p")"
        [[ -n "$v" ]] && break
        sleep 0.5
    done
    printf '%s' "$v"
}
reg_exists() { timeout 60 wine64 reg query "$1" >/dev/null 2>&1; }
product_registered() { reg_exists "HKLM\\Software\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\$1"; }
svc_key() { printf 'HKLM\\System\\CurrentControlSet\\Services\\%s' "$1"; }
# wcheck NAME FUNCTION ARGS...: a check that needs Wine.
wcheck() {
    if [[ -n "$wine_reason" ]]; then fail "$1" "not run: $wine_reason"; else check "$@"; fi
}

# The custom actions' program refuses what it cannot do, with a message and an exit code that fails the install.
t_setup_cli() {
    local out rc
    cp "$build/sieveq-setup.exe" "$WINEPREFIX/drive_c/sieveq-setup.exe"
    out="$(timeout 60 wine64 'C:\sieveq-setup.exe' 2>&1 | tr -d '\r')"; rc=${PIPESTATUS[0]}
    [[ $rc == 87 ]] && grep -q '^usage: sieveq-setup driver-install INF' <<<"$out" || { echo "no arguments: exit $rc, '$out'"; return 1; }
    out="$(timeout 60 wine64 'C:\sieveq-setup.exe' recovery 2>&1 | tr -d '\r')"; rc=${PIPESTATUS[0]}
    [[ $rc == 87 ]] || { echo "recovery without a service: exit $rc"; return 1; }
    out="$(timeout 60 wine64 'C:\sieveq-setup.exe' driver-install 'C:\no\such.inf' 2>&1 | tr -d '\r')"; rc=${PIPESTATUS[0]}
    [[ $rc != 0 ]] && grep -q 'finding the INF failed (error [23])' <<<"$out" || { echo "a missing INF: exit $rc, '$out'"; return 1; }
    out="$(timeout 60 wine64 'C:\sieveq-setup.exe' lock-folder 'C:\' 2>&1 | tr -d '\r')"; rc=${PIPESTATUS[0]}
    [[ $rc != 0 ]] && grep -q "locking a drive's root" <<<"$out" || { echo "a drive's root: exit $rc, '$out'"; return 1; }
    out="$(timeout 60 wine64 'C:\sieveq-setup.exe' lock-folder 'C:\no\such\folder' 2>&1 | tr -d '\r')"; rc=${PIPESTATUS[0]}
    [[ $rc != 0 ]] && grep -q 'finding the folder failed' <<<"$out" || { echo "a missing folder: exit $rc, '$out'"; return 1; }
    out="$(timeout 60 wine64 'C:\sieveq-setup.exe' driver-remove 2>&1 | tr -d '\r')"; rc=${PIPESTATUS[0]}
    [[ $rc == 0 ]] || { echo "driver-remove with nothing installed: exit $rc, '$out'"; return 1; }
    rm -f "$WINEPREFIX/drive_c/sieveq-setup.exe"
}
wcheck "Wine: sieveq-setup.exe refuses bad arguments (usage, exit 87), a missing INF, a drive's root, a missing folder; driver-remove with nothing installed succeeds" t_setup_cli
step "sieveq-setup.exe's refusals"

# The service's ImagePath: Windows Installer writes "C:\...\x.exe" ARGS; Wine 8.0's msi leaves the path unquoted.
t_service() { # NAME EXE ARGS
    local key image want
    key="$(svc_key "$1")"
    image="$(reg_value "$key" ImagePath)"
    want="C:\\Program Files\\SieveQ\\$2"
    [[ "$image" == "\"$want\" $3" || "$image" == "$want $3" ]] || { echo "$1 ImagePath '$image', expected '\"$want\" $3'"; return 1; }
    [[ "$(reg_value "$key" Start)" == 0x3 ]] || { echo "$1 Start $(reg_value "$key" Start), expected 0x3 (demand)"; return 1; }
    [[ "$(reg_value "$key" Type)" == 0x10 ]] || { echo "$1 Type $(reg_value "$key" Type)"; return 1; }
    [[ "$(reg_value "$key" ObjectName)" == LocalSystem ]] || { echo "$1 ObjectName $(reg_value "$key" ObjectName)"; return 1; }
    # Wine 8.0's sc has no "qc"; "query" asks the service manager itself.
    timeout 60 wine64 sc query "$1" 2>/dev/null | tr -d '\r' >"$tmp/sc.out"
    grep -q 'WIN32_OWN_PROCESS' "$tmp/sc.out" && grep -q 'STOPPED' "$tmp/sc.out" \
        || { echo "sc query $1: $(tr '\n' ' ' <"$tmp/sc.out")"; return 1; }
}
t_no_service() {
    local s
    for s in "$@"; do
        ! reg_exists "$(svc_key "$s")" || { echo "service $s still registered"; return 1; }
        grep -q "SERVICE_NAME: $s" < <(timeout 60 wine64 sc query "$s" 2>/dev/null) && { echo "sc query $s finds it"; return 1; }
    done
    return 0
}

# --- A: default install of every feature
t_install() { # MSI LOG ARGS...
    local file="$1" log="$2" rc
    shift 2
    msiexec_run /i "$file" "$log" "$@"
    rc=$?
    [[ $rc == 0 ]] || { echo "msiexec /i exit $rc; $(grep -a -iE 'error|fail' "$tmp/$log" | tail -n 3 | tr '\n' ' ')"; return 1; }
}
wcheck "Wine: msiexec /i SieveQ.msi /qn (test-signed copy) succeeds" t_install "$install_msi" install-a.log
step "A: install"
t_installed_files() {
    local n_pub n_pf f
    [[ -d "$pf" ]] || { echo "no $pf"; return 1; }
    n_pub="$(find "$publish" -maxdepth 1 -type f | wc -l)"
    n_pf="$(find "$pf" -maxdepth 1 -type f | wc -l)"
    [[ "$n_pf" == $((n_pub + 4)) ]] || { echo "$n_pf files in Program Files\\SieveQ, expected $((n_pub + 4))"; return 1; }
    n_pub="$(find "$console_publish" -type f | wc -l)"
    n_pf="$(find "$pf/console" -type f | wc -l)"
    [[ "$n_pf" == $((n_pub + 1)) ]] || { echo "$n_pf files in Program Files\\SieveQ\\console, expected $((n_pub + 1))"; return 1; }
    for f in sieveq.exe sieveq.dll coreclr.dll; do cmp -s "$publish/$f" "$pf/$f" || { echo "$f differs or missing"; return 1; }; done
    for f in SieveQ.AdminUi.exe SieveQ.AdminUi.dll coreclr.dll SieveQ.AdminUi.staticwebassets.endpoints.json; do
        cmp -s "$console_publish/$f" "$pf/console/$f" || { echo "console\\$f differs or missing"; return 1; }
    done
    for f in sieveq-agent.exe sieveq-pre-sq.exe sieveq-replica-sq.exe sieveq-controller.exe; do cmp -s "$publish/sieveq.exe" "$pf/$f" || { echo "$f differs or missing"; return 1; }; done
    cmp -s "$console_publish/SieveQ.AdminUi.exe" "$pf/console/sieveq-console.exe" || { echo "console\\sieveq-console.exe differs or missing"; return 1; }
    # Every asset the console's manifest lists, in its folder below console\wwwroot.
    while IFS= read -r f; do
        cmp -s "$console_publish/wwwroot/$f" "$pf/console/wwwroot/$f" || { echo "console/wwwroot/$f differs or missing"; return 1; }
    done < <(grep -oP '"AssetFile":\s*"\K[^"]+' "$console_manifest" | sort -u)
    cmp -s "$repo/installer/policy/SieveQ.admx" "$poldefs/SieveQ.admx" || { echo "no PolicyDefinitions\\SieveQ.admx"; return 1; }
    cmp -s "$repo/installer/policy/en-US/SieveQ.adml" "$poldefs/en-US/SieveQ.adml" || { echo "no PolicyDefinitions\\en-US\\SieveQ.adml"; return 1; }
    [[ -d "$WINEPREFIX/drive_c/ProgramData/SieveQ/deployment" ]] || { echo "no ProgramData\\SieveQ\\deployment"; return 1; }
    product_registered "$pc1" || { echo "product $pc1 not registered"; return 1; }
}
wcheck "Wine: files in Program Files\\SieveQ (publish + 4 service hosts), Program Files\\SieveQ\\console (the console's publish with wwwroot\\ + its service host), windows\\PolicyDefinitions(\\en-US), ProgramData\\SieveQ\\deployment; product registered" t_installed_files
t_runs() {
    local out
    out="$(cd "$tmp" && timeout 120 wine64 'C:\Program Files\SieveQ\sieveq.exe' version 2>&1 | tr -d '\r')"
    grep -q '^sieveq ' <<<"$out" || { echo "sieveq version: $(head -n 3 <<<"$out" | tr '\n' ' ')"; return 1; }
    out="$(cd "$tmp" && timeout 120 wine64 'C:\Program Files\SieveQ\sieveq-replica-sq.exe' replica-sq --help 2>&1 | tr -d '\r')"
    grep -q -- '--deployment' <<<"$out" && grep -q -- '--id' <<<"$out" || { echo "sieveq-replica-sq.exe replica-sq --help: $(head -n 3 <<<"$out" | tr '\n' ' ')"; return 1; }
}
wcheck "Wine: the installed sieveq.exe runs (version) and a service host runs the same program (replica-sq --help)" t_runs
dd_default='--deployment "C:\ProgramData\SieveQ\deployment\."'
wcheck "Wine: service SieveQAgent registered (demand, LocalSystem): sieveq-agent.exe agent $dd_default --name \"agent\"" \
    t_service SieveQAgent sieveq-agent.exe "agent $dd_default --name \"agent\""
wcheck "Wine: service SieveQPreSq registered: sieveq-pre-sq.exe pre-sq $dd_default --id 4" \
    t_service SieveQPreSq sieveq-pre-sq.exe "pre-sq $dd_default --id 4"
wcheck "Wine: service SieveQReplicaSq registered: sieveq-replica-sq.exe replica-sq $dd_default --id 0" \
    t_service SieveQReplicaSq sieveq-replica-sq.exe "replica-sq $dd_default --id 0"
wcheck "Wine: service SieveQController registered: sieveq-controller.exe controller $dd_default" \
    t_service SieveQController sieveq-controller.exe "controller $dd_default"
wcheck "Wine: service SieveQConsole registered: sieveq-console.exe serve $dd_default (no console settings given: none passed)" \
    t_service SieveQConsole "console\\sieveq-console.exe" "serve $dd_default"

# The driver: installed from its INF by the DriverInstall custom action and started (with the stand-in above).
t_driver_installed() {
    local key s
    key="$(svc_key sieveqfw)"
    cmp -s "$build/driver/win/sieveqfw.sys" "$drivers_dir/sieveqfw.sys" || { echo "system32\\drivers\\sieveqfw.sys is not the built driver"; return 1; }
    cmp -s "$build/driver/win/sieveqfw.sys" "$pf/driver/sieveqfw.sys" && cmp -s "$repo/driver/wfp/sieveqfw.inf" "$pf/driver/sieveqfw.inf" \
        && cmp -s "$build/sieveq-setup.exe" "$pf/driver/sieveq-setup.exe" || { echo "Program Files\\SieveQ\\driver incomplete"; return 1; }
    [[ "$(reg_value "$key" Type)" == 0x1 ]] || { echo "sieveqfw Type $(reg_value "$key" Type), expected 0x1 (kernel driver)"; return 1; }
    [[ "$(reg_value "$key" Start)" == 0x1 ]] || { echo "sieveqfw Start $(reg_value "$key" Start), expected 0x1 (system start)"; return 1; }
    [[ "$(reg_value "$key" ImagePath)" == 'C:\windows\system32\drivers\sieveqfw.sys' ]] || { echo "sieveqfw ImagePath $(reg_value "$key" ImagePath)"; return 1; }
    [[ -z "$(reg_value "$key" DependOnService)" ]] || { echo "sieveqfw depends on a service: a boot-start driver must not"; return 1; }
    grep -q 'driver-install: sieveqfw running' "$tmp/install-a.log.out" || { echo "the custom action did not start it: $(grep driver- "$tmp/install-a.log.out" | tr '\n' ' ')"; return 1; }
    s="$(timeout 60 wine64 sc query sieveqfw 2>/dev/null | tr -d '\r' | awk '$1 == "STATE" { print $4 }')"
    [[ "$s" == RUNNING ]] || { echo "sc query sieveqfw: '$s'"; return 1; }
}
wcheck "Wine: the Driver feature: sieveqfw.sys from its INF into system32\\drivers, kernel service sieveqfw (system start, no dependency), started by the install" t_driver_installed
# Wine 8.0 accepts the recovery actions (ChangeServiceConfig2W) and the folders' access lists (SetNamedSecurityInfoW)
# and keeps neither (sc qfailure and icacls show nothing there): what is checked is that the custom actions ran, for
# exactly the services and folders this install made, and succeeded (they fail the install otherwise).
t_recovery_and_acl() {
    local svc
    for svc in SieveQAgent SieveQPreSq SieveQReplicaSq SieveQController SieveQConsole; do
        grep -q "^recovery: $svc restarts after 5 s, 30 s, 60 s" <(tr -d '\r' <"$tmp/install-a.log.out") || { echo "no recovery actions for $svc"; return 1; }
    done
    grep -q '^lock-folder: C:\\ProgramData\\SieveQ: SYSTEM and Administrators only' <(tr -d '\r' <"$tmp/install-a.log.out") \
        && grep -q '^lock-folder: C:\\ProgramData\\SieveQ\\deployment: SYSTEM and Administrators only' <(tr -d '\r' <"$tmp/install-a.log.out") \
        || { echo "folders not locked: $(grep lock-folder "$tmp/install-a.log.out" | tr '\n' ' ')"; return 1; }
}
wcheck "Wine: recovery actions (restart after 5 s, 30 s, 60 s) set on the five services; ProgramData\\SieveQ and its deployment folder locked to SYSTEM and Administrators" t_recovery_and_acl
step "A: the installed files, services and driver"

# --- A2: a service started and stopped through service control. The agent is the role that can reach running under
# Wine 8.0: it loads no private key until an application first sends, whereas pre-SQ and replica-SQ load their ECDSA
# P-256 keys at start, which Wine's CNG cannot do (NCryptCreatePersistedKey: "Algorithm not handled"). Its deployment
# is made by a Linux build of the same program (`deploy init` makes ECDSA keys, so it cannot run under Wine either).
# Right after msiexec, `sc start` sees the service go from START_PENDING to STOPPED without it ever running: a fresh,
# persistent wineserver (killed, restarted with -p) and a wineboot give services.exe a session that stays up.
agent_deployment="$WINEPREFIX/drive_c/ProgramData/SieveQ/deployment"
# The Linux build (deploy init here, console init in A4): the test command builds the solution (Release) just before
# it starts this check and says so with SIEVEQ_SOLUTION_BUILT=1, so its outputs are used; run alone, this check builds
# the CLI (and with it the console) into build/artifacts-linux, which takes minutes.
if [[ "${SIEVEQ_SOLUTION_BUILT:-}" == 1 && -f "$repo/service/SieveQ.Cli/bin/Release/net10.0/sieveq.dll" \
      && -f "$repo/admin-ui/SieveQ.AdminUi/bin/Release/net10.0/SieveQ.AdminUi.dll" ]]; then
    linux_sieveq="$repo/service/SieveQ.Cli/bin/Release/net10.0/sieveq.dll"
    linux_console="$repo/admin-ui/SieveQ.AdminUi/bin/Release/net10.0/SieveQ.AdminUi.dll"
else
    linux_sieveq="$build/artifacts-linux/bin/SieveQ.Cli/release/sieveq.dll"
    linux_console="$build/artifacts-linux/bin/SieveQ.AdminUi/release/SieveQ.AdminUi.dll"
fi
sc_state() { timeout 60 wine64 sc query "$1" 2>/dev/null | tr -d '\r' | awk '$1 == "STATE" { print $4 } $1 == "WIN32_EXIT_CODE" { print "exit=" $3 }' | tr '\n' ' '; }
# wait_state SERVICE STATE SECONDS: polls sc query until the state shows; prints the last answer.
wait_state() {
    local i last
    for ((i = 0; i < $3; i++)); do
        last="$(sc_state "$1")"
        [[ "$last" == "$2 "* ]] && { printf '%s' "$last"; return 0; }
        sleep 1
    done
    printf '%s' "$last"
    return 1
}
agent_process() { pgrep -f 'sieveq-agent\.exe' >/dev/null; }
if [[ -z "$wine_reason" ]]; then
    timeout 30 wineserver -k >/dev/null 2>&1
    sleep 1
    timeout 30 wineserver -p 900 >/dev/null 2>&1
    timeout 120 wine64 wineboot >>"$tmp/wine.log" 2>&1
fi
t_service_refused() {
    local s
    [[ -z "$(ls -A "$agent_deployment" 2>/dev/null)" ]] || { echo "the deployment folder is not empty"; return 1; }
    timeout 60 wine64 sc start SieveQAgent >"$tmp/sc-start.out" 2>&1 || { echo "sc start: $(tr -d '\r' <"$tmp/sc-start.out" | tr '\n' ' ')"; return 1; }
    s="$(wait_state SieveQAgent STOPPED 60)" || { echo "sc query after 60 s: $s"; return 1; }
    sleep 2
    ! agent_process || { echo "SCM says STOPPED but sieveq-agent.exe still runs"; return 1; }
}
wcheck "Wine: sc start SieveQAgent with an empty deployment folder: the program talks to the SCM (no error 1053), refuses to start and the service is STOPPED" t_service_refused
step "A2: wineserver restart, agent refused"
t_service_runs() {
    local s
    if [[ ! -f "$linux_sieveq" || ! -f "$linux_console" ]]; then
        dotnet build "$repo/service/SieveQ.Cli" -c Release -p:RunAnalyzers=false --artifacts-path "$build/artifacts-linux" -nologo -v quiet >"$tmp/linux-build.log" 2>&1 \
            || { echo "Linux build for deploy init: $(tail -n 3 "$tmp/linux-build.log" | tr '\n' ' ')"; return 1; }
    fi
    dotnet "$linux_sieveq" deploy init --dir "$agent_deployment" >"$tmp/deploy-init.log" 2>&1 \
        || { echo "deploy init: $(tail -n 3 "$tmp/deploy-init.log" | tr '\n' ' ')"; return 1; }
    timeout 60 wine64 sc start SieveQAgent >"$tmp/sc-start.out" 2>&1 || { echo "sc start: $(tr -d '\r' <"$tmp/sc-start.out" | tr '\n' ' ')"; return 1; }
    s="$(wait_state SieveQAgent RUNNING 60)" || { echo "not RUNNING after 60 s: $s"; return 1; }
    # RUNNING is reported when the service starts, before the agent is up; still running 10 s later (a refused start
    # ends within 2, above) means the agent started.
    sleep 10
    s="$(sc_state SieveQAgent)"
    [[ "$s" == "RUNNING "* ]] || { echo "10 s after start: $s"; return 1; }
    agent_process || { echo "SCM says RUNNING but no sieveq-agent.exe process"; return 1; }
}
wcheck "Wine: with a deployment (made by deploy init on Linux), sc start SieveQAgent: RUNNING, and still running 10 s later" t_service_runs
step "A2: deploy init, agent runs"
# sc stop SERVICE: STOPPED with exit code 0, and 2 s later RUNNING (a check of its process) no longer true.
stop_service() { # SERVICE RUNNING
    local s name=$1 running=$2
    timeout 60 wine64 sc stop "$name" >"$tmp/sc-stop.out" 2>&1 || { echo "sc stop: $(tr -d '\r' <"$tmp/sc-stop.out" | tr '\n' ' ')"; return 1; }
    s="$(wait_state "$name" STOPPED 60)" || { echo "not STOPPED 60 s after sc stop: $s"; return 1; }
    [[ "$s" == "STOPPED exit=0 " ]] || { echo "sc query after the stop: $s"; return 1; }
    sleep 2
    ! "$running" || { echo "$name's process still runs"; return 1; }
}
t_service_stops() { stop_service SieveQAgent agent_process; }
wcheck "Wine: sc stop SieveQAgent: STOPPED with exit code 0, the process gone" t_service_stops
step "A2: agent stops"

# --- A3: the controller as a service, on the same deployment. Its controller.json names no caller: a caller's pinned
# key is an ECDSA P-256 public key, which the controller imports at start, and Wine 8.0's CNG cannot (see README).
controller_process() { pgrep -f 'sieveq-controller\.exe' >/dev/null; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
controller_port=""
t_controller_runs() {
    local s i
    [[ -f "$agent_deployment/deployment.json" ]] || { echo "no deployment (deploy init above)"; return 1; }
    for i in 1 2 3 4 5 6 7 8 9 10; do
        controller_port=$((20000 + RANDOM % 40000))
        port_open "$controller_port" || break
    done
    printf '{ "url": "http://127.0.0.1:%s", "callers": [] }\n' "$controller_port" >"$agent_deployment/controller.json"
    timeout 60 wine64 sc start SieveQController >"$tmp/sc-start.out" 2>&1 || { echo "sc start: $(tr -d '\r' <"$tmp/sc-start.out" | tr '\n' ' ')"; return 1; }
    s="$(wait_state SieveQController RUNNING 60)" || { echo "not RUNNING after 60 s: $s"; return 1; }
    # RUNNING comes before the controller is up: its management API listening on the port, and the start recorded
    # in its audit log, show it is.
    for ((i = 0; i < 60; i++)); do port_open "$controller_port" && break; sleep 1; done
    port_open "$controller_port" || { echo "nothing listens on 127.0.0.1:$controller_port 60 s after the start ($(sc_state SieveQController))"; return 1; }
    # The API may listen a moment before the start record is on disk (a CI run found the folder empty right after).
    for ((i = 0; i < 30; i++)); do [[ -n "$(find "$agent_deployment/data/controller/audit" -type f -size +0 2>/dev/null)" ]] && break; sleep 1; done
    [[ -n "$(find "$agent_deployment/data/controller/audit" -type f -size +0 2>/dev/null)" ]] || { echo "no audit log in data\\controller\\audit 30 s after its API listened"; return 1; }
    controller_process || { echo "no sieveq-controller.exe process"; return 1; }
}
wcheck "Wine: sc start SieveQController (controller.json on the deployment): RUNNING, its management API listens, its audit log is written" t_controller_runs
t_controller_stops() {
    stop_service SieveQController controller_process || return 1
    ! port_open "$controller_port" || { echo "127.0.0.1:$controller_port still listens"; return 1; }
}
wcheck "Wine: sc stop SieveQController: STOPPED with exit code 0, the process gone, the port closed" t_controller_stops
step "A3: controller"


# --- A4: the console. It cannot serve under Wine 8.0: at start it imports its management key (ECDSA P-256, the key it
# signs its calls to the controller with), which Wine's CNG cannot (NTE_INVALID_PARAMETER 0x80090027; see README).
# What is checked: the installed console\sieveq-console.exe starts from its installed folder with the service's arguments, reads the
# deployment's files and its console.json (made by `init` from the Linux build), and stops exactly at that import.
t_console_wine_limit() {
    local out
    dotnet "$linux_console" init --deployment "$agent_deployment" >"$tmp/console-init.log" 2>&1 \
        || { echo "console init (Linux build): $(tail -n 3 "$tmp/console-init.log" | tr '\n' ' ')"; return 1; }
    [[ -f "$agent_deployment/console.json" && -f "$agent_deployment/keys/management-console.pem" ]] || { echo "init made no console.json or key"; return 1; }
    # --controller: so that controller.json's pinned keys (ECDSA too) are not read first.
    out="$(cd "$tmp" && timeout 120 wine64 'C:\Program Files\SieveQ\console\sieveq-console.exe' serve \
        --deployment 'C:\ProgramData\SieveQ\deployment\.' --controller http://127.0.0.1:9 2>&1 | tr -d '\r')"
    grep -qF 'management-console.pem: not an ECDSA private key in PEM (Unknown error (0x80090027))' <<<"$out" \
        || { echo "expected the refusal at the ECDSA key import, got: $(tail -n 3 <<<"$out" | tr '\n' ' ' | cut -c1-300)"; return 1; }
}
wcheck "Wine: the installed console (console\\sieveq-console.exe serve) starts from its folder and stops at Wine's limit: its ECDSA management key cannot be imported (0x80090027), so it is not served here" t_console_wine_limit
step "A4: console"

# The uninstall below removes ProgramData\SieveQ only when it is empty, as it left it.
# (dotfiles too: deploy init writes a .gitignore that keeps the deployment's keys out of any repository)
find "${agent_deployment:?}" -mindepth 1 -delete

# --- B: uninstall
t_uninstall() { # MSI LOG
    local rc
    msiexec_run /x "$1" "$2"
    rc=$?
    [[ $rc == 0 ]] || { echo "msiexec /x exit $rc"; return 1; }
}
t_removed() {
    [[ ! -e "$pf" ]] || { echo "Program Files\\SieveQ still has $(find "$pf" -type f | wc -l) files"; return 1; }
    [[ ! -e "$poldefs/SieveQ.admx" && ! -e "$poldefs/en-US/SieveQ.adml" ]] || { echo "ADMX/ADML left"; return 1; }
    [[ ! -e "$WINEPREFIX/drive_c/ProgramData/SieveQ" ]] || { echo "empty ProgramData\\SieveQ left"; return 1; }
    t_no_service SieveQAgent SieveQPreSq SieveQReplicaSq SieveQController SieveQConsole sieveqfw || return 1
    [[ ! -e "$drivers_dir/sieveqfw.sys" ]] || { echo "system32\\drivers\\sieveqfw.sys left"; return 1; }
    ! reg_exists 'HKLM\Software\SieveQ\Installer' || { echo "HKLM\\Software\\SieveQ\\Installer left"; return 1; }
    local pc
    for pc in "$@"; do ! product_registered "$pc" || { echo "product $pc still registered"; return 1; }; done
}
# The wineserver restart above (for the services) ended the driver's first load without an unload: start it again if
# the restart did not, so that the uninstall has a running driver to stop.
if [[ -z "$wine_reason" && "$(sc_state sieveqfw)" != "RUNNING "* ]]; then
    timeout 60 wine64 sc start sieveqfw >>"$tmp/wine.log" 2>&1
    wait_state sieveqfw RUNNING 30 >/dev/null
fi
wcheck "Wine: msiexec /x /qn succeeds" t_uninstall "$install_msi" uninstall-b.log
wcheck "Wine: uninstall removed the files (wwwroot\\ too), the five services, the driver (service and system32\\drivers\\sieveqfw.sys), the empty ProgramData folders, the settings key and the product" t_removed "$pc1"
# The uninstall stopped the driver: at its unload the stand-in found every registration, session, callout and pool
# block undone.
t_driver_unloaded() {
    local line
    grep -q 'driver-remove: sieveqfw removed' "$tmp/uninstall-b.log.out" || { echo "no driver-remove: $(tr '\n' ' ' <"$tmp/uninstall-b.log.out" | cut -c1-300)"; return 1; }
    line="$(tr -d '\r' <"$standin_log" 2>/dev/null | tail -n 1)"
    [[ "$line" == unload* ]] || { echo "no unload line in the stand-in's log: '$line'"; return 1; }
    grep -qE 'registered=([0-9]+) unregistered=\1 ' <<<"$line" && grep -q ' leak=0$' <<<"$line" \
        && grep -qE 'engine=([0-9]+)/\1 ' <<<"$line" || { echo "unbalanced: $line"; return 1; }
}
wcheck "Wine: the uninstall stopped the driver before removing it: the stand-in's unload line balanced (callouts, engine, pool, leak=0)" t_driver_unloaded
step "B: uninstall"

# --- C: some features, silent-install properties
console_pin='AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8='
props=(ADDLOCAL=PreSq,ReplicaSq,Console SIEVEQ_PRESQ_ID=5 SIEVEQ_REPLICA_ID=2 SIEVEQ_AGENT_NAME=host-17 'SIEVEQ_DEPLOYMENT_DIR=C:\SieveQ Deploy'
       SIEVEQ_CONSOLE_URL=http://127.0.0.1:5080 SIEVEQ_CONTROLLER_URL=https://10.1.2.3:7443 SIEVEQ_CONTROLLER_PIN=$console_pin)
wcheck "Wine: msiexec /i ADDLOCAL=PreSq,ReplicaSq,Console SIEVEQ_PRESQ_ID=5 SIEVEQ_REPLICA_ID=2 SIEVEQ_DEPLOYMENT_DIR=\"C:\\SieveQ Deploy\" SIEVEQ_CONSOLE_URL SIEVEQ_CONTROLLER_URL SIEVEQ_CONTROLLER_PIN succeeds" \
    t_install "$msi" install-c.log "${props[@]}"
dd_custom='--deployment "C:\SieveQ Deploy\."'
console_custom="serve $dd_custom --url \"http://127.0.0.1:5080\" --controller \"https://10.1.2.3:7443\" --controller-pin \"$console_pin\""
t_props() {
    t_service SieveQPreSq sieveq-pre-sq.exe "pre-sq $dd_custom --id 5" || return 1
    t_service SieveQReplicaSq sieveq-replica-sq.exe "replica-sq $dd_custom --id 2" || return 1
    t_service SieveQConsole "console\\sieveq-console.exe" "$console_custom" || return 1
    t_no_service SieveQAgent SieveQController sieveqfw || return 1
    [[ ! -e "$pf/sieveq-agent.exe" && ! -e "$pf/sieveq-controller.exe" && ! -e "$poldefs/SieveQ.admx" ]] || { echo "Agent or Controller feature files installed"; return 1; }
    [[ ! -e "$pf/driver" && ! -e "$drivers_dir/sieveqfw.sys" ]] || { echo "the Driver feature installed"; return 1; }
    grep -c '^recovery: .* restarts after' <(tr -d '\r' <"$tmp/install-c.log.out") | grep -qx 3 || { echo "recovery actions not for exactly the 3 services: $(grep recovery: "$tmp/install-c.log.out" | tr '\n' ' ')"; return 1; }
    grep -q '^lock-folder: C:\\SieveQ Deploy: SYSTEM and Administrators only' <(tr -d '\r' <"$tmp/install-c.log.out") || { echo "C:\\SieveQ Deploy not locked"; return 1; }
    [[ -f "$pf/console/wwwroot/_content/MudBlazor/MudBlazor.min.js" && -f "$pf/console/SieveQ.AdminUi.dll" ]] || { echo "the console's files not installed"; return 1; }
    [[ -d "$WINEPREFIX/drive_c/SieveQ Deploy" ]] || { echo "no C:\\SieveQ Deploy"; return 1; }
    [[ "$(reg_value 'HKLM\Software\SieveQ\Installer' PreSqId)" == 5 ]] || { echo "PreSqId not remembered"; return 1; }
}
wcheck "Wine: only SieveQPreSq, SieveQReplicaSq and SieveQConsole (each with recovery actions), with the given ids, console URL, controller URL and pin, and deployment folder (created, locked); no agent, no controller, no ADMX, no driver" t_props
step "C: features and properties"

# --- D: major upgrade to 1.0.1 without the SIEVEQ_* properties. Wine 8.0 has no MigrateFeatureStates (it skips the
# action), so it would add the Agent feature back: the feature list is given again; the tables check covers migration.
wcheck "Wine: upgrade: msiexec /i SieveQ 1.0.1 /qn ADDLOCAL=PreSq,ReplicaSq,Console (no SIEVEQ_* properties) succeeds" t_install "$msi2" install-d.log ADDLOCAL=PreSq,ReplicaSq,Console
t_upgraded() {
    ! product_registered "$pc1" || { echo "1.0.0 ($pc1) still registered"; return 1; }
    product_registered "$pc2" || { echo "1.0.1 ($pc2) not registered"; return 1; }
    [[ "$(reg_value "HKLM\\Software\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\$pc2" DisplayVersion)" == 1.0.1 ]] \
        || { echo "DisplayVersion $(reg_value "HKLM\\Software\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\$pc2" DisplayVersion)"; return 1; }
    t_service SieveQPreSq sieveq-pre-sq.exe "pre-sq $dd_custom --id 5" || return 1
    t_service SieveQReplicaSq sieveq-replica-sq.exe "replica-sq $dd_custom --id 2" || return 1
    t_service SieveQConsole "console\\sieveq-console.exe" "$console_custom" || return 1
    t_no_service SieveQAgent SieveQController || return 1
    cmp -s "$publish/sieveq.dll" "$pf/sieveq.dll" || { echo "sieveq.dll missing after the upgrade"; return 1; }
}
wcheck "Wine: upgrade replaced 1.0.0 (one product registered) and kept the ids, the console's settings and the deployment folder" t_upgraded
step "D: upgrade"

# --- E: downgrade refused
t_downgrade() {
    local rc
    msiexec_run /i "$msi" install-e.log
    rc=$?
    [[ $rc != 0 ]] || { echo "installing 1.0.0 over 1.0.1 succeeded"; return 1; }
    grep -aq 'WIX_DOWNGRADE_DETECTED = ' "$tmp/install-e.log" || { echo "exit $rc but no WIX_DOWNGRADE_DETECTED in the log"; return 1; }
    product_registered "$pc2" && ! product_registered "$pc1" || { echo "registration changed"; return 1; }
    cmp -s "$publish/sieveq.dll" "$pf/sieveq.dll" || { echo "files changed"; return 1; }
}
wcheck "Wine: installing 1.0.0 over 1.0.1 is refused (newer version installed) and changes nothing" t_downgrade
step "E: downgrade"

# --- F: uninstall the upgraded product
wcheck "Wine: msiexec /x SieveQ 1.0.1 /qn succeeds" t_uninstall "$msi2" uninstall-f.log
t_removed_f() {
    t_removed "$pc1" "$pc2" || return 1
    [[ ! -e "$WINEPREFIX/drive_c/SieveQ Deploy" ]] || { echo "empty C:\\SieveQ Deploy left"; return 1; }
}
wcheck "Wine: everything removed again (files, services, folders, settings, both products)" t_removed_f
step "F: uninstall"

# --- G: an install that fails after the driver was installed rolls it back. TEST ONLY: a copy of the package with one
# more deferred custom action, sieveq-setup.exe with a command it refuses, just before InstallFinalize; only the Driver
# feature, so that the install is short.
failing_msi="$tmp/SieveQ-fails-late.msi"
t_rollback() {
    local rc line
    cp "$msi" "$failing_msi"
    (msibuild "$failing_msi" -q "INSERT INTO \`CustomAction\` (\`Action\`, \`Type\`, \`Source\`, \`Target\`) VALUES ('TestFailsLate', 3074, 'SieveQSetup', 'no-such-command')" \
        && msibuild "$failing_msi" -q "INSERT INTO \`InstallExecuteSequence\` (\`Action\`, \`Sequence\`) VALUES ('TestFailsLate', 6590)") \
        || { echo "msibuild could not make the failing copy"; return 1; }
    : >"$standin_log"
    msiexec_run /i "$failing_msi" install-g.log ADDLOCAL=Driver
    rc=$?
    [[ $rc != 0 ]] || { echo "the failing install succeeded"; return 1; }
    grep -q 'driver-install: sieveqfw running' "$tmp/install-g.log.out" || { echo "the driver was not installed before the failure: $(tr '\n' ' ' <"$tmp/install-g.log.out" | cut -c1-300)"; return 1; }
    grep -q 'driver-remove: sieveqfw removed' "$tmp/install-g.log.out" || { echo "no rollback of the driver: $(tr '\n' ' ' <"$tmp/install-g.log.out" | cut -c1-300)"; return 1; }
    t_no_service sieveqfw || return 1
    [[ ! -e "$drivers_dir/sieveqfw.sys" && ! -e "$pf" ]] || { echo "files left after the rollback"; return 1; }
    ! product_registered "$(msiinfo export "$failing_msi" Property | tr -d '\r' | awk -F'\t' '$1 == "ProductCode" { print $2 }')" || { echo "product registered"; return 1; }
    line="$(tr -d '\r' <"$standin_log" 2>/dev/null | tail -n 1)"
    grep -qE 'registered=([0-9]+) unregistered=\1 .* leak=0$' <<<"$line" || { echo "the driver's unload: '$line'"; return 1; }
}
wcheck "Wine: an install failing after the driver started rolls it back: driver stopped (unload balanced), service and system32\\drivers\\sieveqfw.sys gone, nothing installed" t_rollback
step "G: rollback"

timeout 30 wineserver -k >/dev/null 2>&1
finish
