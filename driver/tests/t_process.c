/* The process-notify table and svchost service attribution. */
#include <string.h>

#include "../core/proc_table.h"
#include "fixture.h"
#include "golden_defs.h"
#include "test.h"

/* UTF-16 from ASCII, as the kernel hands command lines and paths over */
static uint32_t u16(uint16_t *out, const char *s)
{
    uint32_t n = 0;
    for (; s[n]; n++)
        out[n] = (uint8_t)s[n];
    return n;
}

static uint32_t service_of(const char *cmdline, char *name)
{
    uint16_t buf[512];
    uint8_t out[SQFW_SERVICE_NAME_MAX];
    uint32_t n = sqfw_svchost_service(buf, u16(buf, cmdline), out);
    memcpy(name, out, n);
    name[n] = 0;
    return n;
}

TEST(svchost_service_from_command_line)
{
    char name[SQFW_SERVICE_NAME_MAX + 1];
    CHECK_EQ(service_of("C:\\Windows\\system32\\svchost.exe -k NetworkService -p -s Dnscache", name), 8);
    CHECK(strcmp(name, "Dnscache") == 0);
    CHECK_EQ(service_of("svchost.exe -k LocalServiceNetworkRestricted -p /S Dhcp", name), 4);
    CHECK(strcmp(name, "Dhcp") == 0);
    CHECK_EQ(service_of("\"C:\\Windows\\system32\\svchost.exe\"\t-s\t\"TermService\"", name), 11);
    CHECK(strcmp(name, "TermService") == 0);
    /* a shared group hosts several services: no single name */
    CHECK_EQ(service_of("C:\\Windows\\system32\\svchost.exe -k netsvcs -p", name), 0);
    CHECK_EQ(service_of("svchost.exe -s Dnscache -s Dhcp", name), 0); /* ambiguous */
    CHECK_EQ(service_of("svchost.exe -k x -s", name), 0);             /* flag without a name */
    CHECK_EQ(service_of("svchost.exe -sDnscache", name), 0);          /* not the flag */
    CHECK_EQ(service_of("svchost.exe -s \"\"", name), 0);
    CHECK_EQ(service_of("svchost.exe -s ..\\Dnscache", name), 0);
    char longname[200] = "svchost.exe -s ";
    memset(longname + strlen(longname), 'a', 64);
    CHECK_EQ(service_of(longname, name), 0); /* 64 bytes: over the cap */
    longname[strlen(longname) - 1] = 0;
    CHECK_EQ(service_of(longname, name), 63);
    uint16_t wide[] = {'-', 's', ' ', 'D', 0x00e9, 'f'}; /* non-ASCII */
    uint8_t out[SQFW_SERVICE_NAME_MAX];
    CHECK_EQ(sqfw_svchost_service(wide, 6, out), 0);
    CHECK_EQ(sqfw_svchost_service(NULL, 6, out), 0);
    CHECK_EQ(sqfw_svchost_service(wide, 0, out), 0);
}

TEST(proc_table_bounds_and_eviction)
{
    /* one set of 8 ways, so every key lands in it */
    sq_proc_entry mem[SQ_PT_WAYS];
    sq_proc_table t;
    sq_proc_table_init(&t, mem, SQ_PT_WAYS);
    CHECK_EQ(t.sets, 1u);
    const uint8_t svc[] = "Dhcp";
    for (uint64_t k = 1; k <= 6; k++)
        CHECK(sq_proc_table_put(&t, k, svc, 4) != NULL);
    CHECK(sq_proc_table_put(&t, 7, NULL, 0) != NULL);
    CHECK(sq_proc_table_put(&t, 8, NULL, 0) != NULL);
    CHECK_EQ(t.live, 8u);
    CHECK_EQ(t.services, 6u);
    /* full: the oldest process without a service (7) goes, services stay */
    CHECK(sq_proc_table_put(&t, 9, NULL, 0) != NULL);
    CHECK_EQ(t.evicted, 1u);
    CHECK(sq_proc_table_find(&t, 7) == NULL);
    CHECK(sq_proc_table_find(&t, 8) != NULL);
    CHECK(sq_proc_table_find(&t, 1) != NULL);
    CHECK(sq_proc_table_put(&t, 10, svc, 4) != NULL); /* evicts 8 */
    CHECK(sq_proc_table_put(&t, 11, svc, 4) != NULL); /* evicts 9 */
    CHECK_EQ(t.services, 8u);
    /* a set full of services refuses instead of dropping one */
    CHECK(sq_proc_table_put(&t, 12, NULL, 0) == NULL);
    CHECK_EQ(t.refused, 1u);
    CHECK_EQ(t.live, 8u);
    /* exit frees the slot */
    CHECK_EQ(sq_proc_table_remove(&t, 3), 1);
    CHECK_EQ(sq_proc_table_remove(&t, 3), 0);
    CHECK_EQ(t.services, 7u);
    CHECK(sq_proc_table_put(&t, 12, NULL, 0) != NULL);
    /* re-creating a key replaces its facts, not a second entry */
    CHECK(sq_proc_table_put(&t, 12, svc, 4) != NULL);
    CHECK_EQ(t.live, 8u);
    CHECK_EQ(t.services, 8u);
    /* bad arguments */
    CHECK(sq_proc_table_put(&t, 0, NULL, 0) == NULL);
    CHECK(sq_proc_table_put(&t, 13, NULL, 4) == NULL);
    CHECK(sq_proc_table_put(&t, 13, svc, SQ_PT_SERVICE + 1) == NULL);
    sq_proc_table none;
    sq_proc_table_init(&none, NULL, 0);
    CHECK(sq_proc_table_put(&none, 1, NULL, 0) == NULL);
    CHECK(sq_proc_table_find(&none, 1) == NULL);
}

