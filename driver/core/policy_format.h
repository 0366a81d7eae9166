/* SieveQ firewall policy blob, wire layout version 1.
 *
 * The blob is the only contract between the agent (C# compiler) and the
 * driver, so every field is given as an explicit little-endian byte offset
 * instead of a C struct: no compiler padding or endianness can change it.
 * docs/policy-format.md is the prose version of this file; keep both in step.
 */
#ifndef SQFW_POLICY_FORMAT_H
#define SQFW_POLICY_FORMAT_H

#define SQFW_MAGIC 0x57465153u /* "SQFW" read as little-endian u32 */
#define SQFW_FORMAT_VERSION 1u

/* Whole-blob bound: keeps every offset sum far from u32 overflow and the
 * kernel arena allocation within reason. */
#define SQFW_MAX_BLOB (64u * 1024u * 1024u)

/* ---- header (32 bytes) ---- */
#define SQFW_HDR_SIZE 32u
#define SQFW_HDR_MAGIC 0u     /* u32 */
#define SQFW_HDR_VERSION 4u   /* u16 */
#define SQFW_HDR_HDRSIZE 6u   /* u16, == 32 */
#define SQFW_HDR_TOTAL 8u     /* u32, == blob length */
#define SQFW_HDR_NSECT 12u    /* u16 */
#define SQFW_HDR_FLAGS 14u    /* u16, == 0 */
#define SQFW_HDR_SERIAL 16u   /* u64, chosen by the agent, echoed in stats */
#define SQFW_HDR_CRC 24u      /* u32, CRC-32 (IEEE) of the blob with this field as zero */
#define SQFW_HDR_RESERVED 28u /* u32, == 0 */

/* ---- section table: nsect entries of 16 bytes right after the header ---- */
#define SQFW_SECT_ENTRY_SIZE 16u
#define SQFW_SECT_TYPE 0u     /* u16 */
#define SQFW_SECT_RESERVED 2u /* u16, == 0 */
#define SQFW_SECT_OFFSET 4u   /* u32, from blob start, multiple of 8 */
#define SQFW_SECT_LENGTH 8u   /* u32 */
#define SQFW_SECT_COUNT 12u   /* u32, records (bytes for STRINGS) */
#define SQFW_SECT_ALIGN 8u

enum sqfw_section_type {
    SQFW_SECT_SETTINGS = 1,
    SQFW_SECT_STRINGS = 2,
    SQFW_SECT_IDENTITIES = 3,
    SQFW_SECT_RULES = 4,
    SQFW_SECT_CLASSES = 5,
    SQFW_SECT_SYN = 6,
    SQFW_SECT_LEVELS = 7,
    SQFW_SECT_MAX_TYPE = 7
};

/* ---- SETTINGS: exactly one 32-byte record ---- */
#define SQFW_SET_SIZE 32u
#define SQFW_SET_DEFAULT_ACTION 0u /* u8 sqfw_default_action */
#define SQFW_SET_PEND_TIMEOUT_ACTION 1u /* u8: 0 fail-closed, 1 fail-open */
#define SQFW_SET_LOOPBACK 2u       /* u8 sqfw_loopback_mode */
#define SQFW_SET_DNS 3u            /* u8 sqfw_dns_mode */
#define SQFW_SET_UNKNOWN_IMAGE 4u  /* u8 sqfw_unknown_image */
#define SQFW_SET_RESERVED0 5u      /* 3 bytes, == 0 */
#define SQFW_SET_MAX_PENDED 8u     /* u32, 1..SQFW_MAX_PENDED */
#define SQFW_SET_PEND_TIMEOUT_MS 12u /* u32, 1..60000 */
#define SQFW_SET_INITIAL_LEVEL 16u /* u16, < level count */
#define SQFW_SET_RESERVED1 18u     /* 14 bytes, == 0 */

enum sqfw_default_action { SQFW_ACTION_ENFORCE = 0, SQFW_ACTION_AUDIT = 1 };
enum sqfw_loopback_mode { SQFW_LOOPBACK_ALLOW = 0, SQFW_LOOPBACK_ENFORCE = 1 };
enum sqfw_dns_mode { SQFW_DNS_BY_RULES = 0, SQFW_DNS_ALLOW_CLIENT_SERVICE = 1 };
enum sqfw_unknown_image { SQFW_UNKNOWN_BLOCK = 0, SQFW_UNKNOWN_PEND_FOR_HASH = 1 };

/* ---- IDENTITIES: 72-byte records ---- */
#define SQFW_ID_SIZE 72u
#define SQFW_ID_ID 0u        /* u32, != 0, unique */
#define SQFW_ID_KIND 4u      /* u8 sqfw_identity_kind */
#define SQFW_ID_FLAGS 5u     /* u8 SQFW_IDF_* */
#define SQFW_ID_CLASS 6u     /* u16 class id */
#define SQFW_ID_NAME_OFF 8u  /* u32 into STRINGS */
#define SQFW_ID_NAME_LEN 12u /* u32 */
#define SQFW_ID_USER_OFF 16u /* u32 into STRINGS */
#define SQFW_ID_USER_LEN 20u /* u32 */
#define SQFW_ID_SHA256 24u   /* 32 bytes */
#define SQFW_ID_CONN_RATE 56u  /* u32 connections/s, 0 = unlimited */
#define SQFW_ID_CONN_BURST 60u /* u32 */
#define SQFW_ID_RESERVED 64u   /* 8 bytes, == 0 */

