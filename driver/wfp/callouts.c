/* Callout registration and the classify functions: ALE connect and
 * recv-accept decide, ALE flow established attaches the flow context, the
 * transport layers shape. Filters live in a dynamic WFP session, so they
 * disappear with the driver even if unload is abrupt. */
#include "glue.h"
#include "request.h"

/* {6c7d1e0a-5f2b-4a8e-9d3c-51e5a0f1c001}.. one key per callout, ours */
#define SQ_GUID(last)                                                                                                  \
    {                                                                                                                  \
        0x6c7d1e0a, 0x5f2b, 0x4a8e, { 0x9d, 0x3c, 0x51, 0xe5, 0xa0, 0xf1, 0xc0, (last) }                              \
    }
static const GUID sublayer_key = SQ_GUID(0x00);

/* FWPM_LAYER_* keys from Microsoft's documentation (fwpmk.h) */
static const GUID layer_connect_v4 = {0xc38d57d1, 0x05a7, 0x4c33, {0x90, 0x4f, 0x7f, 0xbc, 0xee, 0xe6, 0x0e, 0x82}};
static const GUID layer_connect_v6 = {0x4a72393b, 0x319f, 0x44bc, {0x84, 0xc3, 0xba, 0x54, 0xdc, 0xb3, 0xb6, 0xb4}};
static const GUID layer_accept_v4 = {0xe1cd9fe7, 0xf4b5, 0x4273, {0x96, 0xc0, 0x59, 0x2e, 0x48, 0x7b, 0x86, 0x50}};
static const GUID layer_accept_v6 = {0xa3b42c97, 0x9f04, 0x4672, {0xb8, 0x7e, 0xce, 0xe9, 0xc4, 0x83, 0x25, 0x7f}};
static const GUID layer_flow_v4 = {0xaf80470a, 0x5596, 0x4c13, {0x99, 0x92, 0x53, 0x9e, 0x6f, 0xe5, 0x79, 0x67}};
static const GUID layer_flow_v6 = {0x7021d2b3, 0xdfa4, 0x406e, {0xaf, 0xeb, 0x6a, 0xfa, 0xf7, 0xe7, 0x0e, 0xfd}};
static const GUID layer_out_v4 = {0x09e61aea, 0xd214, 0x46e2, {0x9b, 0x21, 0xb2, 0x6b, 0x0b, 0x2f, 0x28, 0xc8}};
static const GUID layer_out_v6 = {0xe1735bde, 0x013f, 0x4655, {0xb3, 0x51, 0xa4, 0x9e, 0x15, 0x76, 0x2d, 0xf0}};
static const GUID layer_in_v4 = {0x5926dfc8, 0xe3cf, 0x4426, {0xa2, 0x83, 0xdc, 0x39, 0x3f, 0x5d, 0x0f, 0x9d}};
static const GUID layer_in_v6 = {0x634a869f, 0xfc23, 0x4b90, {0xb0, 0xc1, 0xbf, 0x62, 0x0a, 0x36, 0xae, 0x6f}};

enum { C_CONNECT_V4, C_CONNECT_V6, C_ACCEPT_V4, C_ACCEPT_V6, C_FLOW_V4, C_FLOW_V6, C_OUT_V4, C_OUT_V6, C_IN_V4, C_IN_V6,
       C_COUNT };

static void permit(FWPS_CLASSIFY_OUT0 *out)
{
    out->actionType = FWP_ACTION_PERMIT;
}

static void block(FWPS_CLASSIFY_OUT0 *out)
{
    out->actionType = FWP_ACTION_BLOCK;
    out->rights &= ~FWPS_RIGHT_ACTION_WRITE; /* a block must not be overridden below us */
}

/* A clone WFP lets us keep past the classify. Inbound packets are handed to
 * the callout past their IP and transport headers, but receive injection
 * wants the IP header: the data start is moved back for the clone (which
 * inherits the offset) and restored on the original, as Microsoft's inspect
 * sample does. Without both header sizes the clone could not be injected
 * correctly, so none is made. */
static NTSTATUS clone_packet(NET_BUFFER_LIST *nbl, const FWPS_INCOMING_METADATA_VALUES0 *meta, UINT8 inbound,
                             NET_BUFFER_LIST **clone)
{
    *clone = NULL;
    if (!nbl || !nbl->FirstNetBuffer)
        return STATUS_INVALID_PARAMETER;
    if (!inbound)
        return FwpsAllocateCloneNetBufferList0(nbl, NULL, NULL, 0, clone);
    const UINT32 need = FWPS_METADATA_FIELD_IP_HEADER_SIZE | FWPS_METADATA_FIELD_TRANSPORT_HEADER_SIZE;
    if (!meta || (meta->currentMetadataValues & need) != need || nbl->FirstNetBuffer->Next)
        return STATUS_INVALID_PARAMETER;
    ULONG back = meta->ipHeaderSize + meta->transportHeaderSize;
    if (back < meta->ipHeaderSize) /* overflow */
        return STATUS_INVALID_PARAMETER;
    if (NdisRetreatNetBufferDataStart(nbl->FirstNetBuffer, back, 0, NULL) != NDIS_STATUS_SUCCESS)
        return STATUS_INSUFFICIENT_RESOURCES;
    NTSTATUS st = FwpsAllocateCloneNetBufferList0(nbl, NULL, NULL, 0, clone);
    NdisAdvanceNetBufferDataStart(nbl->FirstNetBuffer, back, FALSE, NULL);
    return st;
}

