// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * main.c - module entry: the /sys/fs/kdbus mount point and kdbusfs
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/kobject.h>
#include <linux/module.h>

#include "internal.h"

static struct kobject *kdbus_dir;

static int __init kdbus_init(void)
{
	int ret;

	ret = kdbus_reply_init();
	if (ret < 0)
		return ret;
	kdbus_dir = kobject_create_and_add(KBUILD_MODNAME, fs_kobj);
	if (!kdbus_dir) {
		kdbus_reply_exit();
		return -ENOMEM;
	}
	ret = kdbus_fs_init();
	if (ret < 0) {
		kobject_put(kdbus_dir);
		kdbus_reply_exit();
		return ret;
	}
	pr_info("kdbusfs registered, mount point /sys/fs/%s\n", KBUILD_MODNAME);
	return 0;
}

static void __exit kdbus_exit(void)
{
	kdbus_fs_exit();
	kobject_put(kdbus_dir);
	kdbus_reply_exit();
}

module_init(kdbus_init);
module_exit(kdbus_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kdbus: D-Bus message bus in the kernel (busbridge)");
MODULE_ALIAS_FS("kdbusfs");
