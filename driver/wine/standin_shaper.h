/* TEST ONLY: the stand-in's per-packet part (standin_shaper.c), called from
 * standin.c's request dispatch and injection functions. */
#ifndef SQFW_STANDIN_SHAPER_H
#define SQFW_STANDIN_SHAPER_H

/* TRUE when `code` is one of standin_shaper_ioctl.h's; *st and *info are the request's result */
static BOOLEAN shaper_request(ULONG code, void *buf, ULONG in_len, ULONG out_len, NTSTATUS *st, ULONG *info);
static void shaper_note_send(HANDLE h, UINT64 endpoint, const FWPS_TRANSPORT_SEND_PARAMS0 *args, ADDRESS_FAMILY af,
                             COMPARTMENT_ID comp, const NET_BUFFER_LIST *nbl);
static void shaper_note_receive(HANDLE h, ADDRESS_FAMILY af, COMPARTMENT_ID comp, IF_INDEX ifi, IF_INDEX subifi,
                                const NET_BUFFER_LIST *nbl);

#endif