/* ---- ALE auth connect / recv-accept ---- */

static BOOLEAN injected_by_self(HANDLE inj, NET_BUFFER_LIST *nbl)
{
    if (!nbl || !inj)
        return FALSE;
    FWPS_PACKET_INJECTION_STATE st = FwpsQueryPacketInjectionState0(inj, nbl, NULL);
    return st == FWPS_PACKET_INJECTED_BY_SELF || st == FWPS_PACKET_PREVIOUSLY_INJECTED_BY_SELF;
}

static BOOLEAN same_connection(const sqfw_request *a, const sqfw_request *b)
{
    return a->process_key == b->process_key && a->family == b->family && a->protocol == b->protocol &&
           a->local_port == b->local_port && a->remote_port == b->remote_port &&
           sq_equal(a->remote_addr, b->remote_addr, 16);
}

/* The re-authorisation that completing an outbound pend triggers: its
 * record (and the clone of the first datagram, if any) is taken here; a
 * permitted clone goes to the worker for injection. Called under the lock. */
static sqfw_pended *take_completed_connect(const sqfw_request *r, BOOLEAN permit)
{
    for (LIST_ENTRY *e = g_sqfw.reauth_wait.Flink; e != &g_sqfw.reauth_wait; e = e->Flink) {
        sqfw_pended *p = CONTAINING_RECORD(e, sqfw_pended, pkt.link);
        if (!same_connection(&p->req.req, r))
            continue;
        RemoveEntryList(e);
        if (permit && p->pkt.clone && !g_sqfw.stopping) {
            InsertTailList(&g_sqfw.inject_ready, &p->pkt.link);
            return NULL;
        }
        return p; /* the caller frees it outside the lock */
    }
    return NULL;
}

/* Pends the classify for the agent's answer, keeping a clone of the packet
 * that came with it (an outbound UDP connect's first datagram; the inbound
 * SYN or datagram), so completing the pend does not lose it. The core's slot
 * is armed only once the completion handle is stored, so the worker never
 * finds an armed slot without its handle. FALSE: nothing was pended, the
 * slot is freed and the caller fails closed. */
static BOOLEAN pend_for_agent(const sqfw_req_buf *b, const FWPS_INCOMING_VALUES0 *in,
                              const FWPS_INCOMING_METADATA_VALUES0 *meta, NET_BUFFER_LIST *nbl, UINT32 slot)
{
    sqfw_pended *p = NULL;
    BOOLEAN inbound = b->req.direction == SQFW_DIR_INBOUND;
    sqfw_field_map m;
    if (slot < SQFW_MAX_PENDED && meta && (meta->currentMetadataValues & FWPS_METADATA_FIELD_COMPLETION_HANDLE) &&
        sqfw_fields_for_layer(in->layerId, &m))
        p = ExAllocatePoolWithTag(NonPagedPoolNx, sizeof *p, SQFW_TAG);
    if (p) {
        sq_zero(p, sizeof *p);
        sq_copy(&p->req, b, sizeof *b);
        /* the copy's strings point into the copy */
        p->req.req.path = b->req.path_len ? p->req.path : NULL;
        p->req.req.user = b->req.user_len ? p->req.user : NULL;
        p->req.req.service = NULL;
        p->req.req.service_len = 0;
        p->pkt.family = b->req.family;
        p->pkt.outbound = inbound ? 0 : 1;
        sq_copy(p->pkt.remote_addr, b->req.remote_addr, 16);
        p->pkt.compartment = (meta->currentMetadataValues & FWPS_METADATA_FIELD_COMPARTMENT_ID) ? meta->compartmentId : 0;
        p->pkt.endpoint = (meta->currentMetadataValues & FWPS_METADATA_FIELD_TRANSPORT_ENDPOINT_HANDLE)
                              ? meta->transportEndpointHandle
                              : 0;
        p->pkt.scope_id = (meta->currentMetadataValues & FWPS_METADATA_FIELD_REMOTE_SCOPE_ID) ? meta->remoteScopeId : 0;
        if (inbound && m.interface_index != SQFW_FIELD_NONE && in->valueCount >= m.count) {
            const FWP_VALUE0 *ifi = &in->incomingValue[m.interface_index].value;
            const FWP_VALUE0 *sub = &in->incomingValue[m.sub_interface_index].value;
            p->pkt.if_index = ifi->type == FWP_UINT32 ? ifi->uint32 : 0;
            p->pkt.sub_if_index = sub->type == FWP_UINT32 ? sub->uint32 : 0;
        }
        /* no clone, no pend: an absorbed packet we cannot give back is lost */
        if (nbl && !NT_SUCCESS(clone_packet(nbl, meta, (UINT8)inbound, &p->pkt.clone))) {
            ExFreePoolWithTag(p, SQFW_TAG);
            p = NULL;
        }
    }
    if (p && !NT_SUCCESS(FwpsPendOperation0(meta->completionHandle, &p->completion))) {
        sqfw_free_queued(&p->pkt);
        p = NULL;
    }
    KIRQL irql;
    KeAcquireSpinLock(&g_sqfw.lock, &irql);
    if (p && !g_sqfw.stopping && slot < SQFW_MAX_PENDED && !g_sqfw.pend[slot]) {
        g_sqfw.pend[slot] = p;
        sqfw_pend_arm(g_sqfw.engine, slot);
        p = NULL;
        KeReleaseSpinLock(&g_sqfw.lock, irql);
        KeSetEvent(&g_sqfw.kick, 0, FALSE);
        return TRUE;
    }
    sqfw_pend_abort(g_sqfw.engine, slot);
    KeReleaseSpinLock(&g_sqfw.lock, irql);
    if (p) {
        /* pended but unloading: complete it at once, the re-authorisation fails closed */
        FwpsCompleteOperation0(p->completion, NULL);
        sqfw_free_queued(&p->pkt);
    }
    return FALSE;
}

