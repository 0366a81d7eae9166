#!/bin/sh
# Checks the cross-built driver image: PE32+, native subsystem, imports
# only from the kernel, the WFP kernel client and NDIS, and no section that is
# both writable and executable (HVCI refuses to load such a driver).
set -eu
OBJDUMP=$1
SYS=$2
fail() { echo "pe-check: FAIL: $*" >&2; exit 1; }

hdr=$("$OBJDUMP" -p "$SYS")
echo "$hdr" | grep -q 'Magic.*020b' || fail "not PE32+"
echo "$hdr" | grep -Eq 'Subsystem[[:space:]]+00000001' || fail "subsystem is not native"
imports=$(echo "$hdr" | sed -n 's/^[[:space:]]*DLL Name: //p' | sort -u | tr '\n' ' ')
echo "$imports" | grep -q 'ntoskrnl.exe' || fail "does not import ntoskrnl.exe"
echo "$imports" | grep -q 'fwpkclnt.sys' || fail "does not import fwpkclnt.sys"
for dll in $imports; do
    case "$dll" in
    ntoskrnl.exe | fwpkclnt.sys | ndis.sys) ;;
    *) fail "unexpected import $dll" ;;
    esac
done
# DllCharacteristics: NX_COMPAT (0x100) must be set
dllch=$(echo "$hdr" | sed -n 's/^DllCharacteristics[[:space:]]*//p')
[ $(( 0x$dllch & 0x100 )) -ne 0 ] || fail "NX_COMPAT not set"
# FORCE_INTEGRITY (0x80): PsSetCreateProcessNotifyRoutineEx refuses a driver without it
[ $(( 0x$dllch & 0x80 )) -ne 0 ] || fail "FORCE_INTEGRITY not set"

# objdump -h prints each section's flags on the line after its header line;
# a section is writable unless READONLY, executable if CODE.
"$OBJDUMP" -h "$SYS" | awk '
    /^ *[0-9]+ / { name = $2; next }
    name != "" {
        if ($0 ~ /CODE/ && $0 !~ /READONLY/) { print "pe-check: FAIL: section " name " is writable and executable"; bad = 1 }
        name = ""
    }
    END { exit bad }' || exit 1

pf_sym=$("$OBJDUMP" -p "$SYS" | grep -c 'FwpsCalloutRegister0' || true)
[ "$pf_sym" -ge 1 ] || fail "FwpsCalloutRegister0 not imported"
# wdmsec.lib's IoCreateDeviceSecure is not an ntoskrnl export on Windows
# (Wine's ntoskrnl has one): importing it would load under Wine only
if "$OBJDUMP" -p "$SYS" | grep -q 'IoCreateDeviceSecure'; then fail "imports IoCreateDeviceSecure"; fi
size=$(wc -c < "$SYS")
echo "pe-check: $SYS ok ($size bytes, native, imports: $imports, no W+X section)"
