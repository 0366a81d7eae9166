/* Builds a core request from what WFP gives at the ALE layers (connect,
 * recv-accept, flow established; each layer's own field indices, from
 * fwps_fields.h): process id, image path (UTF-16 converted to UTF-8 in a
 * bounded buffer), user SID (formatted as text from the token access
 * information), addresses, ports and flags. Every length is checked before
 * use. */
#include "glue.h"
#include "request.h"

/* Documented leading members of TOKEN_ACCESS_INFORMATION and
 * SID_AND_ATTRIBUTES_HASH: the user SID is SidHash->SidAttr[0].Sid. */
typedef struct sq_sid_and_attributes {
    void *Sid;
    ULONG Attributes;
} sq_sid_and_attributes;
typedef struct sq_sid_and_attributes_hash {
    ULONG SidCount;
    sq_sid_and_attributes *SidAttr;
} sq_sid_and_attributes_hash;
typedef struct sq_token_access_information {
    sq_sid_and_attributes_hash *SidHash;
} sq_token_access_information;
_Static_assert(offsetof(sq_sid_and_attributes_hash, SidAttr) == 8, "SID_AND_ATTRIBUTES_HASH.SidAttr");

static UINT32 utf16_to_utf8(const UINT8 *src, UINT32 src_bytes, UINT8 *dst, UINT32 cap)
{
    UINT32 n = 0;
    for (UINT32 i = 0; i + 1 < src_bytes; i += 2) {
        UINT32 c = (UINT32)src[i] | ((UINT32)src[i + 1] << 8);
        if (c == 0)
            break;
        if (c >= 0xD800 && c <= 0xDBFF && i + 3 < src_bytes) {
            UINT32 lo = (UINT32)src[i + 2] | ((UINT32)src[i + 3] << 8);
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
                i += 2;
            }
        }
        UINT32 need = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
        if (n + need > cap)
            return 0; /* too long: report no path rather than a truncated, matchable one */
        if (need == 1) {
            dst[n++] = (UINT8)c;
        } else if (need == 2) {
            dst[n++] = (UINT8)(0xC0 | (c >> 6));
            dst[n++] = (UINT8)(0x80 | (c & 0x3F));
        } else if (need == 3) {
            dst[n++] = (UINT8)(0xE0 | (c >> 12));
            dst[n++] = (UINT8)(0x80 | ((c >> 6) & 0x3F));
            dst[n++] = (UINT8)(0x80 | (c & 0x3F));
        } else {
            dst[n++] = (UINT8)(0xF0 | (c >> 18));
            dst[n++] = (UINT8)(0x80 | ((c >> 12) & 0x3F));
            dst[n++] = (UINT8)(0x80 | ((c >> 6) & 0x3F));
            dst[n++] = (UINT8)(0x80 | (c & 0x3F));
        }
    }
    return n;
}

static UINT32 put_dec(UINT8 *dst, UINT32 at, UINT32 cap, UINT64 v)
{
    UINT8 tmp[20];
    UINT32 n = 0;
    do {
        tmp[n++] = (UINT8)('0' + v % 10);
        v /= 10;
    } while (v && n < sizeof tmp);
    if (at + n > cap)
        return cap + 1;
    while (n)
        dst[at++] = tmp[--n];
    return at;
}

/* "S-1-5-21-..." from a binary SID, bounded by both the SID's own count and
 * the blob it came in. */
static UINT32 sid_to_text(const UINT8 *sid, UINT8 *dst, UINT32 cap)
{
    UINT8 rev = sid[0], count = sid[1];
    if (rev != 1 || count > 15)
        return 0;
    UINT64 auth = 0;
    for (int i = 2; i < 8; i++)
        auth = (auth << 8) | sid[i];
    UINT32 at = 0;
    if (cap < 2)
        return 0;
    dst[at++] = 'S';
    dst[at++] = '-';
    at = put_dec(dst, at, cap, rev);
    if (at >= cap)
        return 0;
    dst[at++] = '-';
    at = put_dec(dst, at, cap, auth);
    for (UINT32 i = 0; i < count && at < cap; i++) {
        const UINT8 *p = sid + 8 + 4 * i;
        UINT32 sub = (UINT32)p[0] | ((UINT32)p[1] << 8) | ((UINT32)p[2] << 16) | ((UINT32)p[3] << 24);
        dst[at++] = '-';
        at = put_dec(dst, at, cap, sub);
    }
    return at <= cap ? at : 0;
}

