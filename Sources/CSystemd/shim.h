// libsystemd's daemon API (Debian libsystemd-dev): sd_notify and sd_watchdog_enabled, with
// which `logbook run` tells systemd it is ready, alive (the watchdog) and stopping.
#include <systemd/sd-daemon.h>
