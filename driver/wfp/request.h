#ifndef SQFW_REQUEST_H
#define SQFW_REQUEST_H
#include "glue.h"

/* Request plus the bounded buffers its strings point into (caller's stack:
 * about 1.2 KB, well inside the kernel stack budget of a classify). */
typedef struct sqfw_req_buf {
    sqfw_request req;
    UINT8 path[SQFW_EVENT_PATH_MAX * 4];
    UINT8 user[SQFW_MAX_USER];
} sqfw_req_buf;

#include "../core/policy_format.h"

/* An ALE authorisation pended for the agent's answer. `pkt` is the first
 * member: a permitted clone is injected as a queued packet and the
 * injection's completion frees the whole record through it. */
typedef struct sqfw_pended {
    sqfw_queued pkt;  /* clone (NULL when WFP gave no packet) and what injecting it needs */
    HANDLE completion;
    UINT64 completed_ns;
    sqfw_req_buf req; /* inbound: decided again by the worker; outbound: matched at re-authorisation */
} sqfw_pended;

/* Reads the fields at in->layerId's indices (an ALE connect, recv-accept or
 * flow-established layer); FALSE for any other layer or too few values. */
BOOLEAN sqfw_build_request(const FWPS_INCOMING_VALUES0 *in, const FWPS_INCOMING_METADATA_VALUES0 *meta,
                           UINT16 family, UINT8 direction, sqfw_req_buf *b);

#endif