static void authorize(const FWPS_INCOMING_VALUES0 *in, const FWPS_INCOMING_METADATA_VALUES0 *meta, void *layer,
                      FWPS_CLASSIFY_OUT0 *out, UINT16 family, UINT8 direction)
{
    NET_BUFFER_LIST *nbl = (NET_BUFFER_LIST *)layer;
    if (injected_by_self(family == 4 ? g_sqfw.inject_v4 : g_sqfw.inject_v6, nbl)) {
        if (out->rights & FWPS_RIGHT_ACTION_WRITE)
            permit(out); /* a pended packet we re-injected: already decided */
        return;
    }
    sqfw_req_buf b;
    if (!sqfw_build_request(in, meta, family, direction, &b)) {
        if (out->rights & FWPS_RIGHT_ACTION_WRITE)
            block(out);
        return;
    }
    BOOLEAN writable = (out->rights & FWPS_RIGHT_ACTION_WRITE) != 0;
    /* a re-authorisation of a completed outbound pend carries no packet and
     * may come without the write right; its kept clone still needs taking */
    BOOLEAN completed_connect = (b.req.flags & SQFW_RF_REAUTH) && direction == SQFW_DIR_OUTBOUND && !nbl;
    if (!writable && !completed_connect)
        return; /* a higher-priority filter already decided */
    sqfw_decision d;
    sqfw_pended *stale = NULL;
    KIRQL irql;
    KeAcquireSpinLock(&g_sqfw.lock, &irql);
    int rc = writable ? sqfw_authorize(g_sqfw.engine, &b.req, sqfw_now_ns(), &d)
                      : sqfw_explain(g_sqfw.engine, &b.req, sqfw_now_ns(), &d);
    if (completed_connect)
        stale = take_completed_connect(&b.req, rc == SQFW_OK && d.verdict == SQFW_ALLOW);
    KeReleaseSpinLock(&g_sqfw.lock, irql);
    if (stale)
        sqfw_free_queued(&stale->pkt);
    if (completed_connect)
        KeSetEvent(&g_sqfw.kick, 0, FALSE); /* inject the kept datagram, deliver events */
    if (!writable)
        return;
    if (rc != SQFW_OK) {
        block(out);
        return;
    }
    if (d.verdict == SQFW_PEND) {
        if (pend_for_agent(&b, in, meta, nbl, d.pend_slot)) {
            /* absorbed now, re-authorised when the agent answers or time runs out */
            out->actionType = FWP_ACTION_BLOCK;
            out->rights &= ~FWPS_RIGHT_ACTION_WRITE;
            out->flags |= FWPS_CLASSIFY_OUT_FLAG_ABSORB;
            return;
        }
        block(out); /* cannot pend: fail closed */
        return;
    }
    if (d.verdict == SQFW_ALLOW)
        permit(out);
    else
        block(out);
    KeSetEvent(&g_sqfw.kick, 0, FALSE); /* deliver events */
}

static void NTAPI classify_connect_v4(const FWPS_INCOMING_VALUES0 *in, const FWPS_INCOMING_METADATA_VALUES0 *meta,
                                      void *layer, const FWPS_FILTER0 *f, UINT64 ctx, FWPS_CLASSIFY_OUT0 *out)
{
    (void)f, (void)ctx;
    authorize(in, meta, layer, out, 4, SQFW_DIR_OUTBOUND);
}
static void NTAPI classify_connect_v6(const FWPS_INCOMING_VALUES0 *in, const FWPS_INCOMING_METADATA_VALUES0 *meta,
                                      void *layer, const FWPS_FILTER0 *f, UINT64 ctx, FWPS_CLASSIFY_OUT0 *out)
{
    (void)f, (void)ctx;
    authorize(in, meta, layer, out, 6, SQFW_DIR_OUTBOUND);
}
static void NTAPI classify_accept_v4(const FWPS_INCOMING_VALUES0 *in, const FWPS_INCOMING_METADATA_VALUES0 *meta,
                                     void *layer, const FWPS_FILTER0 *f, UINT64 ctx, FWPS_CLASSIFY_OUT0 *out)
{
    (void)f, (void)ctx;
    authorize(in, meta, layer, out, 4, SQFW_DIR_INBOUND);
}
static void NTAPI classify_accept_v6(const FWPS_INCOMING_VALUES0 *in, const FWPS_INCOMING_METADATA_VALUES0 *meta,
                                     void *layer, const FWPS_FILTER0 *f, UINT64 ctx, FWPS_CLASSIFY_OUT0 *out)
{
    (void)f, (void)ctx;
    authorize(in, meta, layer, out, 6, SQFW_DIR_INBOUND);
}

