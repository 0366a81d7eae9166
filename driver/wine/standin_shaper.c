/* TEST ONLY, never shipped: the fwpkclnt.sys stand-in's per-packet part.
 * Included at the end of standin.c (it reads that file's records of callouts
 * and flow contexts and makes its NET_BUFFER_LISTs), so that the harness can
 *   - call the driver's transport-layer classify functions with values at the
 *     documented FWPS_FIELD_* positions (written here as numbers, independent
 *     of the driver's own table), metadata, the flow context WFP would pass
 *     and a NET_BUFFER_LIST of the stand-in's making, many packets per
 *     request so that a burst runs at the driver's pace, not the harness's;
 *   - read back every transport injection the driver made, with what it
 *     passed. */
#include "standin_shaper_ioctl.h"

static struct {
    sq_injection rec[SQ_MAX_INJECTIONS];
    UINT32 count, lost;
    KSPIN_LOCK lock; /* the driver's worker injects while a request reads */
    int lock_ready;
} inj;

static void inj_lock(KIRQL *irql)
{
    if (!inj.lock_ready) {
        KeInitializeSpinLock(&inj.lock);
        inj.lock_ready = 1;
    }
    KeAcquireSpinLock(&inj.lock, irql);
}

static sq_injection *inj_slot(KIRQL *irql)
{
    inj_lock(irql);
    if (inj.count >= SQ_MAX_INJECTIONS) {
        inj.lost++;
        KeReleaseSpinLock(&inj.lock, *irql);
        return NULL;
    }
    sq_injection *r = &inj.rec[inj.count++];
    RtlZeroMemory(r, sizeof *r);
    return r;
}

static void note_buffer(sq_injection *r, HANDLE h, ADDRESS_FAMILY af, const NET_BUFFER_LIST *nbl)
{
    const fake_nbl *f = as_fake(nbl);
    r->family = af;
    r->handle_ok = h == (HANDLE)(ULONG_PTR)(0x7000 + af); /* FwpsInjectionHandleCreate0's for that family */
    if (f) {
        r->data_len = f->nb.DataLength;
        r->offset_back = f->created_offset - f->nb.DataOffset;
    }
}

static void shaper_note_send(HANDLE h, UINT64 endpoint, const FWPS_TRANSPORT_SEND_PARAMS0 *args, ADDRESS_FAMILY af,
                             COMPARTMENT_ID comp, const NET_BUFFER_LIST *nbl)
{
    KIRQL irql;
    sq_injection *r = inj_slot(&irql);
    if (!r)
        return;
    note_buffer(r, h, af, nbl);
    r->compartment = comp;
    r->endpoint = endpoint;
    if (args && args->remoteAddress)
        RtlCopyMemory(r->remote, args->remoteAddress, af == 23 /* AF_INET6 */ ? 16 : 4);
    r->scope_id = args ? args->remoteScopeId : 0;
    KeReleaseSpinLock(&inj.lock, irql);
}

static void shaper_note_receive(HANDLE h, ADDRESS_FAMILY af, COMPARTMENT_ID comp, IF_INDEX ifi, IF_INDEX subifi,
                                const NET_BUFFER_LIST *nbl)
{
    KIRQL irql;
    sq_injection *r = inj_slot(&irql);
    if (!r)
        return;
    note_buffer(r, h, af, nbl);
    r->receive = 1;
    r->compartment = comp;
    r->if_index = ifi;
    r->sub_if_index = subifi;
    KeReleaseSpinLock(&inj.lock, irql);
}

/* The driver's clock (sqfw_now_ns reads the interrupt time of the kernel's
 * shared page, which Wine's ntoskrnl keeps at the Windows address). */
static UINT64 driver_now_ns(void)
{
    return *(volatile UINT64 *)0xFFFFF78000000008ull * 100ull;
}

/* The context the driver associated with this flow at this callout's layer:
 * what WFP passes a callout registered FWP_CALLOUT_FLAG_CONDITIONAL_ON_FLOW. */
