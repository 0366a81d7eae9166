/* sieveq-setup.exe: the MSI's deferred, non-impersonated custom actions (they
 * run as LocalSystem in the installer service). wixl 0.101 has no
 * ServiceConfig, no LockPermissions and no driver element, so what Windows
 * Installer would otherwise do from tables is done here, one command each:
 *
 *   driver-install INF     install the WFP callout driver from its INF
 *                          (DefaultInstall: copy the .sys, add the service)
 *   driver-remove          stop and delete the driver service, remove the
 *                          driver's persistent WFP objects, delete the .sys
 *   recovery SERVICE...    restart on failure (5 s, 30 s, 60 s; reset daily)
 *   lock-folder DIR...     SYSTEM and Administrators only, inherited below
 *
 * Exit code 0 on success; anything else makes Windows Installer roll back
 * (Return="check"), so every failure is reported on stderr and by code. */
#define WIN32_LEAN_AND_MEAN
#ifndef UNICODE
#define UNICODE
#endif
#define _UNICODE
#include <windows.h>
#include <aclapi.h>
#include <sddl.h>
#include <setupapi.h>
#include <stdio.h>
#include <wchar.h>

#include "sqsetup_wfp.h"
#include "../../driver/wfp/sqfw_keys.h"

#define DRIVER_SERVICE L"sieveqfw"
#define INF_SECTION L"DefaultInstall"
/* SYSTEM and the local Administrators group, full control, inherited by
 * files and folders below; protected, so ProgramData's "Users may read and
 * create" entries stop at this folder. */
#define LOCKED_SDDL L"D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)"

static int fail(const wchar_t *what, DWORD err)
{
    fwprintf(stderr, L"sieveq-setup: %ls failed (error %lu)\n", what, (unsigned long)err);
    return err ? (int)(err & 0x7fffffff) : 1;
}

static int usage(void)
{
    fwprintf(stderr, L"usage: sieveq-setup driver-install INF | driver-remove | recovery SERVICE... | lock-folder DIR...\n");
    return 87; /* ERROR_INVALID_PARAMETER */
}

/* The default queue callback asks a user for media or what to do after a
 * copy error; a custom action has no user. The source was checked to be
 * there before the queue ran, so the media is present; a copy error ends
 * the install. */
static UINT CALLBACK no_prompt_callback(void *ctx, UINT notification, UINT_PTR p1, UINT_PTR p2)
{
    if (notification == SPFILENOTIFY_NEEDMEDIA)
        return FILEOP_DOIT;
    if (notification == SPFILENOTIFY_COPYERROR) {
        SetLastError(ERROR_FILE_NOT_FOUND);
        return FILEOP_ABORT;
    }
    return SetupDefaultQueueCallbackW(ctx, notification, p1, p2);
}

/* The service starts at every boot (system start); this starts it now, so
 * the host is protected without a restart. A driver that will not start
 * (unsigned on a host without test signing, or no filter engine) does not
 * fail the install: the agent and the other roles work without it, and the
 * reason is printed. */
static void start_driver(void)
{
    SC_HANDLE scm = OpenSCManagerW(NULL, NULL, SC_MANAGER_CONNECT);
    SC_HANDLE svc = scm ? OpenServiceW(scm, DRIVER_SERVICE, SERVICE_START) : NULL;
    DWORD e = 0;
    if (!svc || !StartServiceW(svc, 0, NULL))
        e = GetLastError();
    if (svc)
        CloseServiceHandle(svc);
    if (scm)
        CloseServiceHandle(scm);
    if (e == 0 || e == ERROR_SERVICE_ALREADY_RUNNING)
        wprintf(L"driver-install: %ls running\n", DRIVER_SERVICE);
    else
        wprintf(L"driver-install: WARNING: %ls not started (error %lu); it starts at the next boot\n", DRIVER_SERVICE,
                (unsigned long)e);
}

