// SPDX-License-Identifier: GPL-2.0-or-later
/* the shared well-known name syntax, compiled into the module */
#include "../kshared/name.c"