static UINT64 flow_context_for(UINT64 flow, UINT16 layer, UINT32 callout_id)
{
    for (UINT32 k = 0; k < MAX_CTX; k++)
        if (ctxs[k].live && ctxs[k].flow == flow && ctxs[k].layer == layer && ctxs[k].callout == callout_id)
            return ctxs[k].ctx;
    return 0;
}

/* Values at the documented positions (fwpsk.h FWPS_FIELDS_*_TRANSPORT_V4/V6):
 * outbound: protocol 0, local address 1, remote address 3, local port 4,
 * remote port 5, interface 7, sub-interface 8, flags 10; inbound: remote
 * address 2, local port 4, remote port 5, interface 7, sub-interface 8,
 * flags 9. */
static BOOLEAN transport_values(const sq_packets_in *pi, FWPS_INCOMING_VALUE0 *vals, FWP_BYTE_ARRAY16 *a6)
{
    UINT32 flags = (pi->mark & SQ_PKT_IPSEC) ? FWP_CONDITION_FLAG_IS_IPSEC_SECURED : 0;
    BOOLEAN v6 = pi->layer_id == 14 || pi->layer_id == 18;
    BOOLEAN out = pi->layer_id == 16 || pi->layer_id == 18;
    if (pi->layer_id != 12 && !v6 && !out)
        return FALSE;
    UINT32 raddr = out ? 3 : 2;
    set_u8(vals, 0, pi->protocol);
    if (v6) {
        RtlCopyMemory(a6[0].byteArray16, pi->local_addr6, 16);
        RtlCopyMemory(a6[1].byteArray16, pi->remote_addr6, 16);
        vals[1].value.type = FWP_BYTE_ARRAY16_TYPE;
        vals[1].value.byteArray16 = &a6[0];
        vals[raddr].value.type = FWP_BYTE_ARRAY16_TYPE;
        vals[raddr].value.byteArray16 = &a6[1];
    } else {
        set_u32(vals, 1, pi->local_addr);
        set_u32(vals, raddr, pi->remote_addr);
    }
    set_u16(vals, 4, pi->local_port);
    set_u16(vals, 5, pi->remote_port);
    set_u32(vals, 7, pi->if_index);
    set_u32(vals, 8, pi->sub_if_index);
    set_u32(vals, out ? 10 : 9, flags);
    return TRUE;
}