/* ---- ALE flow established: attach the flow context ---- */

static void flow_established(const FWPS_INCOMING_VALUES0 *in, const FWPS_INCOMING_METADATA_VALUES0 *meta,
                             FWPS_CLASSIFY_OUT0 *out, UINT16 family)
{
    if (!(out->rights & FWPS_RIGHT_ACTION_WRITE))
        return;
    permit(out);
    if (!meta || !(meta->currentMetadataValues & FWPS_METADATA_FIELD_FLOW_HANDLE))
        return;
    sqfw_field_map m;
    if (!in->incomingValue || !sqfw_fields_for_layer(in->layerId, &m) || m.direction == SQFW_FIELD_NONE ||
        in->valueCount < m.count)
        return;
    const FWP_VALUE0 *dv = &in->incomingValue[m.direction].value;
    UINT8 dir = dv->type == FWP_UINT32 && dv->uint32 == FWP_DIRECTION_INBOUND ? SQFW_DIR_INBOUND : SQFW_DIR_OUTBOUND;
    sqfw_req_buf b;
    if (!sqfw_build_request(in, meta, family, dir, &b))
        return;
    if (b.req.flags & SQFW_RF_LOOPBACK)
        return; /* loopback is not shaped */
    sqfw_flow_ctx *ctx = ExAllocatePoolWithTag(NonPagedPoolNx, sizeof *ctx, SQFW_TAG);
    if (!ctx) {
        block(out); /* cannot account for the flow: abort it rather than run it unshaped */
        return;
    }
    sq_zero(ctx, sizeof *ctx);
    ctx->flow_id = meta->flowHandle;
    ctx->family = family;
    ctx->refs = 1; /* ours until both associations are in place */

    KIRQL irql;
    KeAcquireSpinLock(&g_sqfw.lock, &irql);
    int rc = sqfw_flow_established(g_sqfw.engine, ctx->flow_id, &b.req, sqfw_now_ns());
    if (rc == SQFW_OK)
        InsertTailList(&g_sqfw.flows, &ctx->link);
    KeReleaseSpinLock(&g_sqfw.lock, irql);
    if (rc != SQFW_OK) {
        ExFreePoolWithTag(ctx, SQFW_TAG);
        if (rc == SQFW_E_FULL)
            block(out); /* flow pool exhausted: bounded memory wins */
        return;
    }
    UINT16 lout = family == 4 ? FWPS_LAYER_OUTBOUND_TRANSPORT_V4 : FWPS_LAYER_OUTBOUND_TRANSPORT_V6;
    UINT16 lin = family == 4 ? FWPS_LAYER_INBOUND_TRANSPORT_V4 : FWPS_LAYER_INBOUND_TRANSPORT_V6;
    UINT32 cout = g_sqfw.callout_ids[family == 4 ? C_OUT_V4 : C_OUT_V6];
    UINT32 cin = g_sqfw.callout_ids[family == 4 ? C_IN_V4 : C_IN_V6];
    /* `associated` is read by unload under the lock: written under it too */
    UINT8 got = 0;
    InterlockedIncrement(&ctx->refs);
    if (NT_SUCCESS(FwpsFlowAssociateContext0(ctx->flow_id, lout, cout, (UINT64)(ULONG_PTR)ctx)))
        got |= 1;
    else
        InterlockedDecrement(&ctx->refs);
    InterlockedIncrement(&ctx->refs);
    if (NT_SUCCESS(FwpsFlowAssociateContext0(ctx->flow_id, lin, cin, (UINT64)(ULONG_PTR)ctx)))
        got |= 2;
    else
        InterlockedDecrement(&ctx->refs);
    KeAcquireSpinLock(&g_sqfw.lock, &irql);
    ctx->associated |= got;
    KeReleaseSpinLock(&g_sqfw.lock, irql);
    if (got != 3)
        block(out); /* association failed: abort the flow, flow-delete frees what was attached */
    sqfw_flow_ctx_release(ctx);
}

static void NTAPI classify_flow_v4(const FWPS_INCOMING_VALUES0 *in, const FWPS_INCOMING_METADATA_VALUES0 *meta,
                                   void *layer, const FWPS_FILTER0 *f, UINT64 ctx, FWPS_CLASSIFY_OUT0 *out)
{
    (void)layer, (void)f, (void)ctx;
    flow_established(in, meta, out, 4);
}
static void NTAPI classify_flow_v6(const FWPS_INCOMING_VALUES0 *in, const FWPS_INCOMING_METADATA_VALUES0 *meta,
                                   void *layer, const FWPS_FILTER0 *f, UINT64 ctx, FWPS_CLASSIFY_OUT0 *out)
{
    (void)layer, (void)f, (void)ctx;
    flow_established(in, meta, out, 6);
}