static const char SVCHOST[] = "\\device\\harddiskvolume2\\windows\\system32\\svchost.exe";

static int created(fx_engine *f, uint64_t key, const char *image, const char *cmdline)
{
    uint16_t img[256], cmd[512];
    sqfw_process_info pi = {.process_key = key, .image = img, .cmdline = cmd, .pid = (uint32_t)key,
                            .image_volume = 0x1234, .image_file_id = key * 16};
    pi.image_chars = u16(img, image);
    pi.cmdline_chars = u16(cmd, cmdline);
    return sqfw_process_created(f->e, &pi, 1);
}

static sqfw_decision authorize(fx_engine *f, const sqfw_request *r)
{
    sqfw_decision d;
    CHECK_EQ(sqfw_authorize(f->e, r, 10 * MS, &d), SQFW_OK);
    return d;
}

/* Enforce mode with the workstation policy (Dnscache allowed to port 53 by
 * its DNS setting, wuauserv by rule): svchost traffic is attributed to its
 * service from the create notify alone; no agent binding. */
TEST(process_notify_attributes_svchost_services)
{
    fx_engine f;
    sqfw_limits l = fx_limits();
    l.max_processes = 64;
    CHECK_EQ(fx_open(&f, &l), SQFW_OK);
    CHECK_EQ(fx_install(&f, golden_defs[1].policy, 1), SQFW_OK);
    uint16_t path[128];
    CHECK_EQ(sqfw_set_svchost_path(f.e, path, u16(path, "\\Device\\HarddiskVolume2\\Windows\\System32\\svchost.exe")),
             SQFW_OK);

    sqfw_request dns = fx_req(SVCHOST, SQFW_DIR_OUTBOUND, 17, "10.0.0.53", 53);
    dns.process_key = 501;
    sqfw_decision d = authorize(&f, &dns);
    CHECK_EQ(d.verdict, SQFW_BLOCK); /* before: svchost.exe alone is not whitelisted */
    CHECK_EQ(d.reason, SQFW_R_UNKNOWN_APP);

    CHECK_EQ(created(&f, 501, SVCHOST, "C:\\Windows\\system32\\svchost.exe -k NetworkService -p -s Dnscache"),
             SQFW_OK);
    d = authorize(&f, &dns);
    CHECK_EQ(d.verdict, SQFW_ALLOW);
    CHECK_EQ(d.reason, SQFW_R_DNS_CLIENT);

    sqfw_request wu = fx_req(SVCHOST, SQFW_DIR_OUTBOUND, 6, "13.107.4.50", 443);
    wu.process_key = 502;
    CHECK_EQ(created(&f, 502, SVCHOST, "svchost.exe -k netsvcs -p -s wuauserv"), SQFW_OK);
    d = authorize(&f, &wu);
    CHECK_EQ(d.verdict, SQFW_ALLOW);
    CHECK_EQ(d.rule_id, 7u);

    /* the same command line from another image is not believed */
    sqfw_request fake = fx_req("\\device\\harddiskvolume2\\users\\x\\svchost.exe", SQFW_DIR_OUTBOUND, 17,
                               "10.0.0.53", 53);
    fake.process_key = 503;
    CHECK_EQ(created(&f, 503, "\\device\\harddiskvolume2\\users\\x\\svchost.exe", "svchost.exe -s Dnscache"),
             SQFW_OK);
    CHECK_EQ(authorize(&f, &fake).verdict, SQFW_BLOCK);

    sqfw_stats st;
    sqfw_get_stats(f.e, &st);
    CHECK_EQ(st.processes_tracked, 3u);
    CHECK_EQ(st.processes_services, 2u);
    uint32_t vol = 0;
    uint64_t id = 0;
    CHECK_EQ(sqfw_process_image(f.e, 502, &vol, &id), 1);
    CHECK_EQ(vol, 0x1234u);
    CHECK_EQ(id, 502u * 16);

    /* exit: the service and the attestation go with the process */
    uint8_t sha[32] = {1};
    CHECK_EQ(sqfw_attest(f.e, 501, sha, 20 * MS), SQFW_OK);
    CHECK_EQ(sqfw_process_exited(f.e, 501), SQFW_OK);
    CHECK_EQ(sqfw_process_exited(f.e, 501), SQFW_E_NOT_FOUND);
    CHECK_EQ(authorize(&f, &dns).verdict, SQFW_BLOCK);
    CHECK_EQ(sqfw_process_image(f.e, 501, &vol, &id), 0);
    sqfw_get_stats(f.e, &st);
    CHECK_EQ(st.processes_tracked, 2u);
    CHECK_EQ(st.processes_services, 1u);

    /* malformed input */
    sqfw_process_info bad = {.process_key = 0};
    CHECK_EQ(sqfw_process_created(f.e, &bad, 1), SQFW_E_ARG);
    bad.process_key = 9;
    bad.image_chars = 4; /* no buffer */
    CHECK_EQ(sqfw_process_created(f.e, &bad, 1), SQFW_E_ARG);
    CHECK_EQ(sqfw_process_created(NULL, &bad, 1), SQFW_E_ARG);
    CHECK_EQ(sqfw_set_svchost_path(f.e, path, SQFW_SVCHOST_PATH_MAX + 1), SQFW_E_ARG);
    fx_close(&f);
}