static NTSTATUS run_packets(const sq_packets_in *pi, sq_packets_out *po)
{
    if (pi->callout >= n_callouts || pi->count > SQ_MAX_PACKETS || pi->first_len == 0 ||
        pi->first_len > 0x10000u || pi->ip_header_size + pi->transport_header_size > 120u)
        return STATUS_INVALID_PARAMETER;
    static FWPS_INCOMING_VALUE0 vals[16];
    static FWP_BYTE_ARRAY16 a6[2];
    RtlZeroMemory(vals, sizeof vals);
    if (!transport_values(pi, vals, a6))
        return STATUS_INVALID_PARAMETER;
    FWPS_INCOMING_VALUES0 in;
    in.layerId = (UINT16)pi->layer_id;
    in.valueCount = 11; /* through the outbound layers' FLAGS */
    in.incomingValue = vals;
    FWPS_INCOMING_METADATA_VALUES0 meta;
    RtlZeroMemory(&meta, sizeof meta);
    meta.currentMetadataValues = FWPS_METADATA_FIELD_COMPARTMENT_ID | FWPS_METADATA_FIELD_IP_HEADER_SIZE |
                                 FWPS_METADATA_FIELD_TRANSPORT_HEADER_SIZE | FWPS_METADATA_FIELD_FLOW_HANDLE;
    if (pi->mark & SQ_PKT_ALE_REQUIRED)
        meta.currentMetadataValues |= FWPS_METADATA_FIELD_ALE_CLASSIFY_REQUIRED;
    if (pi->endpoint) {
        meta.currentMetadataValues |= FWPS_METADATA_FIELD_TRANSPORT_ENDPOINT_HANDLE;
        meta.transportEndpointHandle = pi->endpoint;
    }
    if (pi->scope_id) {
        meta.currentMetadataValues |= FWPS_METADATA_FIELD_REMOTE_SCOPE_ID;
        meta.remoteScopeId = pi->scope_id;
    }
    meta.flowHandle = pi->flow_handle;
    meta.compartmentId = pi->compartment;
    meta.ipHeaderSize = pi->ip_header_size;
    meta.transportHeaderSize = pi->transport_header_size;
    UINT64 ctx = (pi->mark & SQ_PKT_NO_CONTEXT)
                     ? 0
                     : flow_context_for(pi->flow_handle, (UINT16)pi->layer_id, callouts[pi->callout].id);
    UINT64 t0 = driver_now_ns();
    for (UINT32 i = 0; i < pi->count; i++) {
        /* where the stack leaves a packet at the transport layers: outbound at
         * its transport header, inbound past it (128 bytes of room before) */
        UINT32 start = (pi->layer_id == 12 || pi->layer_id == 14) ? 128 : 128 - pi->transport_header_size;
        fake_nbl *pkt = new_nbl(start, pi->first_len + i);
        if (!pkt)
            return STATUS_INSUFFICIENT_RESOURCES;
        pkt->injected = (pi->mark & SQ_PKT_INJECTED_BY_SELF) ? 1 : 0;
        FWPS_CLASSIFY_OUT0 out;
        RtlZeroMemory(&out, sizeof out);
        out.rights = FWPS_RIGHT_ACTION_WRITE;
        callouts[pi->callout].c.classifyFn(&in, &meta, &pkt->nbl, NULL, ctx, &out);
        UINT8 r = SQ_OUT_NONE;
        if (out.actionType == FWP_ACTION_PERMIT)
            r = SQ_OUT_PERMIT;
        else if (out.actionType == FWP_ACTION_BLOCK)
            r = (out.flags & FWPS_CLASSIFY_OUT_FLAG_ABSORB) ? SQ_OUT_ABSORB : SQ_OUT_BLOCK;
        po->result[i] = r;
        if (pkt->nb.DataOffset != start)
            po->moved++;
        ExFreePoolWithTag(pkt, 'tsQS'); /* the original is the stack's: the driver keeps only clones */
        po->count++;
    }
    po->elapsed_ns = driver_now_ns() - t0;
    return STATUS_SUCCESS;
}

static BOOLEAN shaper_request(ULONG code, void *buf, ULONG in_len, ULONG out_len, NTSTATUS *st, ULONG *info)
{
    *info = 0;
    if (code == IOCTL_STANDIN_PACKETS) {
        static sq_packets_in pi;
        static sq_packets_out po;
        *st = STATUS_INVALID_PARAMETER;
        if (in_len >= sizeof pi && out_len >= sizeof po) {
            RtlCopyMemory(&pi, buf, sizeof pi);
            RtlZeroMemory(&po, sizeof po);
            *st = run_packets(&pi, &po);
            if (NT_SUCCESS(*st)) {
                RtlCopyMemory(buf, &po, sizeof po);
                *info = sizeof po;
            }
        }
        return TRUE;
    }
    if (code == IOCTL_STANDIN_INJECTIONS) {
        *st = STATUS_BUFFER_TOO_SMALL;
        if (out_len >= sizeof(sq_injections)) {
            sq_injections *o = buf;
            KIRQL irql;
            inj_lock(&irql);
            o->count = inj.count;
            o->lost = inj.lost;
            RtlCopyMemory(o->rec, inj.rec, inj.count * sizeof inj.rec[0]);
            inj.count = inj.lost = 0;
            KeReleaseSpinLock(&inj.lock, irql);
            *info = sizeof *o;
            *st = STATUS_SUCCESS;
        }
        return TRUE;
    }
    return FALSE;
}