/* ---- transport layers: shaping ---- */

static UINT32 nbl_bytes(const NET_BUFFER_LIST *nbl)
{
    UINT64 total = 0;
    for (const NET_BUFFER *nb = nbl ? nbl->FirstNetBuffer : NULL; nb; nb = nb->Next)
        total += nb->DataLength;
    return total > 0xFFFFFFFFull ? 0xFFFFFFFFu : (UINT32)total;
}

/* Reads what re-injecting a deferred packet needs at OUTBOUND_TRANSPORT_V4/V6
 * (the remote address, in network order) or INBOUND_TRANSPORT_V4/V6 (the
 * arrival interface and sub-interface indices), using the indices of the layer
 * the values came from. FALSE if the layer is not a transport layer, the
 * values are too few or a value has an unexpected type. */
static BOOLEAN transport_inject_fields(const FWPS_INCOMING_VALUES0 *in, UINT16 family, UINT8 outbound,
                                       UINT8 remote_addr[16], UINT32 *if_index, UINT32 *sub_if_index)
{
    sqfw_field_map m;
    sq_zero(remote_addr, 16);
    if (!in || !in->incomingValue || !sqfw_fields_for_layer(in->layerId, &m) ||
        m.interface_index == SQFW_FIELD_NONE || in->valueCount < m.count)
        return FALSE;
    const FWPS_INCOMING_VALUE0 *v = in->incomingValue;
    if (outbound) {
        const FWP_VALUE0 *ra = &v[m.remote_address].value;
        if (family == 4 && ra->type == FWP_UINT32) {
            /* WFP gives IPv4 addresses in host order; injection wants network order */
            remote_addr[0] = (UINT8)(ra->uint32 >> 24);
            remote_addr[1] = (UINT8)(ra->uint32 >> 16);
            remote_addr[2] = (UINT8)(ra->uint32 >> 8);
            remote_addr[3] = (UINT8)ra->uint32;
            return TRUE;
        }
        if (family == 6 && ra->type == FWP_BYTE_ARRAY16_TYPE && ra->byteArray16) {
            sq_copy(remote_addr, ra->byteArray16->byteArray16, 16);
            return TRUE;
        }
        return FALSE;
    }
    const FWP_VALUE0 *ifi = &v[m.interface_index].value, *sub = &v[m.sub_interface_index].value;
    if (ifi->type != FWP_UINT32 || sub->type != FWP_UINT32)
        return FALSE;
    *if_index = ifi->uint32;
    *sub_if_index = sub->uint32;
    return TRUE;
}

/* A packet the core deferred but that is dropped here (no queue room, no
 * memory, nothing to re-inject it with): the core counted it as deferred. */
static void drop_deferred(FWPS_CLASSIFY_OUT0 *out)
{
    KIRQL irql;
    KeAcquireSpinLock(&g_sqfw.lock, &irql);
    sqfw_packet_unqueued(g_sqfw.engine);
    KeReleaseSpinLock(&g_sqfw.lock, irql);
    block(out);
}

