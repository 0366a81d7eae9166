/* TEST ONLY: the boot-time filter checks (harness_boot.c), run by the
 * harness's --loop mode while the driver is stopped; they start and stop it. */
#ifndef SQFW_HARNESS_BOOT_H
#define SQFW_HARNESS_BOOT_H
void boot_checks(int *passed, int *failed);
#endif
