/* version: the one version string of fsvol and fsvol-bench (--version, the
 * man pages). */
#ifndef FSVOL_VERSION_H
#define FSVOL_VERSION_H

#define FSVOL_VERSION "0.1.0"

#endif
