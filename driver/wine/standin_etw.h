/* Test-only: the stand-in's ETW recorder (standin_etw.c) and what the
 * harness asks of it. Wine 8.0's ntoskrnl exports no Etw* routine, so the
 * stand-in answers the driver's MmGetSystemRoutineAddress for them with
 * recorders, and plays the session that enables the provider. */
#ifndef SQFW_STANDIN_ETW_H
#define SQFW_STANDIN_ETW_H
#include <stdint.h>

#define SQ_STANDIN_ETW_CTL(fn) ((0x8A5Fu << 16) | (0u << 14) | ((fn) << 2) | 0u)
#define IOCTL_STANDIN_ETW_STATE SQ_STANDIN_ETW_CTL(0xF10u)  /* out: sq_etw_state */
#define IOCTL_STANDIN_ETW_ENABLE SQ_STANDIN_ETW_CTL(0xF11u) /* in: sq_etw_enable; forgets the recorded events */
#define IOCTL_STANDIN_ETW_EVENT SQ_STANDIN_ETW_CTL(0xF12u)  /* in: u32 index; out: sq_etw_record */

/* Present while a start should find no Etw* routine (the driver must run untraced). */
#define SQ_ETW_ABSENT_FLAG "C:\\sqfw-etw-absent"

#define SQ_ETW_MAX_RECORDS 32u
#define SQ_ETW_RECORD_DATA 2048u

typedef struct sq_etw_enable {
    uint32_t control; /* EVENT_CONTROL_CODE_*: 1 enable, 0 disable */
    uint8_t level;
    uint8_t pad[3];
    uint64_t any, all;
} sq_etw_enable;

typedef struct sq_etw_state {
    uint64_t registered, unregistered, traits_set, writes, enable_calls;
    uint32_t lookups_answered; /* Etw* names the driver asked MmGetSystemRoutineAddress for */
    uint32_t absent;           /* the stand-in hid them (SQ_ETW_ABSENT_FLAG) */
    uint32_t records;          /* events kept since the last enable */
    uint32_t traits_len;
    uint8_t provider_guid[16]; /* as EtwRegister got it */
    uint8_t traits[64];        /* the EventProviderSetTraits blob */
} sq_etw_state;

/* One EtwWriteTransfer call, its data descriptors concatenated. */
typedef struct sq_etw_record {
    uint16_t id;
    uint8_t version, channel, level, opcode;
    uint16_t task;
    uint64_t keyword;
    uint32_t n_desc;
    uint32_t desc_type[8], desc_size[8];
    uint32_t data_len;
    uint8_t data[SQ_ETW_RECORD_DATA];
} sq_etw_record;

#endif
