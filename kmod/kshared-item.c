// SPDX-License-Identifier: GPL-2.0-or-later
/* the shared item framing and payload rules, compiled into the module */
#include "../kshared/item.c"