static void shape(const FWPS_INCOMING_VALUES0 *in, const FWPS_INCOMING_METADATA_VALUES0 *meta, void *layer,
                  UINT64 flow_ctx, FWPS_CLASSIFY_OUT0 *out, UINT16 family, UINT8 outbound)
{
    if (!(out->rights & FWPS_RIGHT_ACTION_WRITE))
        return;
    NET_BUFFER_LIST *nbl = (NET_BUFFER_LIST *)layer;
    HANDLE inj = family == 4 ? g_sqfw.inject_v4 : g_sqfw.inject_v6;
    FWPS_PACKET_INJECTION_STATE st = nbl ? FwpsQueryPacketInjectionState0(inj, nbl, NULL) : FWPS_PACKET_NOT_INJECTED;
    if (st == FWPS_PACKET_INJECTED_BY_SELF || st == FWPS_PACKET_PREVIOUSLY_INJECTED_BY_SELF || !nbl || !flow_ctx) {
        permit(out); /* our own re-injection already paid its tokens */
        return;
    }
    if (!outbound) {
        /* A packet the ALE recv-accept layer will also see (a connection's
         * first, or a re-authorisation) is decided there, not shaped here.
         * An IPsec-protected one still carries its AH/ESP header, which
         * receive injection cannot take back without rebuilding the IP
         * header: it is not deferred either. Both, as in the inspect sample. */
        sqfw_field_map fm;
        UINT32 cflags = 0;
        if (in && in->incomingValue && sqfw_fields_for_layer(in->layerId, &fm) && in->valueCount >= fm.count &&
            in->incomingValue[fm.flags].value.type == FWP_UINT32)
            cflags = in->incomingValue[fm.flags].value.uint32;
        if ((meta && (meta->currentMetadataValues & FWPS_METADATA_FIELD_ALE_CLASSIFY_REQUIRED)) ||
            (cflags & FWP_CONDITION_FLAG_IS_IPSEC_SECURED)) {
            permit(out);
            return;
        }
    }
    sqfw_flow_ctx *ctx = (sqfw_flow_ctx *)(ULONG_PTR)flow_ctx;
    UINT32 bytes = nbl_bytes(nbl);
    sqfw_decision d;
    KIRQL irql;
    KeAcquireSpinLock(&g_sqfw.lock, &irql);
    /* FIFO per class: with packets of its class waiting, a new one queues
     * behind them even when a token has come back (the queue's head is
     * owed it), or a steady flow would overtake and starve the queue */
    UINT32 identity_id = 0, class_id = 0;
    if (sqfw_flow_lookup(g_sqfw.engine, ctx->flow_id, &identity_id, &class_id) == SQFW_OK &&
        g_sqfw.queued[class_id % SQFW_QUEUE_CLASSES] > 0)
        sqfw_packet_behind(g_sqfw.engine, ctx->flow_id, bytes, sqfw_now_ns(), &d);
    else
        sqfw_packet(g_sqfw.engine, ctx->flow_id, bytes, sqfw_now_ns(), &d);
    KeReleaseSpinLock(&g_sqfw.lock, irql);
    if (d.verdict == SQFW_ALLOW) {
        permit(out);
        return;
    }
    if (d.verdict != SQFW_DEFER) {
        block(out); /* level drop */
        return;
    }
    if (nbl->Next) {
        drop_deferred(out); /* a chain we do not split */
        return;
    }
    /* what re-injection needs, from this transport layer's own field indices
     * (outbound: remote address 3; inbound: interface 7, sub-interface 8) */
    UINT8 remote_addr[16];
    UINT32 if_index = 0, sub_if_index = 0;
    if (!transport_inject_fields(in, family, outbound, remote_addr, &if_index, &sub_if_index)) {
        drop_deferred(out); /* cannot re-inject it correctly: drop rather than send it to 0.0.0.0 / :: */
        return;
    }
    sqfw_queued *q = sqfw_queue_record_take();
    if (!q) {
        drop_deferred(out); /* SQFW_MAX_QUEUED_TOTAL deferred over every class */
        return;
    }
    if (!NT_SUCCESS(clone_packet(nbl, meta, outbound ? 0 : 1, &q->clone))) {
        sqfw_queue_record_give(q);
        drop_deferred(out);
        return;
    }
    q->flow = ctx;
    q->bytes = bytes;
    q->family = family;
    q->outbound = outbound;
    /* only what the engine says it filled in */
    UINT32 have = meta ? meta->currentMetadataValues : 0;
    q->endpoint = (have & FWPS_METADATA_FIELD_TRANSPORT_ENDPOINT_HANDLE) ? meta->transportEndpointHandle : 0;
    q->compartment = (have & FWPS_METADATA_FIELD_COMPARTMENT_ID) ? meta->compartmentId : 0;
    q->if_index = if_index;
    q->sub_if_index = sub_if_index;
    q->scope_id = (have & FWPS_METADATA_FIELD_REMOTE_SCOPE_ID) ? meta->remoteScopeId : 0;
    sq_copy(q->remote_addr, remote_addr, sizeof q->remote_addr);
    if (!sqfw_shaper_enqueue(q, d.class_id)) {
        FwpsFreeCloneNetBufferList0(q->clone, 0);
        sqfw_queue_record_give(q);
        drop_deferred(out); /* class queue full: tail drop */
        return;
    }
    /* the original is absorbed; the clone goes out when tokens allow */
    out->actionType = FWP_ACTION_BLOCK;
    out->rights &= ~FWPS_RIGHT_ACTION_WRITE;
    out->flags |= FWPS_CLASSIFY_OUT_FLAG_ABSORB;
}

#define SHAPE_FN(name, fam, outbound)                                                                                  \
    static void NTAPI name(const FWPS_INCOMING_VALUES0 *in, const FWPS_INCOMING_METADATA_VALUES0 *meta, void *layer,   \
                           const FWPS_FILTER0 *f, UINT64 ctx, FWPS_CLASSIFY_OUT0 *out)                                 \
    {                                                                                                                  \
        (void)f;                                                                                                       \
        shape(in, meta, layer, ctx, out, fam, outbound);                                                               \
    }
SHAPE_FN(classify_out_v4, 4, 1)
SHAPE_FN(classify_out_v6, 6, 1)
SHAPE_FN(classify_in_v4, 4, 0)
SHAPE_FN(classify_in_v6, 6, 0)

static NTSTATUS NTAPI notify(FWPS_CALLOUT_NOTIFY_TYPE type, const GUID *key, FWPS_FILTER0 *filter)
{
    (void)type, (void)key, (void)filter;
    return STATUS_SUCCESS;
}

/* One call per association: drop what is queued for the flow, then the
 * association's reference. */