static int driver_install(const wchar_t *inf)
{
    if (GetFileAttributesW(inf) == INVALID_FILE_ATTRIBUTES)
        return fail(L"finding the INF", GetLastError());
    HINF h = SetupOpenInfFileW(inf, NULL, INF_STYLE_WIN4, NULL);
    if (h == INVALID_HANDLE_VALUE)
        return fail(L"opening the INF", GetLastError());

    /* the architecture-decorated section ([DefaultInstall.NTamd64]) */
    wchar_t section[128];
    if (!SetupDiGetActualSectionToInstallW(h, INF_SECTION, section, ARRAYSIZE(section), NULL, NULL)) {
        DWORD e = GetLastError();
        SetupCloseInfFile(h);
        return fail(L"resolving the INF's install section", e);
    }
    /* source files are beside the INF */
    wchar_t source[MAX_PATH];
    wcsncpy(source, inf, MAX_PATH - 1);
    source[MAX_PATH - 1] = 0;
    wchar_t *slash = wcsrchr(source, L'\\');
    if (slash)
        *slash = 0;

    wchar_t sys[MAX_PATH + 16];
    _snwprintf(sys, ARRAYSIZE(sys), L"%ls\\sieveqfw.sys", source);
    sys[ARRAYSIZE(sys) - 1] = 0;
    if (GetFileAttributesW(sys) == INVALID_FILE_ATTRIBUTES) {
        SetupCloseInfFile(h);
        return fail(L"finding sieveqfw.sys beside the INF", ERROR_FILE_NOT_FOUND);
    }

    void *queue_ctx = SetupInitDefaultQueueCallbackEx(NULL, INVALID_HANDLE_VALUE, 0, 0, NULL);
    BOOL ok = SetupInstallFromInfSectionW(NULL, h, section, SPINST_FILES | SPINST_REGISTRY, NULL, source,
                                          SP_COPY_NOSKIP | SP_COPY_NOBROWSE, no_prompt_callback, queue_ctx, NULL,
                                          NULL);
    DWORD e = ok ? 0 : GetLastError();
    SetupTermDefaultQueueCallback(queue_ctx);
    if (!ok) {
        SetupCloseInfFile(h);
        return fail(L"copying the driver from the INF", e);
    }
    wchar_t services[160];
    _snwprintf(services, ARRAYSIZE(services), L"%ls.Services", section);
    services[ARRAYSIZE(services) - 1] = 0;
    ok = SetupInstallServicesFromInfSectionW(h, services, 0);
    e = ok ? 0 : GetLastError();
    SetupCloseInfFile(h);
    if (!ok)
        return fail(L"adding the driver's service from the INF", e);
    wprintf(L"driver-install: %ls installed from %ls [%ls]\n", DRIVER_SERVICE, inf, section);
    start_driver();
    return 0;
}

/* Stop (bounded wait) and delete the driver service; a missing service is
 * not an error, so a rollback after a partial install and a second removal
 * both succeed. */
static int remove_service(void)
{
    SC_HANDLE scm = OpenSCManagerW(NULL, NULL, SC_MANAGER_ALL_ACCESS);
    if (!scm)
        return fail(L"opening the service manager", GetLastError());
    SC_HANDLE svc = OpenServiceW(scm, DRIVER_SERVICE, SERVICE_STOP | SERVICE_QUERY_STATUS | DELETE);
    if (!svc) {
        DWORD e = GetLastError();
        CloseServiceHandle(scm);
        if (e == ERROR_SERVICE_DOES_NOT_EXIST)
            return 0;
        return fail(L"opening the driver service", e);
    }
    SERVICE_STATUS st;
    if (ControlService(svc, SERVICE_CONTROL_STOP, &st)) {
        for (int i = 0; i < 100 && st.dwCurrentState != SERVICE_STOPPED; i++) {
            Sleep(100);
            if (!QueryServiceStatus(svc, &st))
                break;
        }
    }
    BOOL ok = DeleteService(svc);
    DWORD e = ok ? 0 : GetLastError();
    CloseServiceHandle(svc);
    CloseServiceHandle(scm);
    if (!ok && e != ERROR_SERVICE_MARKED_FOR_DELETE)
        return fail(L"deleting the driver service", e);
    return 0;
}

static int remove_file(void)
{
    wchar_t path[MAX_PATH];
    UINT n = GetSystemDirectoryW(path, MAX_PATH);
    if (n == 0 || n > MAX_PATH - 32)
        return fail(L"finding the system folder", GetLastError());
    wcscat(path, L"\\drivers\\sieveqfw.sys");
    if (DeleteFileW(path))
        return 0;
    DWORD e = GetLastError();
    if (e == ERROR_FILE_NOT_FOUND)
        return 0;
    /* still loaded (a stop the driver refused): gone at the next boot */
    if (MoveFileExW(path, NULL, MOVEFILE_DELAY_UNTIL_REBOOT)) {
        wprintf(L"driver-remove: %ls in use, deleted at the next restart\n", path);
        return 0;
    }
    return fail(L"deleting the driver file", GetLastError());
}

static int driver_remove(void)
{
    int rc = remove_service();
    if (rc)
        return rc;
    /* the boot-time and persistent filters outlive the driver: without this
     * an uninstalled firewall would still block at the next boot */
    DWORD e = sqsetup_remove_wfp_objects();
    if (e == RPC_S_SERVER_UNAVAILABLE || e == EPT_S_NOT_REGISTERED || e == RPC_S_CANNOT_SUPPORT) {
        /* no filter engine to ask (BFE stopped or disabled): refusing the
         * uninstall would leave the whole product behind; say what is left */
        wprintf(L"driver-remove: WARNING: the filter engine is not reachable (error %lu): any boot-time filters "
                L"of provider " SQFW_PROVIDER_KEY_TEXT L" stay in its store: start BFE and run "
                L"`sieveq-setup.exe driver-remove` (installer/msi/README.md)\n",
                (unsigned long)e);
    } else if (e) {
        return fail(L"removing the driver's WFP objects", e);
    }
    rc = remove_file();
    if (rc)
        return rc;
    wprintf(L"driver-remove: %ls removed\n", DRIVER_SERVICE);
    return 0;
}

