/* TEST ONLY: the harness's ETW checks (harness_etw.c). */
#ifndef SQFW_HARNESS_ETW_H
#define SQFW_HARNESS_ETW_H
#include <windows.h>

typedef void (*etw_check_fn)(const char *what, int ok, int line);
/* Runs after the classify checks (the agent's process is attested by then). */
void etw_checks(HANDLE h, etw_check_fn check);
/* An unload line of the stand-in's log shows one ETW registration undone. */
int etw_balance_ok(const char *unload_line);

#endif
