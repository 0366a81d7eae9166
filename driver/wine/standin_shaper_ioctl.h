/* Test-only: the per-packet (transport layer) requests the Wine harness
 * makes of the fwpkclnt.sys stand-in (wine/standin_shaper.c), beside the
 * codes of standin_ioctl.h. */
#ifndef SQFW_STANDIN_SHAPER_IOCTL_H
#define SQFW_STANDIN_SHAPER_IOCTL_H
#include <stdint.h>

#include "standin_ioctl.h"

#define IOCTL_STANDIN_PACKETS SQ_STANDIN_CTL(0xF20u)    /* in: sq_packets_in; out: sq_packets_out */
#define IOCTL_STANDIN_INJECTIONS SQ_STANDIN_CTL(0xF21u) /* out: sq_injections (taken: the record empties) */

#define SQ_MAX_PACKETS 320u   /* one request: a burst past a class queue's 256 */
#define SQ_MAX_INJECTIONS 512u

/* Registration-order index of the v6 transport callouts (the driver's C_*). */
enum { SQ_C_OUT_V6 = 7, SQ_C_IN_V6 = 9 };

/* sq_packets_in.mark */
#define SQ_PKT_INJECTED_BY_SELF 0x1u /* FwpsQueryPacketInjectionState0 answers FWPS_PACKET_INJECTED_BY_SELF */
#define SQ_PKT_IPSEC 0x2u            /* FLAGS carries FWP_CONDITION_FLAG_IS_IPSEC_SECURED */
#define SQ_PKT_ALE_REQUIRED 0x4u     /* metadata carries FWPS_METADATA_FIELD_ALE_CLASSIFY_REQUIRED */
#define SQ_PKT_NO_CONTEXT 0x8u       /* no flow context (a flow older than the driver) */

/* `count` packets of one flow, classified one after the other at one
 * transport layer; packet i carries first_len + i bytes past its headers, so
 * an injection names the packet it re-injects by its length. */
typedef struct sq_packets_in {
    uint32_t callout;              /* SQ_C_OUT_V4, SQ_C_IN_V4, ... */
    uint32_t layer_id;             /* FWPS_LAYER_*: 12 in v4, 14 in v6, 16 out v4, 18 out v6 */
    uint64_t flow_handle;          /* the flow whose context the driver associated at that layer */
    uint32_t count, first_len;
    uint32_t mark;                 /* SQ_PKT_* */
    uint8_t protocol, family;
    uint16_t local_port, remote_port;
    uint8_t pad[2];
    uint32_t local_addr, remote_addr; /* IPv4, host order as WFP gives them */
    uint8_t local_addr6[16], remote_addr6[16]; /* layers 14 and 18: network order, FWP_BYTE_ARRAY16_TYPE */
    uint32_t if_index, sub_if_index, compartment;
    uint32_t ip_header_size, transport_header_size;
    uint64_t endpoint;             /* FWPS_METADATA_FIELD_TRANSPORT_ENDPOINT_HANDLE when not 0 */
    uint32_t scope_id;             /* FWPS_METADATA_FIELD_REMOTE_SCOPE_ID when not 0 (a v6 link-local peer) */
    uint32_t pad2;
} sq_packets_in;

#define SQ_OUT_PERMIT 1u
#define SQ_OUT_ABSORB 2u  /* block + FWPS_CLASSIFY_OUT_FLAG_ABSORB: the driver kept a clone */
#define SQ_OUT_BLOCK 3u
#define SQ_OUT_NONE 4u    /* no action set */
typedef struct sq_packets_out {
    uint32_t count;
    uint32_t moved;       /* originals not left at the offset they came with */
    uint64_t elapsed_ns;  /* the driver's clock across the whole request */
    uint8_t result[SQ_MAX_PACKETS]; /* SQ_OUT_* per packet */
} sq_packets_out;

typedef struct sq_injection {
    uint32_t receive;      /* 0: FwpsInjectTransportSendAsync0, 1: ...ReceiveAsync0 */
    uint32_t family;       /* AF_INET 2 / AF_INET6 23 as passed */
    uint32_t compartment, if_index, sub_if_index;
    uint32_t data_len;     /* NET_BUFFER DataLength at injection */
    uint32_t offset_back;  /* bytes the clone was moved back from where the classify had it */
    uint32_t scope_id;
    uint64_t endpoint;
    uint8_t remote[16];    /* send: the remote address as passed (network order) */
    uint32_t handle_ok;    /* the injection handle the driver created for that family */
    uint32_t pad;
} sq_injection;

typedef struct sq_injections {
    uint32_t count, lost; /* lost: more than SQ_MAX_INJECTIONS since the last read */
    sq_injection rec[SQ_MAX_INJECTIONS];
} sq_injections;

#endif