enum sqfw_identity_kind {
    SQFW_KIND_IMAGE_PATH = 1, /* NT image path, matched case-insensitively (ASCII) */
    SQFW_KIND_IMAGE_HASH = 2, /* SHA-256 of the image, any path */
    SQFW_KIND_SERVICE = 3     /* service hosted in svchost, by service name */
};
#define SQFW_IDF_REQUIRE_HASH 0x01u /* path identity whose image must also hash to sha256 */
#define SQFW_IDF_MATCH_USER 0x02u   /* user SID string must match */
#define SQFW_IDF_ALL 0x03u

#define SQFW_MAX_NAME 1024u /* bytes of UTF-8 path or service name */
#define SQFW_MAX_USER 184u  /* longest textual SID */

/* ---- RULES: 40-byte records (allow rules; anything unmatched is denied) ---- */
#define SQFW_RULE_SIZE 40u
#define SQFW_RULE_ID 0u        /* u32, != 0, unique */
#define SQFW_RULE_IDENTITY 4u  /* u32 identity id */
#define SQFW_RULE_FAMILY 8u    /* u8: 0 any (prefix 0), 4, 6 */
#define SQFW_RULE_PREFIX 9u    /* u8 */
#define SQFW_RULE_PROTO 10u    /* u8: 0 any, else IP protocol number */
#define SQFW_RULE_DIR 11u      /* u8 SQFW_DIR_* */
#define SQFW_RULE_PORT_LO 12u  /* u16 service port: remote for out, local for in */
#define SQFW_RULE_PORT_HI 14u  /* u16 */
#define SQFW_RULE_ADDR 16u     /* 16 bytes network order; v4 in the first 4 */
#define SQFW_RULE_CLASS 32u    /* u16 class id, 0xFFFF = the identity's class */
#define SQFW_RULE_RESERVED 34u /* 6 bytes, == 0 */
#define SQFW_CLASS_INHERIT 0xFFFFu

#define SQFW_DIR_OUT 1u
#define SQFW_DIR_IN 2u
#define SQFW_DIR_BOTH 3u

/* ---- CLASSES: 40-byte records; record 0 is the default class ---- */
#define SQFW_CLASS_SIZE 40u
#define SQFW_CLASS_ID 0u         /* u16, unique, != 0xFFFF */
#define SQFW_CLASS_FLAGS 2u      /* u16, == 0 */
#define SQFW_CLASS_WEIGHT 4u     /* u32 >= 1 */
#define SQFW_CLASS_PKT_RATE 8u   /* u32 packets/s, 0 = unlimited */
#define SQFW_CLASS_PKT_BURST 12u
#define SQFW_CLASS_BYTE_RATE 16u /* u32 bytes/s, 0 = unlimited */
#define SQFW_CLASS_BYTE_BURST 20u
#define SQFW_CLASS_CONN_RATE 24u /* u32 new connections/s, 0 = unlimited */
#define SQFW_CLASS_CONN_BURST 28u
#define SQFW_CLASS_RESERVED 32u  /* 8 bytes, == 0 */

/* ---- SYN: at most one 32-byte record ---- */
#define SQFW_SYN_SIZE 32u
#define SQFW_SYN_PER_SOURCE_RATE 0u  /* u32 SYN/s per source prefix */
#define SQFW_SYN_PER_SOURCE_BURST 4u
#define SQFW_SYN_UNPROVEN_RATE 8u    /* u32 SYN/s per traffic class from sources without a completed handshake, 0 = unlimited */
#define SQFW_SYN_UNPROVEN_BURST 12u
#define SQFW_SYN_TABLE_SLOTS 16u     /* u32 power of two, 64..2^20 */
#define SQFW_SYN_V4_PREFIX 20u       /* u8 8..32 */
#define SQFW_SYN_V6_PREFIX 21u       /* u8 32..128 */
#define SQFW_SYN_RESERVED 22u        /* 10 bytes, == 0 */

/* ---- LEVELS: 24-byte records, index order == restrictiveness order ---- */
#define SQFW_LEVEL_SIZE 24u
#define SQFW_LEVEL_INDEX 0u    /* u16 == record index */
#define SQFW_LEVEL_RESERVED0 2u /* u16 == 0 */
#define SQFW_LEVEL_PKT_CAP 4u  /* u32 total packets/s over admitted classes, 0 = uncapped */
#define SQFW_LEVEL_CONN_CAP 8u /* u32 total connections/s, 0 = uncapped */
#define SQFW_LEVEL_RESERVED1 12u /* u32 == 0 */
#define SQFW_LEVEL_ADMIT 16u   /* u64 bit i = class record i admitted */

/* ---- limits the parser enforces ---- */
#define SQFW_MAX_IDENTITIES 65536u
#define SQFW_MAX_RULES (1u << 20)
#define SQFW_MAX_CLASSES 64u
#define SQFW_MAX_LEVELS 16u
#define SQFW_MAX_PENDED 4096u
#define SQFW_MAX_PEND_TIMEOUT_MS 60000u
#define SQFW_MIN_SYN_SLOTS 64u
#define SQFW_MAX_SYN_SLOTS (1u << 20)

#endif