TEST(process_notify_without_table_is_refused)
{
    fx_engine f;
    sqfw_limits l = fx_limits(); /* max_processes 0: the shared library's engine */
    CHECK_EQ(fx_open(&f, &l), SQFW_OK);
    uint16_t img[4] = {'a', 'b', 'c', 'd'};
    sqfw_process_info pi = {.process_key = 5, .image = img, .image_chars = 4};
    CHECK_EQ(sqfw_process_created(f.e, &pi, 1), SQFW_E_LIMIT);
    l.max_processes = (1u << 20) + 1;
    CHECK_EQ(sqfw_engine_size(&l), 0u);
    fx_close(&f);
}

/* The agent must hash the image the process mapped, not whatever file is at
 * the path now: the NEW_IDENTITY event names that file (volume serial, file
 * id) when the create notify recorded it. */
TEST(new_identity_event_names_the_mapped_image)
{
    const char *agent = "\\device\\harddiskvolume2\\program files\\sieveq\\agent.exe";
    fx_engine f;
    sqfw_limits l = fx_limits();
    l.max_processes = 64;
    CHECK_EQ(fx_open(&f, &l), SQFW_OK);
    CHECK_EQ(fx_install(&f, golden_defs[1].policy, 1), SQFW_OK);
    sqfw_event ev;
    while (sqfw_next_event(f.e, &ev))
        ;
    CHECK_EQ(created(&f, 601, agent, "agent.exe"), SQFW_OK); /* volume 0x1234, file id 601 * 16 */
    sqfw_request r = fx_req(agent, SQFW_DIR_OUTBOUND, 6, "10.20.7.7", 443);
    r.process_key = 601;
    sqfw_decision d = authorize(&f, &r);
    CHECK_EQ(d.verdict, SQFW_PEND);
    CHECK_EQ(sqfw_next_event(f.e, &ev), 1);
    CHECK_EQ(ev.type, SQFW_EV_NEW_IDENTITY);
    CHECK_EQ(ev.image_volume, 0x1234u);
    CHECK_EQ(ev.image_file_id, 601u * 16);
    /* a process the notify never reported: unknown, 0 */
    r.process_key = 602;
    CHECK_EQ(authorize(&f, &r).verdict, SQFW_PEND);
    CHECK_EQ(sqfw_next_event(f.e, &ev), 1);
    CHECK_EQ(ev.type, SQFW_EV_NEW_IDENTITY);
    CHECK(ev.image_volume == 0 && ev.image_file_id == 0);
    fx_close(&f);
}
