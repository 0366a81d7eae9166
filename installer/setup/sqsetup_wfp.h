/* Removal of the driver's persistent WFP objects (boot-time and persistent
 * filters, sublayers, the provider), by the provider key they carry. */
#pragma once
#include <windows.h>

/* 0 on success (also when there was nothing to remove), else a Win32/FWP error. */
DWORD sqsetup_remove_wfp_objects(void);