static void NTAPI flow_delete(UINT16 layer, UINT32 callout, UINT64 flow_ctx)
{
    (void)layer, (void)callout;
    sqfw_flow_ctx *ctx = (sqfw_flow_ctx *)(ULONG_PTR)flow_ctx;
    if (!ctx)
        return;
    sqfw_shaper_drop_flow(ctx);
    sqfw_flow_ctx_release(ctx);
}

static const struct {
    FWPS_CALLOUT_CLASSIFY_FN0 fn;
    const GUID *layer;
    UINT32 flags;
} callouts[C_COUNT] = {
    [C_CONNECT_V4] = {classify_connect_v4, &layer_connect_v4, 0},
    [C_CONNECT_V6] = {classify_connect_v6, &layer_connect_v6, 0},
    [C_ACCEPT_V4] = {classify_accept_v4, &layer_accept_v4, 0},
    [C_ACCEPT_V6] = {classify_accept_v6, &layer_accept_v6, 0},
    [C_FLOW_V4] = {classify_flow_v4, &layer_flow_v4, 0},
    [C_FLOW_V6] = {classify_flow_v6, &layer_flow_v6, 0},
    [C_OUT_V4] = {classify_out_v4, &layer_out_v4, FWP_CALLOUT_FLAG_CONDITIONAL_ON_FLOW},
    [C_OUT_V6] = {classify_out_v6, &layer_out_v6, FWP_CALLOUT_FLAG_CONDITIONAL_ON_FLOW},
    [C_IN_V4] = {classify_in_v4, &layer_in_v4, FWP_CALLOUT_FLAG_CONDITIONAL_ON_FLOW},
    [C_IN_V6] = {classify_in_v6, &layer_in_v6, FWP_CALLOUT_FLAG_CONDITIONAL_ON_FLOW},
};

static void fill_filter(int i, FWPM_FILTER0 *f)
{
    sq_zero(f, sizeof *f);
    f->displayData.name = L"SieveQ filter";
    f->layerKey = *callouts[i].layer;
    f->subLayerKey = sublayer_key;
    f->weight.type = FWP_EMPTY; /* engine-assigned weight */
    f->action.type = FWP_ACTION_CALLOUT_TERMINATING;
    f->action.calloutKey = (GUID)SQ_GUID((UCHAR)(1 + i));
}

/* A new policy may revoke an application that has connections open. WFP
 * re-authorises the existing connections of an ALE layer when a filter of
 * that layer changes (the classify then carries
 * FWP_CONDITION_FLAG_IS_REAUTHORIZE), so the connect and accept filters are
 * deleted and added again in one transaction: connections the new policy
 * no longer allows are blocked and torn down. PASSIVE_LEVEL. */
NTSTATUS sqfw_callouts_reauthorize(void)
{
    static const int auth[] = {C_CONNECT_V4, C_CONNECT_V6, C_ACCEPT_V4, C_ACCEPT_V6};
    UINT64 ids[4];
    sqfw_session_lock();
    /* without BFE there is no session and no connection to re-authorise:
     * the next session's filters judge everything afresh */
    NTSTATUS st = g_sqfw.wfp_engine ? FwpmTransactionBegin0(g_sqfw.wfp_engine, 0) : STATUS_SUCCESS;
    if (!g_sqfw.wfp_engine || !NT_SUCCESS(st)) {
        sqfw_session_unlock();
        return st;
    }
    for (int k = 0; k < 4 && NT_SUCCESS(st); k++) {
        st = FwpmFilterDeleteById0(g_sqfw.wfp_engine, g_sqfw.filter_ids[auth[k]]);
        FWPM_FILTER0 f;
        fill_filter(auth[k], &f);
        if (NT_SUCCESS(st))
            st = FwpmFilterAdd0(g_sqfw.wfp_engine, &f, NULL, &ids[k]);
    }
    if (NT_SUCCESS(st))
        st = FwpmTransactionCommit0(g_sqfw.wfp_engine);
    else
        FwpmTransactionAbort0(g_sqfw.wfp_engine); /* the old filters stay, with their ids */
    if (NT_SUCCESS(st))
        for (int k = 0; k < 4; k++)
            g_sqfw.filter_ids[auth[k]] = ids[k];
    sqfw_session_unlock();
    return st;
}

NTSTATUS sqfw_callouts_add_filters(void)
{
    FWPM_SESSION0 session;
    sq_zero(&session, sizeof session);
    session.flags = FWPM_SESSION_FLAG_DYNAMIC;
    NTSTATUS st = FwpmEngineOpen0(NULL, RPC_C_AUTHN_DEFAULT, NULL, &session, &g_sqfw.wfp_engine);
    if (!NT_SUCCESS(st))
        return st;
    st = FwpmTransactionBegin0(g_sqfw.wfp_engine, 0);
    if (!NT_SUCCESS(st))
        return st;
    FWPM_SUBLAYER0 sub;
    sq_zero(&sub, sizeof sub);
    sub.subLayerKey = sublayer_key;
    sub.displayData.name = L"SieveQ firewall";
    sub.weight = 0x8000;
    st = FwpmSubLayerAdd0(g_sqfw.wfp_engine, &sub, NULL);
    for (int i = 0; i < C_COUNT && NT_SUCCESS(st); i++) {
        GUID key = (GUID)SQ_GUID((UCHAR)(1 + i));
        FWPM_CALLOUT0 mc;
        sq_zero(&mc, sizeof mc);
        mc.calloutKey = key;
        mc.displayData.name = L"SieveQ callout";
        mc.applicableLayer = *callouts[i].layer;
        st = FwpmCalloutAdd0(g_sqfw.wfp_engine, &mc, NULL, NULL);
        if (!NT_SUCCESS(st))
            break;
        FWPM_FILTER0 f;
        fill_filter(i, &f);
        st = FwpmFilterAdd0(g_sqfw.wfp_engine, &f, NULL, &g_sqfw.filter_ids[i]);
    }
    if (NT_SUCCESS(st))
        st = FwpmTransactionCommit0(g_sqfw.wfp_engine);
    else
        FwpmTransactionAbort0(g_sqfw.wfp_engine);
    return st;
}