static int recovery(int count, wchar_t **names)
{
    SC_HANDLE scm = OpenSCManagerW(NULL, NULL, SC_MANAGER_CONNECT);
    if (!scm)
        return fail(L"opening the service manager", GetLastError());
    SC_ACTION actions[3] = {
        {SC_ACTION_RESTART, 5000},
        {SC_ACTION_RESTART, 30000},
        {SC_ACTION_RESTART, 60000},
    };
    SERVICE_FAILURE_ACTIONSW fa = {0};
    fa.dwResetPeriod = 86400; /* a day without failure and the count starts again */
    fa.cActions = 3;
    fa.lpsaActions = actions;
    int rc = 0;
    for (int i = 0; i < count && rc == 0; i++) {
        SC_HANDLE svc = OpenServiceW(scm, names[i], SERVICE_CHANGE_CONFIG | SERVICE_START);
        if (!svc) {
            DWORD e = GetLastError();
            /* a feature not installed has no service: nothing to configure */
            if (e == ERROR_SERVICE_DOES_NOT_EXIST)
                continue;
            rc = fail(names[i], e);
            break;
        }
        if (!ChangeServiceConfig2W(svc, SERVICE_CONFIG_FAILURE_ACTIONS, &fa)) {
            rc = fail(L"setting the recovery actions", GetLastError());
        } else {
            /* an exit with a non-zero code (a component refusing a bad
             * deployment) counts as a failure too, not only a crash */
            SERVICE_FAILURE_ACTIONS_FLAG flag = {TRUE};
            if (!ChangeServiceConfig2W(svc, SERVICE_CONFIG_FAILURE_ACTIONS_FLAG, &flag))
                wprintf(L"recovery: %ls: restart on non-crash failures not set (error %lu)\n", names[i],
                        (unsigned long)GetLastError());
            wprintf(L"recovery: %ls restarts after 5 s, 30 s, 60 s\n", names[i]);
        }
        CloseServiceHandle(svc);
    }
    CloseServiceHandle(scm);
    return rc;
}

static int lock_folder(const wchar_t *given)
{
    /* MSI folder properties end in a backslash, which would escape the
     * closing quote on a command line: the MSI passes "[Folder]." */
    wchar_t dir[MAX_PATH];
    size_t n = wcslen(given);
    if (n == 0 || n >= MAX_PATH)
        return fail(L"reading the folder's path", ERROR_BAD_PATHNAME);
    wcscpy(dir, given);
    if (n >= 2 && dir[n - 1] == L'.' && dir[n - 2] == L'\\')
        dir[n -= 2] = 0;
    while (n > 3 && dir[n - 1] == L'\\')
        dir[--n] = 0;
    /* a deployment folder given as a drive's root would lock every user
     * out of the whole drive */
    if (n <= 3)
        return fail(L"locking a drive's root (give a folder on it)", ERROR_BAD_PATHNAME);
    DWORD attrs = GetFileAttributesW(dir);
    if (attrs == INVALID_FILE_ATTRIBUTES || !(attrs & FILE_ATTRIBUTE_DIRECTORY))
        return fail(L"finding the folder", attrs == INVALID_FILE_ATTRIBUTES ? GetLastError() : ERROR_DIRECTORY);
    PSECURITY_DESCRIPTOR sd = NULL;
    if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(LOCKED_SDDL, SDDL_REVISION_1, &sd, NULL))
        return fail(L"building the folder's security descriptor", GetLastError());
    BOOL present = FALSE, defaulted = FALSE;
    PACL dacl = NULL;
    DWORD e = 0;
    if (!GetSecurityDescriptorDacl(sd, &present, &dacl, &defaulted) || !present)
        e = GetLastError() ? GetLastError() : ERROR_INVALID_ACL;
    else
        e = SetNamedSecurityInfoW((wchar_t *)dir, SE_FILE_OBJECT,
                                  DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION, NULL, NULL, dacl,
                                  NULL);
    LocalFree(sd);
    if (e)
        return fail(L"setting the folder's access list", e);
    wprintf(L"lock-folder: %ls: SYSTEM and Administrators only\n", dir);
    return 0;
}

int wmain(int argc, wchar_t **argv)
{
    if (argc < 2)
        return usage();
    const wchar_t *cmd = argv[1];
    if (!wcscmp(cmd, L"driver-install") && argc == 3)
        return driver_install(argv[2]);
    if (!wcscmp(cmd, L"driver-remove") && argc == 2)
        return driver_remove();
    if (!wcscmp(cmd, L"recovery") && argc >= 3)
        return recovery(argc - 2, argv + 2);
    if (!wcscmp(cmd, L"lock-folder") && argc >= 3) {
        for (int i = 2; i < argc; i++) {
            int rc = lock_folder(argv[i]);
            if (rc)
                return rc;
        }
        return 0;
    }
    return usage();
}
