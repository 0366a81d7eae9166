/* TEST ONLY: the stand-in's BFE store of persistent and boot-time objects
 * (standin_boot.c), as standin.c's entry points hand sessions that are not
 * dynamic over to it. */
#ifndef SQFW_STANDIN_BOOT_H
#define SQFW_STANDIN_BOOT_H
#include "../wfp/include/wfp_boot_decls.h"

int sq_boot_owns(HANDLE h);
NTSTATUS sq_boot_engine_open(HANDLE *h);
NTSTATUS sq_boot_engine_close(HANDLE h);
enum { SQ_TXN_BEGIN, SQ_TXN_COMMIT, SQ_TXN_ABORT };
NTSTATUS sq_boot_txn(HANDLE h, int op);
NTSTATUS sq_boot_sublayer_add(HANDLE h, const FWPM_SUBLAYER0 *s);
NTSTATUS sq_boot_filter_add(HANDLE h, const FWPM_FILTER0 *f, UINT64 *id);
int sq_boot_ioctl(ULONG code, void *buf, ULONG in_len, ULONG out_len, NTSTATUS *st, ULONG *info);
void sq_boot_attach(void);
#endif