NTSTATUS sqfw_callouts_register(PDEVICE_OBJECT device)
{
    for (int i = 0; i < C_COUNT; i++) {
        FWPS_CALLOUT0 c;
        sq_zero(&c, sizeof c);
        c.calloutKey = (GUID)SQ_GUID((UCHAR)(1 + i));
        c.flags = callouts[i].flags;
        c.classifyFn = callouts[i].fn;
        c.notifyFn = notify;
        c.flowDeleteFn = flow_delete;
        NTSTATUS st = FwpsCalloutRegister0(device, &c, &g_sqfw.callout_ids[i]);
        if (!NT_SUCCESS(st))
            return st;
    }
    return STATUS_SUCCESS;
}

void sqfw_callouts_remove_filters(void)
{
    if (g_sqfw.wfp_engine) {
        FwpmEngineClose0(g_sqfw.wfp_engine); /* the dynamic session's filters go with it */
        g_sqfw.wfp_engine = NULL;
    }
}

/* Stops new classifies and detaches every flow context (the flow-delete
 * callbacks free them). Everything read from a context is copied under the
 * lock: once it is dropped, a concurrent flow-delete may free the context. */
void sqfw_callouts_detach(void)
{
    sqfw_session_lock();
    sqfw_callouts_remove_filters();
    sqfw_session_unlock();
    for (;;) {
        KIRQL irql;
        KeAcquireSpinLock(&g_sqfw.lock, &irql);
        sqfw_flow_ctx *ctx = NULL;
        for (LIST_ENTRY *e = g_sqfw.flows.Flink; e != &g_sqfw.flows; e = e->Flink) {
            sqfw_flow_ctx *c = CONTAINING_RECORD(e, sqfw_flow_ctx, link);
            if (c->associated) {
                ctx = c;
                break;
            }
        }
        UINT8 assoc = 0;
        UINT16 fam = 0;
        UINT64 flow_id = 0;
        if (ctx) {
            assoc = ctx->associated;
            fam = ctx->family;
            flow_id = ctx->flow_id;
            ctx->associated = 0;
        }
        KeReleaseSpinLock(&g_sqfw.lock, irql);
        if (!ctx)
            break;
        if (assoc & 1)
            FwpsFlowRemoveContext0(flow_id, fam == 4 ? FWPS_LAYER_OUTBOUND_TRANSPORT_V4 : FWPS_LAYER_OUTBOUND_TRANSPORT_V6,
                                   g_sqfw.callout_ids[fam == 4 ? C_OUT_V4 : C_OUT_V6]);
        if (assoc & 2)
            FwpsFlowRemoveContext0(flow_id, fam == 4 ? FWPS_LAYER_INBOUND_TRANSPORT_V4 : FWPS_LAYER_INBOUND_TRANSPORT_V6,
                                   g_sqfw.callout_ids[fam == 4 ? C_IN_V4 : C_IN_V6]);
    }
}

/* WFP refuses to unregister a callout (STATUS_DEVICE_BUSY) while flow
 * contexts still reference it, for instance while a flow-delete callback
 * runs; the driver image must not go away before it succeeds, so busy is
 * retried until the contexts are gone. */
void sqfw_callouts_unregister(void)
{
    for (int i = 0; i < C_COUNT; i++) {
        if (!g_sqfw.callout_ids[i])
            continue;
        for (UINT32 tries = 0;; tries++) {
            NTSTATUS st = FwpsCalloutUnregisterById0(g_sqfw.callout_ids[i]);
            if (st != STATUS_DEVICE_BUSY) {
                if (!NT_SUCCESS(st))
                    DbgPrint("sieveqfw: unregistering callout %u: 0x%08x\n", g_sqfw.callout_ids[i], (unsigned)st);
                break;
            }
            if (tries % 100 == 99)
                DbgPrint("sieveqfw: callout %u still busy\n", g_sqfw.callout_ids[i]);
            LARGE_INTEGER delay;
            delay.QuadPart = -10 * 1000 * 10; /* 10 ms, relative */
            KeDelayExecutionThread(KernelMode, FALSE, &delay);
        }
        g_sqfw.callout_ids[i] = 0;
    }
}
