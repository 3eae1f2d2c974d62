/*
** exec/tz.h: time zones for CONVERT_TZ, TIMEZONE_OFFSET and the zone argument of TO_TIMESTAMP,
** TO_DATE and TO_TIME (docs/FUNCTIONS.md, "Time zones").
**
** Zones come from the system's time zone database (the IANA tz database as the Debian
** package tzdata installs it: TZif files under /usr/share/zoneinfo, or under $TZDIR when set,
** as glibc reads them), read by Rowan itself (RFC 8536: the 64-bit transition table, then
** the POSIX TZ rule of the file's footer for instants past the last transition). It does not
** use setenv("TZ") with localtime_r: TZ is process-wide state, so two statements on two
** threads converting to two zones would race. A zone is read once and kept for the life of
** the process (a mutex guards the cache; a zone is never changed once made), so lookups are
** thread-safe and cost a string comparison after the first.
**
** Names: an IANA zone name as the tz database spells it, case and all ("Europe/Prague",
** "America/New_York", "UTC", "Etc/GMT+5"), or a fixed offset "+hh:mm", "-hh:mm", "+hhmm" or
** "+hh" (east of UTC positive, at most 18 hours; Joda's forID, which Phoenix calls, takes
** these too).
*/
#ifndef ROWAN_EXEC_TZ_H
#define ROWAN_EXEC_TZ_H

#include <stddef.h>
#include <stdint.h>

typedef struct exec_tz exec_tz;

/* Find zone `name` (len bytes): *out gets it (owned by the cache, valid for the life of the
** process). 0 on success; -1 with msg (cap bytes) saying why: an unknown zone ("unknown time
** zone 'Europe/Pragu'"), a file that is not a TZif file, no time zone database (the message
** says to install tzdata or set TZDIR), out of memory. */
int exec_tz_find(const char *name, size_t len, const exec_tz **out, char *msg, size_t cap);
/* The offset from UTC in seconds (east positive) in force at `utc` (seconds since the epoch,
** UTC). */
int32_t exec_tz_offset(const exec_tz *tz, int64_t utc);
/* The UTC instant (seconds) of local time `local` (seconds since the epoch of the zone's wall
** clock): in an overlap (clocks set back) the earlier instant, in a gap (clocks set forward)
** the local time moved on by the gap's length, as java.time does. */
int64_t exec_tz_local_to_utc(const exec_tz *tz, int64_t local);

#endif /* ROWAN_EXEC_TZ_H */
