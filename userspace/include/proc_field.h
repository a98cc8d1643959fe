/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One reader for the "name value" files of /proc, sysfs and debugfs:
 * /proc/<pid>/status ("NumaB_mode:\tdisabled"), fdinfo, /proc/vmstat,
 * /proc/<pid>/sched ("name    :    value"), /proc/lockdep_stats,
 * the module's debugfs counters.
 */
#ifndef PROC_FIELD_H
#define PROC_FIELD_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The value on the first line of @path whose first word is @name (leading
 * blanks skipped; the word ends at a blank or a colon, which @name may
 * include), without the blanks and the colon that follow it and without
 * the newline, in @buf. 0; -ENODATA when no line has it; -errno when @path
 * cannot be read.
 */
static inline int proc_field(const char *path, const char *name, char *buf,
			     size_t len)
{
	size_t nlen = strlen(name);
	char line[512], *p;
	int ret = -ENODATA;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		p = line + strspn(line, " \t");
		if (strncmp(p, name, nlen) || !strchr(" \t:", p[nlen]) ||
		    !p[nlen])
			continue;
		p += nlen;
		p += strspn(p, " \t");
		if (*p == ':')
			p += 1 + strspn(p + 1, " \t");
		p[strcspn(p, "\n")] = '\0';
		snprintf(buf, len, "%s", p);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

/*
 * The same value as a number (decimal, or hex with 0x) in @val; -EPROTO
 * when it is not one.
 */
static inline int proc_field_long(const char *path, const char *name,
				  long *val)
{
	char buf[64], *end;
	int ret = proc_field(path, name, buf, sizeof(buf));

	if (ret)
		return ret;
	errno = 0;
	*val = strtol(buf, &end, 0);
	return end == buf || errno ? -EPROTO : 0;
}

#endif /* PROC_FIELD_H */
