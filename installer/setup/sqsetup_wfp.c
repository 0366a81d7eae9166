/* The driver's dynamic session objects go with the driver; what it adds as
 * persistent or boot-time lives in BFE's store until someone deletes it.
 * Everything the driver persists carries its provider key, so removal finds
 * the objects by that key rather than by a list that could fall behind the
 * driver's. One transaction: a failure leaves the store as it was. */
#define WIN32_LEAN_AND_MEAN
#ifndef UNICODE
#define UNICODE
#endif
#include <windows.h>
#include <fwpmu.h>
#include <stdio.h>

#include "sqsetup_wfp.h"
#include "../../driver/wfp/sqfw_keys.h"

#ifndef FWP_E_PROVIDER_NOT_FOUND
#define FWP_E_PROVIDER_NOT_FOUND ((DWORD)0x80320005L)
#endif
#ifndef FWP_E_SUBLAYER_NOT_FOUND
#define FWP_E_SUBLAYER_NOT_FOUND ((DWORD)0x80320007L)
#endif
#ifndef FWP_E_FILTER_NOT_FOUND
#define FWP_E_FILTER_NOT_FOUND ((DWORD)0x80320003L)
#endif

static DWORD delete_filters(HANDLE engine, unsigned *count)
{
    GUID provider = SQFW_PROVIDER_KEY;
    FWPM_FILTER_ENUM_TEMPLATE0 tmpl = {0};
    tmpl.providerKey = &provider;
    tmpl.enumType = FWP_FILTER_ENUM_OVERLAPPING;
    tmpl.flags = FWP_FILTER_ENUM_FLAG_INCLUDE_BOOTTIME;
    tmpl.actionMask = 0xFFFFFFFF;
    HANDLE en = NULL;
    DWORD e = FwpmFilterCreateEnumHandle0(engine, &tmpl, &en);
    if (e)
        return e;
    for (;;) {
        FWPM_FILTER0 **page = NULL;
        UINT32 n = 0;
        e = FwpmFilterEnum0(engine, en, 64, &page, &n);
        if (e || n == 0) {
            if (page)
                FwpmFreeMemory0((void **)&page);
            break;
        }
        for (UINT32 i = 0; i < n && !e; i++) {
            /* the template's provider match is the filter engine's; checked
             * again so that nothing of another provider is ever deleted */
            if (!page[i]->providerKey || !IsEqualGUID(page[i]->providerKey, &provider))
                continue;
            e = FwpmFilterDeleteByKey0(engine, &page[i]->filterKey);
            if (e == (DWORD)FWP_E_FILTER_NOT_FOUND)
                e = 0;
            else if (!e)
                (*count)++;
        }
        FwpmFreeMemory0((void **)&page);
        if (e)
            break;
    }
    FwpmFilterDestroyEnumHandle0(engine, en);
    return e;
}

DWORD sqsetup_remove_wfp_objects(void)
{
    HANDLE engine = NULL;
    DWORD e = FwpmEngineOpen0(NULL, RPC_C_AUTHN_WINNT, NULL, NULL, &engine);
    if (e)
        return e;
    e = FwpmTransactionBegin0(engine, 0);
    if (e) {
        FwpmEngineClose0(engine);
        return e;
    }
    unsigned filters = 0;
    e = delete_filters(engine, &filters);
    if (!e) {
        GUID sublayer = SQFW_PERSISTENT_SUBLAYER_KEY;
        e = FwpmSubLayerDeleteByKey0(engine, &sublayer);
        if (e == (DWORD)FWP_E_SUBLAYER_NOT_FOUND)
            e = 0;
    }
    if (!e) {
        GUID provider = SQFW_PROVIDER_KEY;
        e = FwpmProviderDeleteByKey0(engine, &provider);
        if (e == (DWORD)FWP_E_PROVIDER_NOT_FOUND)
            e = 0;
    }
    if (e)
        FwpmTransactionAbort0(engine);
    else
        e = FwpmTransactionCommit0(engine);
    FwpmEngineClose0(engine);
    if (!e)
        wprintf(L"driver-remove: %u persistent WFP filters removed\n", filters);
    return e;
}
