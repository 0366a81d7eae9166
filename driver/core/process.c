/* Processes announced by the kernel's create/exit notify: which service a
 * split svchost instance hosts, and which image file it mapped. DNS, DHCP
 * and remote administration run in such instances; without this their
 * connections would be attributed to svchost.exe alone and blocked in
 * enforce mode until the agent bound each service. */
#include "engine_state.h"

static int is_space(uint16_t c) { return c == ' ' || c == '\t'; }

/* Service names are registry key names: no path separators or quotes, and
 * only ASCII is accepted here (the policy's names are compared as bytes). */
static int service_char(uint16_t c) { return c > 0x20 && c < 0x7f && c != '\\' && c != '/' && c != '"'; }

/* One token of a command line: quoted ("...") or up to the next blank. */
static uint32_t next_token(const uint16_t *s, uint32_t n, uint32_t *i, uint32_t *start)
{
    while (*i < n && is_space(s[*i]))
        (*i)++;
    if (*i >= n)
        return 0;
    if (s[*i] == '"') {
        uint32_t b = ++(*i);
        while (*i < n && s[*i] != '"')
            (*i)++;
        *start = b;
        uint32_t len = *i - b;
        if (*i < n)
            (*i)++;
        return len ? len : 1u << 31; /* "" is a token, never a name */
    }
    *start = *i;
    while (*i < n && !is_space(s[*i]))
        (*i)++;
    return *i - *start;
}

uint32_t sqfw_svchost_service(const uint16_t *cmd, uint32_t chars, uint8_t *out)
{
    if (!cmd || !out || chars == 0 || chars > 32768)
        return 0;
    uint32_t i = 0, at = 0, len, found = 0, name_at = 0, name_len = 0;
    int want_name = 0;
    while ((len = next_token(cmd, chars, &i, &at)) != 0) {
        if (want_name) {
            want_name = 0;
            if (found++ || len > SQFW_SERVICE_NAME_MAX)
                return 0;
            name_at = at;
            name_len = len;
            continue;
        }
        if (len == 2 && (cmd[at] == '-' || cmd[at] == '/') && (cmd[at + 1] | 0x20) == 's')
            want_name = 1;
    }
    if (want_name || found != 1)
        return 0; /* "-s" last, or more than one: not one service */
    for (uint32_t k = 0; k < name_len; k++)
        if (!service_char(cmd[name_at + k]))
            return 0;
    for (uint32_t k = 0; k < name_len; k++)
        out[k] = (uint8_t)cmd[name_at + k];
    return name_len;
}

int sqfw_set_svchost_path(sqfw_engine *e, const uint16_t *path, uint32_t chars)
{
    if (!e || !path || chars == 0 || chars > SQFW_SVCHOST_PATH_MAX)
        return SQFW_E_ARG;
    sq_copy(e->svchost_path, path, (size_t)chars * 2u);
    e->svchost_chars = chars;
    return SQFW_OK;
}

static uint16_t fold16(uint16_t c) { return c >= 'A' && c <= 'Z' ? (uint16_t)(c + 32) : c; }

static int is_svchost(const sqfw_engine *e, const uint16_t *image, uint32_t chars)
{
    if (e->svchost_chars == 0 || chars != e->svchost_chars)
        return 0;
    for (uint32_t i = 0; i < chars; i++)
        if (fold16(image[i]) != fold16(e->svchost_path[i]))
            return 0;
    return 1;
}

int sqfw_process_created(sqfw_engine *e, const sqfw_process_info *pi, uint64_t now_ns)
{
    SQFW_UNUSED(now_ns);
    if (!e || !pi || pi->process_key == 0 || (pi->image_chars && !pi->image) || (pi->cmdline_chars && !pi->cmdline) ||
        pi->image_chars > 32768 || pi->cmdline_chars > 32768)
        return SQFW_E_ARG;
    uint8_t name[SQFW_SERVICE_NAME_MAX];
    uint32_t n = 0;
    if (pi->image_chars && is_svchost(e, pi->image, pi->image_chars) && pi->cmdline_chars)
        n = sqfw_svchost_service(pi->cmdline, pi->cmdline_chars, name);
    sq_proc_entry *pe = sq_proc_table_put(&e->procs, pi->process_key, name, n);
    if (!pe)
        return e->procs.sets ? SQFW_E_FULL : SQFW_E_LIMIT;
    pe->pid = pi->pid;
    pe->image_volume = pi->image_volume;
    pe->image_file_id = pi->image_file_id;
    return SQFW_OK;
}

int sqfw_process_exited(sqfw_engine *e, uint64_t process_key)
{
    if (!e || process_key == 0)
        return SQFW_E_ARG;
    int known = sq_proc_table_remove(&e->procs, process_key);
    sq_proc_cache_drop(&e->services, process_key);
    sq_proc_cache_drop(&e->attest, process_key);
    return known ? SQFW_OK : SQFW_E_NOT_FOUND;
}

int sqfw_process_image(const sqfw_engine *e, uint64_t process_key, uint32_t *volume, uint64_t *file_id)
{
    if (!e || !volume || !file_id)
        return 0;
    const sq_proc_entry *pe = sq_proc_table_find(&e->procs, process_key);
    if (!pe || pe->image_file_id == 0)
        return 0;
    *volume = pe->image_volume;
    *file_id = pe->image_file_id;
    return 1;
}
