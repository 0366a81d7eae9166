/* Keys of the WFP objects the driver persists in BFE's store (its optional
 * boot-time filters: wfp/bootfilters.c). Shared with the installer's
 * custom action (installer/setup/), which must find and remove them on
 * uninstall: an uninstalled firewall must not go on blocking at boot. */
#pragma once

/* {6c7d1e0a-5f2b-4a8e-9d3c-51e5a0f1b0xx}: xx 00 the provider, 01 the sublayer, 10.. the filters */
#define SQFW_PERSISTED_KEY(last)                                                                                       \
    {                                                                                                                  \
        0x6c7d1e0a, 0x5f2b, 0x4a8e, { 0x9d, 0x3c, 0x51, 0xe5, 0xa0, 0xf1, 0xb0, (last) }                              \
    }
#define SQFW_PROVIDER_KEY SQFW_PERSISTED_KEY(0x00)
#define SQFW_PERSISTENT_SUBLAYER_KEY SQFW_PERSISTED_KEY(0x01)
#define SQFW_PROVIDER_KEY_TEXT L"{6c7d1e0a-5f2b-4a8e-9d3c-51e5a0f1b000}"