static UINT64 process_key(UINT64 pid)
{
    /* creation time separates reused pids; it can be read below DISPATCH */
    UINT64 created = 0;
    if (KeGetCurrentIrql() <= APC_LEVEL) {
        PEPROCESS proc;
        if (NT_SUCCESS(PsLookupProcessByProcessId((HANDLE)(ULONG_PTR)pid, &proc))) {
            created = (UINT64)PsGetProcessCreateTimeQuadPart(proc);
            ObDereferenceObject(proc);
        }
    }
    UINT64 key = SQFW_PROCESS_KEY(pid, created);
    return key ? key : 1;
}

static void copy_addr(const FWP_VALUE0 *v, UINT16 family, UINT8 out[16])
{
    sq_zero(out, 16);
    if (family == 4 && v->type == FWP_UINT32) {
        /* WFP gives IPv4 addresses in host order */
        out[0] = (UINT8)(v->uint32 >> 24);
        out[1] = (UINT8)(v->uint32 >> 16);
        out[2] = (UINT8)(v->uint32 >> 8);
        out[3] = (UINT8)v->uint32;
    } else if (family == 6 && v->type == FWP_BYTE_ARRAY16_TYPE && v->byteArray16) {
        sq_copy(out, v->byteArray16->byteArray16, 16);
    }
}

BOOLEAN sqfw_build_request(const FWPS_INCOMING_VALUES0 *in, const FWPS_INCOMING_METADATA_VALUES0 *meta,
                           UINT16 family, UINT8 direction, sqfw_req_buf *b)
{
    sqfw_request *r = &b->req;
    sq_zero(r, sizeof *r);
    sqfw_field_map m;
    /* the indices come from the layer the values belong to, never from another layer's enumeration */
    if (!in || !in->incomingValue || !sqfw_fields_for_layer(in->layerId, &m) || m.app_id == SQFW_FIELD_NONE ||
        in->valueCount < m.count)
        return FALSE;
    const FWPS_INCOMING_VALUE0 *v = in->incomingValue;
    r->direction = direction;
    r->family = (UINT8)family;
    r->protocol = v[m.protocol].value.uint8;
    r->local_port = v[m.local_port].value.uint16;
    r->remote_port = v[m.remote_port].value.uint16;
    copy_addr(&v[m.local_address].value, family, r->local_addr);
    copy_addr(&v[m.remote_address].value, family, r->remote_addr);
    UINT32 cflags = v[m.flags].value.type == FWP_UINT32 ? v[m.flags].value.uint32 : 0;
    if (cflags & FWP_CONDITION_FLAG_IS_LOOPBACK)
        r->flags |= SQFW_RF_LOOPBACK;
    if (cflags & FWP_CONDITION_FLAG_IS_REAUTHORIZE)
        r->flags |= SQFW_RF_REAUTH;

    if (meta && (meta->currentMetadataValues & FWPS_METADATA_FIELD_PROCESS_ID)) {
        r->pid = (UINT32)meta->processId;
        r->process_key = process_key(meta->processId);
    }
    const FWP_BYTE_BLOB *path = NULL;
    if (meta && (meta->currentMetadataValues & FWPS_METADATA_FIELD_PROCESS_PATH))
        path = meta->processPath;
    else if (v[m.app_id].value.type == FWP_BYTE_BLOB_TYPE)
        path = v[m.app_id].value.byteBlob;
    if (path && path->data && path->size) {
        r->path_len = utf16_to_utf8(path->data, path->size, b->path, sizeof b->path);
        r->path = b->path;
    }
    const FWP_VALUE0 *user = &v[m.user_id].value;
    if (user->type == FWP_TOKEN_ACCESS_INFORMATION_TYPE && user->tokenAccessInformation &&
        user->tokenAccessInformation->size >= sizeof(sq_token_access_information)) {
        const sq_token_access_information *tai =
            (const sq_token_access_information *)user->tokenAccessInformation->data;
        if (tai && tai->SidHash && tai->SidHash->SidCount && tai->SidHash->SidAttr && tai->SidHash->SidAttr[0].Sid) {
            r->user_len = sid_to_text((const UINT8 *)tai->SidHash->SidAttr[0].Sid, b->user, sizeof b->user);
            r->user = b->user;
        }
    }
    return TRUE;
}
