/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * config-parser.c - the busconfig XML parser (expat), which fills the
 * configuration model of config.c.
 *
 * DOC: structure
 *
 * One Parser per file.  Each parses into its own partial BusConfig that
 * starts with the including file's limits; when the included file has been
 * parsed completely it is merged into the includer at the point of the
 * <include> (config_merge_included()), and a file that fails leaves the
 * includer untouched.  Text content is gathered between tags and handed to
 * the open element at the next tag, as bus/config-loader-expat.c does, so
 * "a<!-- -->b" is one value.
 *
 * Strings that rules point to (file names) live in the root BusConfig's
 * files[] array, so rules can be moved between configs freely.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <dirent.h>
#include <errno.h>
#include <expat.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/config.h"
#include "policy/config-model.h"
#include "util/macro.h"
#include "util/strutil.h"

/* the autoconf config.h cannot be included by that name from here
 * (policy/config.h wins); DBUS_DATADIR may come from CPPFLAGS */
#ifndef DBUS_DATADIR
#define DBUS_DATADIR "/usr/share"
#endif

#define CONFIG_FILE_MAX (1024 * 1024)            /* _dbus_file_get_contents() */

/* ---------------------------------------------------------------------- */
/* small string helpers */

static int strdup_or_null(const char *s, char **ret) {
	if (!s) {
		*ret = NULL;
		return 0;
	}
	*ret = strdup(s);
	return *ret ? 0 : -ENOMEM;
}

static bool is_xml_white(char c) {
	/* _DBUS_ISASCII_WHITE */
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool all_whitespace(const char *s, size_t n) {
	for (size_t i = 0; i < n; i++)
		if (!is_xml_white(s[i]))
			return false;
	return true;
}

/* make_full_path(): absolute paths as they are, others against @basedir */
static char *make_full_path(const char *basedir, const char *file) {
	if (file[0] == '/')
		return strdup(file);
	return path_join(basedir, file);
}

/* _dbus_string_get_dirname() */
static char *path_dirname(const char *path) {
	const char *sep = strrchr(path, '/');
	size_t n;
	char *r;

	if (!sep)
		return strdup(".");
	while (sep > path && sep[-1] == '/')
		sep--;
	if (sep == path)
		return strdup("/");
	n = sep - path;
	r = malloc(n + 1);
	if (!r)
		return NULL;
	memcpy(r, path, n);
	r[n] = '\0';
	return r;
}

/* ---------------------------------------------------------------------- */
/* elements */

typedef enum ElementType {
	ELEMENT_NONE,
	ELEMENT_BUSCONFIG,
	ELEMENT_INCLUDE,
	ELEMENT_USER,
	ELEMENT_LISTEN,
	ELEMENT_AUTH,
	ELEMENT_POLICY,
	ELEMENT_LIMIT,
	ELEMENT_ALLOW,
	ELEMENT_DENY,
	ELEMENT_FORK,
	ELEMENT_PIDFILE,
	ELEMENT_SERVICEDIR,
	ELEMENT_SERVICEHELPER,
	ELEMENT_INCLUDEDIR,
	ELEMENT_CONFIGTYPE,
	ELEMENT_SELINUX,
	ELEMENT_ASSOCIATE,
	ELEMENT_SYSLOG,
	ELEMENT_KEEP_UMASK,
	ELEMENT_STANDARD_SESSION_SERVICEDIRS,
	ELEMENT_STANDARD_SYSTEM_SERVICEDIRS,
	ELEMENT_ALLOW_ANONYMOUS,
	ELEMENT_APPARMOR,
	ELEMENT_KDBUS,
	_ELEMENT_MAX,
} ElementType;

static const char *const element_names[_ELEMENT_MAX] = {
	[ELEMENT_NONE] = NULL,
	[ELEMENT_BUSCONFIG] = "busconfig",
	[ELEMENT_INCLUDE] = "include",
	[ELEMENT_USER] = "user",
	[ELEMENT_LISTEN] = "listen",
	[ELEMENT_AUTH] = "auth",
	[ELEMENT_POLICY] = "policy",
	[ELEMENT_LIMIT] = "limit",
	[ELEMENT_ALLOW] = "allow",
	[ELEMENT_DENY] = "deny",
	[ELEMENT_FORK] = "fork",
	[ELEMENT_PIDFILE] = "pidfile",
	[ELEMENT_SERVICEDIR] = "servicedir",
	[ELEMENT_SERVICEHELPER] = "servicehelper",
	[ELEMENT_INCLUDEDIR] = "includedir",
	[ELEMENT_CONFIGTYPE] = "type",
	[ELEMENT_SELINUX] = "selinux",
	[ELEMENT_ASSOCIATE] = "associate",
	[ELEMENT_SYSLOG] = "syslog",
	[ELEMENT_KEEP_UMASK] = "keep_umask",
	[ELEMENT_STANDARD_SESSION_SERVICEDIRS] = "standard_session_servicedirs",
	[ELEMENT_STANDARD_SYSTEM_SERVICEDIRS] = "standard_system_servicedirs",
	[ELEMENT_ALLOW_ANONYMOUS] = "allow_anonymous",
	[ELEMENT_APPARMOR] = "apparmor",
	[ELEMENT_KDBUS] = "kdbus",
};

static ElementType element_from_name(const char *name) {
	for (size_t i = 1; i < _ELEMENT_MAX; i++)
		if (streq(element_names[i], name))
			return (ElementType)i;
	return ELEMENT_NONE;
}

typedef struct Element {
	ElementType type;
	bool had_content;
	/* ELEMENT_INCLUDE */
	bool ignore_missing;
	bool if_selinux_enabled;
	bool selinux_root_relative;
	/* ELEMENT_LIMIT */
	char *limit_name;
	long limit_value;
} Element;

/* ---------------------------------------------------------------------- */
/* the loader (one per bus_config_load() call) and parsers (one per file) */

typedef struct FileId {
	dev_t dev;
	ino_t ino;
	const char *path;
} FileId;

typedef struct Loader {
	BusConfigLoadOptions opts;
	BusConfig *root;           /* files[], warnings[], apparmor_mode */
	FileId *stack;             /* files being parsed, outermost first */
	size_t n_stack;
	int selinux;               /* 1 enabled, 0 not, -1 unknown yet */
	char *selinux_root;
} Loader;

typedef struct Parser {
	Loader *loader;
	BusConfig *cfg;            /* this file's part */
	const char *file;          /* interned in root->files */
	char *basedir;
	XML_Parser xml;
	bool toplevel;

	Element *stack;
	size_t n_stack;
	size_t n_stack_alloc;

	char *content;
	size_t n_content;
	size_t n_content_alloc;

	/* current <policy>: did its user/group resolve (bus-global rules
	 * inside it are an error only then, as in dbus-daemon) */
	bool policy_principal_known;

	int r;                     /* first error */
	char *error;               /* the message, in dbus-daemon's words */
} Parser;

static unsigned parser_line(Parser *p) {
	return p->xml ? (unsigned)XML_GetCurrentLineNumber(p->xml) : 0;
}

/* an error or a warning, in dbus-daemon's words: without the file and
 * line (dbus-daemon names them only in XML syntax errors) */
static char *format_located(const char *file, unsigned line, const char *fmt, va_list ap) {
	char *msg = NULL;

	(void) file;
	(void) line;
	if (vasprintf(&msg, fmt, ap) < 0)
		return NULL;
	return msg;
}

_printf_(3, 4)
static int parser_fail(Parser *p, int r, const char *fmt, ...) {
	va_list ap;

	if (p->r < 0)
		return p->r;
	p->r = r;
	if (r != -ENOMEM) {
		va_start(ap, fmt);
		p->error = format_located(p->file, parser_line(p), fmt, ap);
		va_end(ap);
	}
	if (p->xml)
		XML_StopParser(p->xml, XML_FALSE);
	return r;
}

/* take over an error that is already located (from an included file) */
static int parser_fail_with(Parser *p, int r, char *error) {
	if (p->r < 0) {
		free(error);
		return p->r;
	}
	p->r = r;
	p->error = error;
	if (p->xml)
		XML_StopParser(p->xml, XML_FALSE);
	return r;
}

static int loader_warn_str(Loader *l, char *msg) {
	if (!msg)
		return -ENOMEM;
	if (l->opts.warn) {
		/* told at once, as dbus-daemon logs them while it reads */
		l->opts.warn(msg, l->opts.userdata);
		free(msg);
		return 0;
	}
	if (strv_push(&l->root->warnings, NULL, msg) < 0) {
		free(msg);
		return -ENOMEM;
	}
	return 0;
}

_printf_(2, 3)
static int parser_warn(Parser *p, const char *fmt, ...) {
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = format_located(p->file, parser_line(p), fmt, ap);
	va_end(ap);
	return loader_warn_str(p->loader, msg);
}

_printf_(2, 3)
static char *parser_format(Parser *p, const char *fmt, ...) {
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = format_located(p->file, parser_line(p), fmt, ap);
	va_end(ap);
	return msg;
}

static const char *loader_intern_file(Loader *l, const char *path) {
	for (char **i = l->root->files; i && *i; i++)
		if (streq(*i, path))
			return *i;
	if (strv_push_dup(&l->root->files, NULL, path) < 0)
		return NULL;
	return l->root->files[strv_length(l->root->files) - 1];
}

static bool loader_selinux_enabled(Loader *l) {
	if (l->selinux < 0) {
		if (l->opts.selinux_enabled > 0)
			l->selinux = 1;
		else if (l->opts.selinux_enabled < 0)
			l->selinux = 0;
		else
			/* is_selinux_enabled(): selinuxfs is mounted */
			l->selinux = access("/sys/fs/selinux/enforce", F_OK) == 0;
	}
	return l->selinux > 0;
}

/* selinux_policy_root(): SELINUXDIR + SELINUXTYPE from /etc/selinux/config */
static const char *loader_selinux_root(Loader *l) {
	_cleanup_fclose_ FILE *f = NULL;
	char line[512], type[256] = "targeted";

	if (l->opts.selinux_policy_root)
		return l->opts.selinux_policy_root;
	if (l->selinux_root)
		return l->selinux_root;

	f = fopen("/etc/selinux/config", "re");
	while (f && fgets(line, sizeof(line), f)) {
		char *s = line;

		while (*s == ' ' || *s == '\t')
			s++;
		if (strncmp(s, "SELINUXTYPE=", 12) == 0) {
			s += 12;
			s[strcspn(s, " \t\r\n")] = '\0';
			if (*s && strlen(s) < sizeof(type))
				strcpy(type, s);
		}
	}
	if (asprintf(&l->selinux_root, "/etc/selinux/%s", type) < 0) {
		l->selinux_root = NULL;
		return NULL;
	}
	return l->selinux_root;
}

static int loader_lookup_user(Loader *l, const char *name) {
	uid_t uid;

	if (l->opts.lookup_user)
		return l->opts.lookup_user(name, &uid, l->opts.userdata);
	return bus_config_lookup_user(name, &uid);
}

static int loader_lookup_group(Loader *l, const char *name) {
	gid_t gid;

	if (l->opts.lookup_group)
		return l->opts.lookup_group(name, &gid, l->opts.userdata);
	return bus_config_lookup_group(name, &gid);
}

static int parse_buffer(Loader *l, const char *data, size_t size, const char *path,
			bool toplevel, const BusConfigLimits *limits,
			BusConfig **ret, char **ret_error);

/*
 * Read and parse one included file.  Errors found before parsing (the file
 * is missing, not regular, too big, already being parsed) are reported at
 * @p's current position; errors inside the file carry their own position.
 *
 * Return: 1 if loaded and merged, 0 if missing and @ignore_missing, or a
 * negative errno with *ret_error set.
 */
/*
 * Read @fd to its end into *@data (NULL or malloc()ed, owned by the caller,
 * which also frees it on failure) and its length into *@size.  Reading
 * stops once more than CONFIG_FILE_MAX bytes are in: the caller finds
 * *@size > CONFIG_FILE_MAX and reports the file as too large.
 *
 * Return: 0, -ENOMEM, or the -errno of a failed read() with *@read_failed
 * set.
 */
static int read_config_fd(int fd, char **data, size_t *size, bool *read_failed) {
	size_t alloc = 0;

	*size = 0;
	*read_failed = false;
	for (;;) {
		ssize_t n;

		if (*size == alloc) {
			char *t;

			if (alloc > CONFIG_FILE_MAX)
				return 0;
			alloc = alloc ? alloc * 2 : 4096;
			t = realloc(*data, alloc);
			if (!t)
				return -ENOMEM;
			*data = t;
		}
		n = read(fd, *data + *size, alloc - *size);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			*read_failed = true;
			return -errno;
		}
		if (n == 0)
			return 0;
		*size += n;
	}
}

static int parser_include_file(Parser *p, const char *path, bool ignore_missing, char **ret_error) {
	Loader *l = p->loader;
	_cleanup_(bus_config_freep) BusConfig *child = NULL;
	_cleanup_free_ char *data = NULL;
	_cleanup_close_ int fd = -1;
	size_t size = 0;
	FileId *stack;
	struct stat st;
	char *error = NULL;
	bool read_failed;
	int r;

#define FAIL(_r, ...) do {                                   \
		*ret_error = parser_format(p, __VA_ARGS__);          \
		return (_r);                                         \
	} while (0)

	*ret_error = NULL;

	if (l->opts.flags & BUS_CONFIG_LOAD_NO_INCLUDES) {
		if (ignore_missing)
			return 0;
		FAIL(-ENOENT, "Failed to open \"%s\": %s", path, strerror(ENOENT));
	}

	for (size_t i = 0; i < l->n_stack; i++)
		if (streq(l->stack[i].path, path))
			FAIL(-ELOOP, "Circular inclusion of file '%s'", path);

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		r = -errno;
		if (r == -ENOENT && ignore_missing)
			return 0;
		FAIL(r, "Failed to open \"%s\": %s", path, strerror(-r));
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		FAIL(r, "Failed to stat \"%s\": %s", path, strerror(-r));
	}
	if (!S_ISREG(st.st_mode))
		FAIL(-EINVAL, "\"%s\" is not a regular file", path);
	if (st.st_size > CONFIG_FILE_MAX)
		FAIL(-EFBIG, "File size %lu of \"%s\" is too large.", (unsigned long)st.st_size, path);
	for (size_t i = 0; i < l->n_stack; i++)
		if (l->stack[i].dev == st.st_dev && l->stack[i].ino == st.st_ino)
			FAIL(-ELOOP, "Circular inclusion of file '%s'", path);

	r = read_config_fd(fd, &data, &size, &read_failed);
	if (r < 0 && read_failed)
		FAIL(r, "Failed to read \"%s\": %s", path, strerror(-r));
	if (r < 0)
		return r;
	if (size > CONFIG_FILE_MAX)
		FAIL(-EFBIG, "File size %zu of \"%s\" is too large.", size, path);
#undef FAIL

	stack = realloc(l->stack, (l->n_stack + 1) * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	l->stack = stack;
	l->stack[l->n_stack++] = (FileId) { .dev = st.st_dev, .ino = st.st_ino, .path = path };
	r = parse_buffer(l, data, size, path, false, &p->cfg->limits, &child, &error);
	l->n_stack--;
	if (r < 0) {
		*ret_error = error;
		return r;
	}

	r = config_merge_included(p->cfg, child);
	if (r < 0)
		return r;
	return 1;
}

static int parser_include(Parser *p, const char *path, bool ignore_missing) {
	char *error = NULL;
	int r;

	r = parser_include_file(p, path, ignore_missing, &error);
	if (r < 0)
		return parser_fail_with(p, r, error);
	return 0;
}

/* include_dir(): every *.conf in readdir() order, as dbus-daemon reads
 * them (the order decides which of two rules of different files comes
 * last); errors in them are warnings */
static int parser_include_dir(Parser *p, const char *dir) {
	_cleanup_strv_free_ char **files = NULL;
	size_t n_files = 0;
	DIR *d;
	int r;

	if (p->loader->opts.flags & BUS_CONFIG_LOAD_NO_INCLUDES)
		return 0;

	d = opendir(dir);
	if (!d) {
		r = -errno;
		if (r == -ENOENT)
			return 0;
		return parser_fail(p, r, "Failed to read directory \"%s\": %s", dir, strerror(-r));
	}
	for (;;) {
		struct dirent *de;
		char *full;

		errno = 0;
		de = readdir(d);
		if (!de) {
			r = -errno;
			if (r < 0) {
				closedir(d);
				return parser_fail(p, r, "Failed to read directory \"%s\": %s", dir, strerror(-r));
			}
			break;
		}
		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		full = path_join(dir, de->d_name);
		if (!full) {
			closedir(d);
			return parser_fail(p, -ENOMEM, "out of memory");
		}
		if (!ends_with(full, ".conf")) {
			free(full);
			continue;
		}
		if (strv_push(&files, &n_files, full) < 0) {
			free(full);
			closedir(d);
			return parser_fail(p, -ENOMEM, "out of memory");
		}
	}
	closedir(d);

	for (size_t i = 0; i < n_files; i++) {
		char *error = NULL;

		r = parser_include_file(p, files[i], true, &error);
		if (r == -ENOMEM) {
			free(error);
			return parser_fail(p, r, "out of memory");
		}
		if (r < 0) {
			char *warning = NULL;

			if (asprintf(&warning, "Encountered error '%s' while parsing '%s'", strempty(error), files[i]) < 0)
				warning = NULL;
			free(error);
			r = loader_warn_str(p->loader, warning);
			if (r < 0)
				return parser_fail(p, r, "out of memory");
		}
	}

	if (strv_push_dup(&p->cfg->includedirs, NULL, dir) < 0)
		return parser_fail(p, -ENOMEM, "out of memory");
	return 0;
}

/* ---------------------------------------------------------------------- */
/* standard service directories */

static int ensure_dir(const char *path) {
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* _dbus_set_up_transient_session_servicedirs() */
static int parser_add_transient_dir(Parser *p) {
	const char *xrd = getenv("XDG_RUNTIME_DIR");
	_cleanup_free_ char *dbus1 = NULL;
	char *services = NULL;
	int r;

	if (!xrd)
		return 0;
	if (asprintf(&dbus1, "%s/dbus-1", xrd) < 0) {
		dbus1 = NULL;
		return -ENOMEM;
	}
	if (asprintf(&services, "%s/dbus-1/services", xrd) < 0)
		return -ENOMEM;

	if (!(p->loader->opts.flags & BUS_CONFIG_LOAD_NO_MKDIR)) {
		const char *dirs[] = { xrd, dbus1, services };

		for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
			r = ensure_dir(dirs[i]);
			if (r < 0) {
				r = parser_warn(p, "Unable to set up transient service directory: "
						"Failed to create directory %s: %s", dirs[i], strerror(-r));
				free(services);
				return r;
			}
		}
	}

	return config_add_servicedir(p->cfg, services,
				     BUS_CONFIG_SERVICE_DIR_NO_WATCH |
				     BUS_CONFIG_SERVICE_DIR_STRICT_NAMING |
				     BUS_CONFIG_SERVICE_DIR_ORIGIN_TRANSIENT |
				     BUS_CONFIG_SERVICE_DIR_ORIGIN_SESSION);
}

/* _dbus_split_paths_and_append(): split at ':', trim, skip empty */
static int add_split_dirs(BusConfig *c, const char *list, const char *suffix, unsigned flags) {
	const char *s = list;

	for (;;) {
		const char *e = strchrnul(s, ':');
		const char *a = s, *b = e;
		_cleanup_free_ char *dir = NULL;
		char *full;
		int r;

		while (a < b && is_xml_white(*a))
			a++;
		while (b > a && is_xml_white(b[-1]))
			b--;
		if (b > a) {
			dir = strndup(a, b - a);
			if (!dir)
				return -ENOMEM;
			full = path_join(dir, suffix);
			if (!full)
				return -ENOMEM;
			r = config_add_servicedir(c, full, flags);
			if (r < 0)
				return r;
		}
		if (*e == '\0')
			break;
		s = e + 1;
	}
	return 0;
}

/* _dbus_get_standard_session_servicedirs() */
static int parser_add_session_dirs(Parser *p) {
	const char *data_home = getenv("XDG_DATA_HOME");
	const char *data_dirs = getenv("XDG_DATA_DIRS");
	_cleanup_free_ char *home = NULL, *list = NULL;
	int r;

	if (!data_home) {
		struct passwd pw, *res = NULL;
		char buf[4096];

		/* dbus-daemon takes the home directory from the user database,
		 * not from $HOME */
		if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) != 0 || !res)
			return parser_fail(p, -ESRCH, "Could not get password database information "
					   "for UID of current process");
		home = path_join(res->pw_dir, "/.local/share");
		if (!home)
			return -ENOMEM;
		data_home = home;
	}
	if (asprintf(&list, "%s:%s:%s", data_home,
		     data_dirs ? data_dirs : "/usr/local/share:/usr/share",
		     DBUS_DATADIR) < 0) {
		list = NULL;
		return -ENOMEM;
	}
	r = add_split_dirs(p->cfg, list, "/dbus-1/services", BUS_CONFIG_SERVICE_DIR_ORIGIN_SESSION);
	return r;
}

/* _dbus_get_standard_system_servicedirs() */
static int parser_add_system_dirs(Parser *p) {
	return add_split_dirs(p->cfg, "/usr/local/share:/usr/share:" DBUS_DATADIR ":/lib",
			      "/dbus-1/system-services", BUS_CONFIG_SERVICE_DIR_ORIGIN_SYSTEM);
}

/* ---------------------------------------------------------------------- */
/* attributes */

/*
 * locate_attributes(): every attribute must be one of @names; values go to
 * @values (NULL when absent).  expat already rejects repeated attributes.
 */
static int parser_locate(Parser *p, const char *element, const XML_Char **atts,
			 const char *const *names, const char **values, size_t n) {
	for (size_t i = 0; i < n; i++)
		values[i] = NULL;
	for (size_t a = 0; atts[a]; a += 2) {
		size_t i;

		for (i = 0; i < n; i++)
			if (streq(names[i], atts[a]))
				break;
		if (i == n)
			return parser_fail(p, -EINVAL, "Attribute \"%s\" is invalid on <%s> element in this context",
					   atts[a], element);
		if (values[i])
			return parser_fail(p, -EINVAL, "Attribute \"%s\" repeated twice on the same <%s> element",
					   atts[a], element);
		values[i] = atts[a + 1];
	}
	return 0;
}

static int parser_no_attributes(Parser *p, const char *element, const XML_Char **atts) {
	if (atts[0])
		return parser_fail(p, -EINVAL, "Attribute \"%s\" is invalid on <%s> element in this context",
				   atts[0], element);
	return 0;
}

static int parse_yes_no(Parser *p, const char *attr, const char *v, bool *ret) {
	if (!v)
		return 0;
	if (streq(v, "yes"))
		*ret = true;
	else if (streq(v, "no"))
		*ret = false;
	else
		return parser_fail(p, -EINVAL, "%s attribute must have value \"yes\" or \"no\"", attr);
	return 0;
}

static int parse_true_false(Parser *p, const char *attr, const char *v) {
	if (v && !streq(v, "true") && !streq(v, "false"))
		return parser_fail(p, -EINVAL, "Bad value \"%s\" for %s attribute, must be true or false", v, attr);
	return 0;
}

/* _dbus_string_parse_int(): strtol base 0, leading space, trailing junk ok */
static bool parse_long(const char *s, long *ret) {
	char *end = NULL;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (!end || end == s || errno != 0)
		return false;
	*ret = v;
	return true;
}

/* parse_int_attribute() for max_fds / min_fds */
static int parse_fds_attribute(Parser *p, const char *attr, const char *v, uint32_t def, uint32_t *ret) {
	long n;

	*ret = def;
	if (!v)
		return 0;
	if (!parse_long(v, &n) || n < 0 || n > (long)DBUS_MAXIMUM_MESSAGE_UNIX_FDS)
		return parser_fail(p, -EINVAL, "Bad value \"%s\" for %s attribute, must be an integer "
				   "in range %ld to %ld inclusive", v, attr, 0L, (long)DBUS_MAXIMUM_MESSAGE_UNIX_FDS);
	*ret = (uint32_t)n;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* <allow> and <deny>: append_rule_from_element() */

enum {
	A_SEND_INTERFACE, A_SEND_MEMBER, A_SEND_ERROR, A_SEND_DESTINATION,
	A_SEND_DESTINATION_PREFIX, A_SEND_PATH, A_SEND_TYPE, A_SEND_BROADCAST,
	A_RECEIVE_INTERFACE, A_RECEIVE_MEMBER, A_RECEIVE_ERROR, A_RECEIVE_SENDER,
	A_RECEIVE_PATH, A_RECEIVE_TYPE, A_EAVESDROP, A_MAX_FDS, A_MIN_FDS,
	A_SEND_REQUESTED_REPLY, A_RECEIVE_REQUESTED_REPLY, A_OWN, A_OWN_PREFIX,
	A_USER, A_GROUP, A_LOG, _A_MAX,
};

static const char *const rule_attributes[_A_MAX] = {
	[A_SEND_INTERFACE] = "send_interface",
	[A_SEND_MEMBER] = "send_member",
	[A_SEND_ERROR] = "send_error",
	[A_SEND_DESTINATION] = "send_destination",
	[A_SEND_DESTINATION_PREFIX] = "send_destination_prefix",
	[A_SEND_PATH] = "send_path",
	[A_SEND_TYPE] = "send_type",
	[A_SEND_BROADCAST] = "send_broadcast",
	[A_RECEIVE_INTERFACE] = "receive_interface",
	[A_RECEIVE_MEMBER] = "receive_member",
	[A_RECEIVE_ERROR] = "receive_error",
	[A_RECEIVE_SENDER] = "receive_sender",
	[A_RECEIVE_PATH] = "receive_path",
	[A_RECEIVE_TYPE] = "receive_type",
	[A_EAVESDROP] = "eavesdrop",
	[A_MAX_FDS] = "max_fds",
	[A_MIN_FDS] = "min_fds",
	[A_SEND_REQUESTED_REPLY] = "send_requested_reply",
	[A_RECEIVE_REQUESTED_REPLY] = "receive_requested_reply",
	[A_OWN] = "own",
	[A_OWN_PREFIX] = "own_prefix",
	[A_USER] = "user",
	[A_GROUP] = "group",
	[A_LOG] = "log",
};

static bool is_wildcard(const char *s) {
	return s && s[0] == '*' && s[1] == '\0';
}

static const char *unwild(const char *s) {
	return is_wildcard(s) ? NULL : s;
}

/* the attributes of an <allow> or <deny> and their combinations: which
 * kind of rule it is (append_rule_from_element()) */
static int rule_check_attributes(Parser *p, const char *element, const char *const *v,
				 bool *ret_send, bool *ret_receive) {
	bool any_send, any_receive, any_message;

	any_send = v[A_SEND_DESTINATION] || v[A_SEND_DESTINATION_PREFIX] || v[A_SEND_BROADCAST] ||
		   v[A_SEND_PATH] || v[A_SEND_TYPE] || v[A_SEND_INTERFACE] || v[A_SEND_MEMBER] ||
		   v[A_SEND_ERROR] || v[A_SEND_REQUESTED_REPLY];
	/* <allow eavesdrop="true"/> means <allow receive_sender="*" eavesdrop="true"/> */
	any_receive = v[A_RECEIVE_SENDER] || v[A_RECEIVE_PATH] || v[A_RECEIVE_TYPE] ||
		      v[A_RECEIVE_INTERFACE] || v[A_RECEIVE_MEMBER] || v[A_RECEIVE_ERROR] ||
		      v[A_RECEIVE_REQUESTED_REPLY] || (!any_send && v[A_EAVESDROP]);
	any_message = any_send || any_receive || v[A_EAVESDROP] || v[A_MAX_FDS] || v[A_MIN_FDS];

	if (!(any_send || any_receive || v[A_OWN] || v[A_OWN_PREFIX] || v[A_USER] || v[A_GROUP]))
		return parser_fail(p, -EINVAL, "Element <%s> must have one or more attributes", element);

	if ((v[A_SEND_MEMBER] && !v[A_SEND_INTERFACE] && !v[A_SEND_PATH]) ||
	    (v[A_RECEIVE_MEMBER] && !v[A_RECEIVE_INTERFACE] && !v[A_RECEIVE_PATH]))
		return parser_fail(p, -EINVAL, "On element <%s>, if you specify a member you must specify "
				   "an interface or a path. Keep in mind that not all messages have an "
				   "interface field.", element);

	if ((int)any_message + !!v[A_OWN] + !!v[A_OWN_PREFIX] + !!v[A_USER] + !!v[A_GROUP] > 1)
		return parser_fail(p, -EINVAL, "Invalid combination of attributes on element <%s>: own, "
				   "own_prefix, user, group and the message-related attributes cannot "
				   "be combined", element);

	if (any_send && any_receive)
		return parser_fail(p, -EINVAL, "Invalid combination of attributes on element <%s>: send "
				   "and receive attributes cannot be combined", element);

	if ((v[A_SEND_MEMBER] || v[A_SEND_INTERFACE]) && v[A_SEND_ERROR])
		return parser_fail(p, -EINVAL, "Invalid combination of attributes on element <%s>: "
				   "send_error cannot be combined with send_member or send_interface",
				   element);

	if (v[A_SEND_DESTINATION] && v[A_SEND_DESTINATION_PREFIX])
		return parser_fail(p, -EINVAL, "Invalid combination of attributes on element <%s>: "
				   "send_destination cannot be combined with send_destination_prefix",
				   element);

	if ((v[A_RECEIVE_MEMBER] || v[A_RECEIVE_INTERFACE]) && v[A_RECEIVE_ERROR])
		return parser_fail(p, -EINVAL, "Invalid combination of attributes on element <%s>: "
				   "receive_error cannot be combined with receive_member or "
				   "receive_interface", element);

	*ret_send = any_send;
	*ret_receive = any_receive;
	return 0;
}

/*
 * The rule_fill_*() steps of parser_append_rule() fill @rule from the
 * attribute values @v.  Return: 0; -ENOMEM when out of memory (not
 * reported yet); another error already reported with parser_fail().
 */

/* send_* or receive_* attributes */
static int rule_fill_message(Parser *p, const char *const *v, bool any_send, BusConfigRule *rule) {
	const char *type = unwild(v[any_send ? A_SEND_TYPE : A_RECEIVE_TYPE]);
	const char *rr = v[any_send ? A_SEND_REQUESTED_REPLY : A_RECEIVE_REQUESTED_REPLY];
	int r;

	rule->type = any_send ? BUS_CONFIG_RULE_SEND : BUS_CONFIG_RULE_RECEIVE;
	if (type) {
		rule->message_type = bus_config_message_type_from_string(type);
		if (rule->message_type == BUS_CONFIG_MESSAGE_ANY)
			return parser_fail(p, -EINVAL, "Bad message type \"%s\"", type);
	}
	r = parse_true_false(p, "eavesdrop", v[A_EAVESDROP]);
	if (r < 0)
		return r;
	if (any_send) {
		r = parse_true_false(p, "send_broadcast", v[A_SEND_BROADCAST]);
		if (r < 0)
			return r;
		if (unwild(v[A_SEND_DESTINATION]) && v[A_SEND_BROADCAST] &&
		    streq(v[A_SEND_BROADCAST], "true"))
			return parser_fail(p, -EINVAL, "Rule with send_broadcast=\"true\" and "
					   "send_destination=\"%s\" cannot match anything",
					   v[A_SEND_DESTINATION]);
	}
	r = parse_true_false(p, any_send ? "send_requested_reply" : "receive_requested_reply", rr);
	if (r < 0)
		return r;
	r = parse_fds_attribute(p, "max_fds", v[A_MAX_FDS], DBUS_MAXIMUM_MESSAGE_UNIX_FDS, &rule->max_fds);
	if (r < 0)
		return r;
	r = parse_fds_attribute(p, "min_fds", v[A_MIN_FDS], 0, &rule->min_fds);
	if (r < 0)
		return r;

	if (v[A_EAVESDROP])
		rule->eavesdrop = streq(v[A_EAVESDROP], "true");
	if (rr)
		rule->requested_reply = streq(rr, "true");

	if (any_send) {
		if (v[A_LOG])
			rule->log = streq(v[A_LOG], "true");
		if (v[A_SEND_BROADCAST])
			rule->broadcast = streq(v[A_SEND_BROADCAST], "true") ?
				BUS_CONFIG_TRISTATE_TRUE : BUS_CONFIG_TRISTATE_FALSE;
		if (strdup_or_null(unwild(v[A_SEND_PATH]), &rule->path) < 0 ||
		    strdup_or_null(unwild(v[A_SEND_INTERFACE]), &rule->interface) < 0 ||
		    strdup_or_null(unwild(v[A_SEND_MEMBER]), &rule->member) < 0 ||
		    strdup_or_null(unwild(v[A_SEND_ERROR]), &rule->error) < 0)
			return -ENOMEM;
		if (unwild(v[A_SEND_DESTINATION])) {
			if (strdup_or_null(v[A_SEND_DESTINATION], &rule->destination) < 0)
				return -ENOMEM;
		} else if (v[A_SEND_DESTINATION_PREFIX]) {
			/* "*" is literal here, as in dbus-daemon */
			if (strdup_or_null(v[A_SEND_DESTINATION_PREFIX], &rule->destination) < 0)
				return -ENOMEM;
			rule->destination_is_prefix = true;
		}
	} else {
		if (strdup_or_null(unwild(v[A_RECEIVE_PATH]), &rule->path) < 0 ||
		    strdup_or_null(unwild(v[A_RECEIVE_INTERFACE]), &rule->interface) < 0 ||
		    strdup_or_null(unwild(v[A_RECEIVE_MEMBER]), &rule->member) < 0 ||
		    strdup_or_null(unwild(v[A_RECEIVE_ERROR]), &rule->error) < 0 ||
		    strdup_or_null(unwild(v[A_RECEIVE_SENDER]), &rule->sender) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* own or own_prefix */
static int rule_fill_own(const char *const *v, BusConfigRule *rule) {
	rule->type = BUS_CONFIG_RULE_OWN;
	if (v[A_OWN]) {
		if (strdup_or_null(unwild(v[A_OWN]), &rule->own) < 0)
			return -ENOMEM;
	} else {
		if (strdup_or_null(v[A_OWN_PREFIX], &rule->own) < 0)
			return -ENOMEM;
		rule->own_is_prefix = true;
	}
	return 0;
}

/* user or group: who may connect */
static int rule_fill_connect(Parser *p, const char *element, const char *const *v, BusConfigRule *rule) {
	const char *who = v[A_USER] ? v[A_USER] : v[A_GROUP];
	BusConfigPolicy *pol;
	bool known = true;
	int r;

	rule->type = v[A_USER] ? BUS_CONFIG_RULE_USER : BUS_CONFIG_RULE_GROUP;
	if (!is_wildcard(who)) {
		r = v[A_USER] ? loader_lookup_user(p->loader, who) : loader_lookup_group(p->loader, who);
		if (r == -ENOMEM)
			return -ENOMEM;
		if (r < 0) {
			/* dbus-daemon drops the rule; we keep it, it will not resolve */
			known = false;
			r = parser_warn(p, "Unknown %s \"%s\" on element <%s>",
					v[A_USER] ? "username" : "group", who, element);
			if (r < 0)
				return -ENOMEM;
		}
	}
	pol = &p->cfg->policies[p->cfg->n_policies - 1];
	if (known && p->policy_principal_known &&
	    (pol->context == BUS_CONFIG_CONTEXT_USER || pol->context == BUS_CONFIG_CONTEXT_GROUP)) {
		return parser_fail(p, -EINVAL, "<%s> rule cannot be per-%s because it has bus-global "
				   "semantics", element,
				   pol->context == BUS_CONFIG_CONTEXT_USER ? "user" : "group");
	}
	if (strdup_or_null(unwild(v[A_USER]), &rule->user) < 0 ||
	    strdup_or_null(unwild(v[A_GROUP]), &rule->group) < 0)
		return -ENOMEM;
	return 0;
}

static int parser_append_rule(Parser *p, const char *element, const XML_Char **atts, bool allow) {
	const char *v[_A_MAX];
	BusConfigPolicy *pol;
	BusConfigRule rule = {}, *rules;
	bool any_send = false, any_receive = false;
	int r;

	r = parser_locate(p, element, atts, rule_attributes, v, _A_MAX);
	if (r < 0)
		return r;
	r = rule_check_attributes(p, element, v, &any_send, &any_receive);
	if (r < 0)
		return r;

	rule.allow = allow;
	rule.file = p->file;
	rule.line = parser_line(p);
	/* allow rules default to "only requested replies", deny rules to
	 * "only unrequested replies" (bus_policy_rule_new()) */
	rule.requested_reply = allow;
	rule.max_fds = DBUS_MAXIMUM_MESSAGE_UNIX_FDS;

	if (any_send || any_receive)
		r = rule_fill_message(p, v, any_send, &rule);
	else if (v[A_OWN] || v[A_OWN_PREFIX])
		r = rule_fill_own(v, &rule);
	else
		r = rule_fill_connect(p, element, v, &rule);
	if (r == -ENOMEM)
		goto oom;
	if (r < 0) {
		config_rule_done(&rule);
		return r;
	}

	pol = &p->cfg->policies[p->cfg->n_policies - 1];
	rules = realloc(pol->rules, (pol->n_rules + 1) * sizeof(*rules));
	if (!rules)
		goto oom;
	pol->rules = rules;
	pol->rules[pol->n_rules++] = rule;
	return 0;

oom:
	config_rule_done(&rule);
	return parser_fail(p, -ENOMEM, "out of memory");
}

/* ---------------------------------------------------------------------- */
/* start elements */

static int parser_push(Parser *p, ElementType type, Element **ret) {
	Element *e;

	if (p->n_stack == p->n_stack_alloc) {
		size_t n = p->n_stack_alloc ? p->n_stack_alloc * 2 : 8;

		e = realloc(p->stack, n * sizeof(*e));
		if (!e)
			return parser_fail(p, -ENOMEM, "out of memory");
		p->stack = e;
		p->n_stack_alloc = n;
	}
	e = &p->stack[p->n_stack++];
	*e = (Element) { .type = type };
	if (ret)
		*ret = e;
	return 0;
}

static Element *parser_top(Parser *p) {
	return p->n_stack ? &p->stack[p->n_stack - 1] : NULL;
}

static int start_policy(Parser *p, const XML_Char **atts) {
	static const char *const names[] = { "context", "user", "group", "at_console" };
	const char *v[4];
	BusConfigPolicy pol = {}, *pols;
	int r, n;

	r = parser_push(p, ELEMENT_POLICY, NULL);
	if (r < 0)
		return r;
	r = parser_locate(p, "policy", atts, names, v, 4);
	if (r < 0)
		return r;
	n = !!v[0] + !!v[1] + !!v[2] + !!v[3];
	if (n != 1)
		return parser_fail(p, -EINVAL, "<policy> element must have exactly one of "
				   "(context|user|group|at_console) attributes");

	pol.file = p->file;
	pol.line = parser_line(p);
	p->policy_principal_known = true;
	if (v[0]) {
		if (streq(v[0], "default"))
			pol.context = BUS_CONFIG_CONTEXT_DEFAULT;
		else if (streq(v[0], "mandatory"))
			pol.context = BUS_CONFIG_CONTEXT_MANDATORY;
		else
			return parser_fail(p, -EINVAL, "context attribute on <policy> must have the value "
					   "\"default\" or \"mandatory\", not \"%s\"", v[0]);
	} else if (v[1] || v[2]) {
		r = v[1] ? loader_lookup_user(p->loader, v[1]) : loader_lookup_group(p->loader, v[2]);
		if (r == -ENOMEM)
			return parser_fail(p, r, "out of memory");
		if (r < 0) {
			p->policy_principal_known = false;
			if (v[1])
				r = parser_warn(p, "Unknown username \"%s\" in message bus configuration file", v[1]);
			else
				r = parser_warn(p, "Unknown group \"%s\" in message bus configuration file", v[2]);
			if (r < 0)
				return parser_fail(p, r, "out of memory");
		}
		pol.context = v[1] ? BUS_CONFIG_CONTEXT_USER : BUS_CONFIG_CONTEXT_GROUP;
		if (strdup_or_null(v[1], &pol.user) < 0 || strdup_or_null(v[2], &pol.group) < 0) {
			config_policy_done(&pol);
			return parser_fail(p, -ENOMEM, "out of memory");
		}
	} else {
		bool t = streq(v[3], "true");

		if (!t && !streq(v[3], "false"))
			return parser_fail(p, -EINVAL, "Unknown value \"%s\" for at_console in message bus "
					   "configuration file", v[3]);
		pol.context = BUS_CONFIG_CONTEXT_AT_CONSOLE;
		pol.at_console = t;
	}

	pols = realloc(p->cfg->policies, (p->cfg->n_policies + 1) * sizeof(*pols));
	if (!pols) {
		config_policy_done(&pol);
		return parser_fail(p, -ENOMEM, "out of memory");
	}
	p->cfg->policies = pols;
	pols[p->cfg->n_policies++] = pol;
	return 0;
}

/* the elements of <busconfig> without attributes: <fork/>, <user>... */
static int start_plain_element(Parser *p, ElementType t, const char *name, const XML_Char **atts) {
	int r;

	r = parser_no_attributes(p, name, atts);
	if (r < 0)
		return r;
	r = parser_push(p, t, NULL);
	if (r < 0)
		return r;
	switch (t) {
	case ELEMENT_FORK:
		p->cfg->fork = true;
		break;
	case ELEMENT_SYSLOG:
		p->cfg->syslog = true;
		break;
	case ELEMENT_KEEP_UMASK:
		p->cfg->keep_umask = true;
		break;
	case ELEMENT_KDBUS:
		p->cfg->kdbus = true;
		break;
	case ELEMENT_ALLOW_ANONYMOUS:
		p->cfg->allow_anonymous = true;
		break;
	case ELEMENT_STANDARD_SESSION_SERVICEDIRS:
		r = parser_add_transient_dir(p);
		if (r >= 0)
			r = parser_add_session_dirs(p);
		if (r < 0)
			return parser_fail(p, r, "out of memory");
		break;
	case ELEMENT_STANDARD_SYSTEM_SERVICEDIRS:
		r = parser_add_system_dirs(p);
		if (r < 0)
			return parser_fail(p, r, "out of memory");
		break;
	default:
		break;
	}
	return 0;
}

/* <include ignore_missing= if_selinux_enabled= selinux_root_relative=> */
static int start_include(Parser *p, const XML_Char **atts) {
	static const char *const names[] = { "ignore_missing", "if_selinux_enabled",
					     "selinux_root_relative" };
	const char *v[3];
	Element *e;
	int r;

	r = parser_push(p, ELEMENT_INCLUDE, &e);
	if (r < 0)
		return r;
	r = parser_locate(p, "include", atts, names, v, 3);
	if (r < 0)
		return r;
	r = parse_yes_no(p, "ignore_missing", v[0], &e->ignore_missing);
	if (r < 0)
		return r;
	r = parse_yes_no(p, "if_selinux_enabled", v[1], &e->if_selinux_enabled);
	if (r < 0)
		return r;
	return parse_yes_no(p, "selinux_root_relative", v[2], &e->selinux_root_relative);
}

/* <limit name=> */
static int start_limit(Parser *p, const XML_Char **atts) {
	static const char *const names[] = { "name" };
	const char *v[1];
	Element *e;
	int r;

	r = parser_push(p, ELEMENT_LIMIT, &e);
	if (r < 0)
		return r;
	r = parser_locate(p, "limit", atts, names, v, 1);
	if (r < 0)
		return r;
	if (!v[0])
		return parser_fail(p, -EINVAL, "<limit> element must have a \"name\" attribute");
	e->limit_name = strdup(v[0]);
	if (!e->limit_name)
		return parser_fail(p, -ENOMEM, "out of memory");
	return 0;
}

/* <apparmor mode=> */
static int start_apparmor(Parser *p, const XML_Char **atts) {
	static const char *const names[] = { "mode" };
	const char *v[1];
	int r;

	r = parser_push(p, ELEMENT_APPARMOR, NULL);
	if (r < 0)
		return r;
	r = parser_locate(p, "apparmor", atts, names, v, 1);
	if (r < 0)
		return r;
	/* bus_apparmor_set_mode_from_config(): a process-wide setting */
	if (!v[0])
		return 0;
	if (streq(v[0], "disabled"))
		p->loader->root->apparmor_mode = BUS_CONFIG_APPARMOR_DISABLED;
	else if (streq(v[0], "enabled"))
		p->loader->root->apparmor_mode = BUS_CONFIG_APPARMOR_ENABLED;
	else if (streq(v[0], "required"))
		p->loader->root->apparmor_mode = BUS_CONFIG_APPARMOR_REQUIRED;
	else
		return parser_fail(p, -EINVAL, "Mode attribute on <apparmor> must have value "
				   "\"required\", \"enabled\" or \"disabled\", not \"%s\"", v[0]);
	return 0;
}

static int start_busconfig_child(Parser *p, const char *name, const XML_Char **atts) {
	ElementType t = element_from_name(name);

	switch (t) {
	case ELEMENT_USER:
	case ELEMENT_CONFIGTYPE:
	case ELEMENT_PIDFILE:
	case ELEMENT_LISTEN:
	case ELEMENT_AUTH:
	case ELEMENT_SERVICEHELPER:
	case ELEMENT_INCLUDEDIR:
	case ELEMENT_SERVICEDIR:
	case ELEMENT_SELINUX:
	case ELEMENT_FORK:
	case ELEMENT_SYSLOG:
	case ELEMENT_KEEP_UMASK:
	case ELEMENT_KDBUS:
	case ELEMENT_ALLOW_ANONYMOUS:
	case ELEMENT_STANDARD_SESSION_SERVICEDIRS:
	case ELEMENT_STANDARD_SYSTEM_SERVICEDIRS:
		return start_plain_element(p, t, name, atts);
	case ELEMENT_INCLUDE:
		return start_include(p, atts);
	case ELEMENT_POLICY:
		return start_policy(p, atts);
	case ELEMENT_LIMIT:
		return start_limit(p, atts);
	case ELEMENT_APPARMOR:
		return start_apparmor(p, atts);
	default:
		return parser_fail(p, -EINVAL, "Element <%s> not allowed inside <%s> in configuration file",
				   name, "busconfig");
	}
}

static int start_selinux_child(Parser *p, const char *name, const XML_Char **atts) {
	static const char *const names[] = { "own", "context" };
	const char *v[2];
	int r;

	if (!streq(name, "associate"))
		return parser_fail(p, -EINVAL, "Element <%s> not allowed inside <%s> in configuration file",
				   name, "selinux");
	r = parser_locate(p, "associate", atts, names, v, 2);
	if (r < 0)
		return r;
	r = parser_push(p, ELEMENT_ASSOCIATE, NULL);
	if (r < 0)
		return r;
	if (!v[0] || !v[1])
		return parser_fail(p, -EINVAL, "Element <associate> must have attributes "
				   "own=\"<servicename>\" and context=\"<selinux context>\"");
	r = config_set_association(p->cfg, v[0], v[1]);
	if (r < 0)
		return parser_fail(p, r, "out of memory");
	return 0;
}

/* NUL-terminate the text gathered (expat never delivers NUL characters) */
static int parser_terminate_content(Parser *p) {
	if (p->n_content == p->n_content_alloc) {
		char *t = realloc(p->content, p->n_content + 1);

		if (!t)
			return parser_fail(p, -ENOMEM, "out of memory");
		p->content = t;
		p->n_content_alloc++;
	}
	p->content[p->n_content] = '\0';
	return 0;
}

/* the elements whose text may only be white space */
static bool element_takes_no_text(ElementType t) {
	switch (t) {
	case ELEMENT_BUSCONFIG:
	case ELEMENT_POLICY:
	case ELEMENT_ALLOW:
	case ELEMENT_DENY:
	case ELEMENT_FORK:
	case ELEMENT_SYSLOG:
	case ELEMENT_KEEP_UMASK:
	case ELEMENT_KDBUS:
	case ELEMENT_STANDARD_SESSION_SERVICEDIRS:
	case ELEMENT_STANDARD_SYSTEM_SERVICEDIRS:
	case ELEMENT_ALLOW_ANONYMOUS:
	case ELEMENT_SELINUX:
	case ELEMENT_ASSOCIATE:
	case ELEMENT_APPARMOR:
		return true;
	default:
		return false;
	}
}

/* the text @content of @e, for an element that takes text */
static int parser_take_text(Parser *p, Element *e, const char *content) {
	_cleanup_free_ char *full = NULL;
	int r = 0;

	switch (e->type) {
	case ELEMENT_PIDFILE:
	case ELEMENT_USER:
	case ELEMENT_CONFIGTYPE: {
		char **dst = e->type == ELEMENT_PIDFILE ? &p->cfg->pidfile :
			     e->type == ELEMENT_USER ? &p->cfg->user : &p->cfg->type;
		char *s = strdup(content);

		if (!s)
			r = -ENOMEM;
		else {
			free(*dst);
			*dst = s;
		}
		break;
	}

	case ELEMENT_LISTEN:
	case ELEMENT_AUTH:
		r = strv_push_dup(e->type == ELEMENT_LISTEN ? &p->cfg->listen : &p->cfg->auth, NULL, content);
		break;

	case ELEMENT_INCLUDE: {
		const char *base = p->basedir;

		if (e->if_selinux_enabled && !loader_selinux_enabled(p->loader))
			break;
		if (e->selinux_root_relative) {
			base = loader_selinux_root(p->loader);
			if (!base) {
				return parser_fail(p, -EINVAL, "Could not determine SELinux policy root for "
						   "relative inclusion");
			}
		}
		full = make_full_path(base, content);
		if (!full) {
			r = -ENOMEM;
			break;
		}
		return parser_include(p, full, e->ignore_missing);
	}

	case ELEMENT_SERVICEHELPER:
		full = make_full_path(p->basedir, content);
		if (!full)
			r = -ENOMEM;
		else {
			free(p->cfg->servicehelper);
			p->cfg->servicehelper = TAKE_PTR(full);
		}
		break;

	case ELEMENT_INCLUDEDIR:
		full = make_full_path(p->basedir, content);
		if (!full) {
			r = -ENOMEM;
			break;
		}
		return parser_include_dir(p, full);

	case ELEMENT_SERVICEDIR: {
		char *dir = make_full_path(p->basedir, content);

		if (!dir)
			r = -ENOMEM;
		else
			r = config_add_servicedir(p->cfg, dir, BUS_CONFIG_SERVICE_DIR_ORIGIN_EXPLICIT);
		break;
	}

	case ELEMENT_LIMIT:
		if (!parse_long(content, &e->limit_value)) {
			return parser_fail(p, -EINVAL, "<limit name=\"%s\"> element has invalid value (could "
					   "not parse as integer)", e->limit_name);
		}
		break;

	default:
		break;
	}
	if (r < 0)
		return parser_fail(p, r, "out of memory");
	return 0;
}

/* hand the text gathered since the last tag to the open element */
static int parser_process_content(Parser *p) {
	Element *e = parser_top(p);
	size_t n = p->n_content;
	int r;

	if (p->r < 0)
		return p->r;
	if (n == 0)
		return 0;
	r = parser_terminate_content(p);
	if (r < 0)
		return r;
	/* taken or refused from here on */
	p->n_content = 0;

	if (!e)
		return parser_fail(p, -EINVAL, "Text content outside of any XML element in configuration file");
	if (element_takes_no_text(e->type)) {
		if (!all_whitespace(p->content, n))
			return parser_fail(p, -EINVAL, "No text content expected inside XML element %s in "
					   "configuration file", element_names[e->type]);
		return 0;
	}
	e->had_content = true;
	return parser_take_text(p, e, p->content);
}

static void XMLCALL on_start(void *userdata, const XML_Char *name, const XML_Char **atts) {
	Parser *p = userdata;
	Element *top;

	if (p->r < 0 || parser_process_content(p) < 0)
		return;

	top = parser_top(p);
	if (!top) {
		if (!streq(name, "busconfig")) {
			parser_fail(p, -EINVAL, "Unknown element <%s> at root of configuration file", name);
			return;
		}
		if (parser_no_attributes(p, "busconfig", atts) < 0)
			return;
		parser_push(p, ELEMENT_BUSCONFIG, NULL);
		return;
	}

	switch (top->type) {
	case ELEMENT_BUSCONFIG:
		start_busconfig_child(p, name, atts);
		break;
	case ELEMENT_POLICY:
		if (streq(name, "allow") || streq(name, "deny")) {
			bool allow = streq(name, "allow");

			if (parser_append_rule(p, name, atts, allow) < 0)
				return;
			parser_push(p, allow ? ELEMENT_ALLOW : ELEMENT_DENY, NULL);
		} else
			parser_fail(p, -EINVAL, "Element <%s> not allowed inside <%s> in configuration file",
				    name, "policy");
		break;
	case ELEMENT_SELINUX:
		start_selinux_child(p, name, atts);
		break;
	default:
		parser_fail(p, -EINVAL, "Element <%s> is not allowed in this context", name);
		break;
	}
}

/* set_limit() */
static int parser_set_limit(Parser *p, const char *name, long value) {
	static const struct {
		const char *name;
		size_t offset;
		bool must_be_int;
	} table[] = {
#define L(n, i) { #n, offsetof(BusConfigLimits, n), i }
		L(max_incoming_bytes, false),
		L(max_incoming_unix_fds, false),
		L(max_outgoing_bytes, false),
		L(max_outgoing_unix_fds, false),
		L(max_message_size, false),
		L(max_message_unix_fds, false),
		L(service_start_timeout, true),
		L(auth_timeout, true),
		L(pending_fd_timeout, true),
		L(reply_timeout, true),
		L(max_completed_connections, true),
		L(max_incomplete_connections, true),
		L(max_connections_per_user, true),
		L(max_pending_service_starts, true),
		L(max_names_per_connection, true),
		L(max_match_rules_per_connection, true),
		L(max_replies_per_connection, true),
		L(max_containers, true),
		L(max_containers_per_user, true),
		L(max_container_metadata_bytes, true),
		L(max_connections_per_container, true),
#undef L
	};

	for (size_t i = 0; i < ELEMENTSOF(table); i++) {
		if (!streq(table[i].name, name))
			continue;
		if (value < 0)
			return parser_fail(p, -EINVAL, "<limit name=\"%s\"> must be a positive number", name);
		if (table[i].must_be_int && value > INT_MAX)
			return parser_fail(p, -EINVAL, "<limit name=\"%s\"> value is too large", name);
		*(int64_t *)((char *)&p->cfg->limits + table[i].offset) = value;
		return 0;
	}
	/* with dbus-daemon's newline */
	return parser_fail(p, -EINVAL, "There is no limit called \"%s\"\n", name);
}

static void XMLCALL on_end(void *userdata, const XML_Char *name) {
	Parser *p = userdata;
	Element *e;

	if (p->r < 0 || parser_process_content(p) < 0)
		return;

	e = parser_top(p);
	if (!e) {
		parser_fail(p, -EINVAL, "XML parser ended element with no element on the stack");
		return;
	}
	if (!streq(element_names[e->type], name)) {
		parser_fail(p, -EINVAL, "XML element <%s> ended but topmost element on the stack was <%s>",
			    name, element_names[e->type]);
		return;
	}

	switch (e->type) {
	case ELEMENT_INCLUDE:
	case ELEMENT_USER:
	case ELEMENT_CONFIGTYPE:
	case ELEMENT_LISTEN:
	case ELEMENT_PIDFILE:
	case ELEMENT_AUTH:
	case ELEMENT_SERVICEDIR:
	case ELEMENT_SERVICEHELPER:
	case ELEMENT_INCLUDEDIR:
	case ELEMENT_LIMIT:
		if (!e->had_content) {
			parser_fail(p, -EINVAL, "XML element <%s> was expected to have content inside it",
				    element_names[e->type]);
			return;
		}
		if (e->type == ELEMENT_LIMIT && parser_set_limit(p, e->limit_name, e->limit_value) < 0)
			return;
		break;
	default:
		break;
	}

	free(e->limit_name);
	p->n_stack--;
}

static void XMLCALL on_text(void *userdata, const XML_Char *s, int len) {
	Parser *p = userdata;

	if (p->r < 0 || len <= 0)
		return;
	if (p->n_content + (size_t)len >= p->n_content_alloc) {
		size_t n = MAX(p->n_content_alloc * 2, p->n_content + (size_t)len + 64);
		char *t = realloc(p->content, n);

		if (!t) {
			parser_fail(p, -ENOMEM, "out of memory");
			return;
		}
		p->content = t;
		p->n_content_alloc = n;
	}
	memcpy(p->content + p->n_content, s, len);
	p->n_content += len;
}

static void parser_done(Parser *p) {
	for (size_t i = 0; i < p->n_stack; i++)
		free(p->stack[i].limit_name);
	free(p->stack);
	free(p->content);
	free(p->basedir);
	free(p->error);
	bus_config_free(p->cfg);
	if (p->xml)
		XML_ParserFree(p->xml);
}

/* bus_config_load() of config-loader-expat.c: parse one file's bytes */
static int parse_buffer(Loader *l, const char *data, size_t size, const char *path,
			bool toplevel, const BusConfigLimits *limits,
			BusConfig **ret, char **ret_error) {
	Parser p = { .loader = l, .toplevel = toplevel };
	int r;

	*ret_error = NULL;
	p.file = loader_intern_file(l, path);
	p.basedir = path_dirname(path);
	p.cfg = config_new(limits);
	/* "UTF-8" overrides the document's encoding declaration, as in dbus */
	p.xml = XML_ParserCreate("UTF-8");
	if (!p.file || !p.basedir || !p.cfg || !p.xml) {
		parser_done(&p);
		return -ENOMEM;
	}
	XML_SetUserData(p.xml, &p);
	XML_SetElementHandler(p.xml, on_start, on_end);
	XML_SetCharacterDataHandler(p.xml, on_text);

	if (size > INT_MAX) {
		parser_fail(&p, -EFBIG, "File size %zu of \"%s\" is too large.", size, path);
	} else if (XML_Parse(p.xml, data, (int)size, XML_TRUE) == XML_STATUS_ERROR && p.r >= 0) {
		enum XML_Error e = XML_GetErrorCode(p.xml);

		if (e == XML_ERROR_NO_MEMORY)
			parser_fail(&p, -ENOMEM, "out of memory");
		else
			/* with dbus-daemon's newline */
			parser_fail(&p, -EINVAL, "Error in file %s, line %lu, column %lu: %s\n", path,
				    (unsigned long)XML_GetCurrentLineNumber(p.xml),
				    (unsigned long)XML_GetCurrentColumnNumber(p.xml),
				    XML_ErrorString(e));
	}

	if (p.r >= 0 && p.n_stack > 0)
		parser_fail(&p, -EINVAL, "Element <%s> was not closed in configuration file",
			    element_names[parser_top(&p)->type]);
	if (p.r >= 0 && toplevel && !(l->opts.flags & BUS_CONFIG_LOAD_NOT_TOPLEVEL) && !p.cfg->listen)
		parser_fail(&p, -EINVAL, "Configuration file needs one or more <listen> elements "
			    "giving addresses");

	if (p.r < 0) {
		r = p.r;
		*ret_error = TAKE_PTR(p.error);
		parser_done(&p);
		return r;
	}
	*ret = TAKE_PTR(p.cfg);
	parser_done(&p);
	return 0;
}

static int load_common(const char *path, const char *data, size_t size, bool from_file,
		       const BusConfigLoadOptions *opts, BusConfig **ret, char **ret_error) {
	_cleanup_(bus_config_freep) BusConfig *root = NULL, *cfg = NULL;
	_cleanup_free_ char *buf = NULL, *error = NULL;
	Loader l = { .selinux = -1 };
	struct stat st = {};
	int r;

	if (ret_error)
		*ret_error = NULL;
	if (opts)
		l.opts = *opts;

	root = config_new(NULL);
	if (!root)
		return -ENOMEM;
	l.root = root;

	if (from_file) {
		_cleanup_close_ int fd = -1;
		bool read_failed;

		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd < 0) {
			r = -errno;
			if (ret_error && asprintf(ret_error, "Failed to open \"%s\": %s", path,
						  strerror(-r)) < 0)
				*ret_error = NULL;
			return r;
		}
		if (fstat(fd, &st) < 0) {
			r = -errno;
			if (ret_error && asprintf(ret_error, "Failed to stat \"%s\": %s", path,
						  strerror(-r)) < 0)
				*ret_error = NULL;
			return r;
		}
		if (!S_ISREG(st.st_mode)) {
			if (ret_error && asprintf(ret_error, "\"%s\" is not a regular file", path) < 0)
				*ret_error = NULL;
			return -EINVAL;
		}
		r = read_config_fd(fd, &buf, &size, &read_failed);
		if (r < 0) {
			if (read_failed && ret_error &&
			    asprintf(ret_error, "Failed to read \"%s\": %s", path, strerror(-r)) < 0)
				*ret_error = NULL;
			return r;
		}
		if (size > CONFIG_FILE_MAX || st.st_size > CONFIG_FILE_MAX) {
			if (ret_error && asprintf(ret_error, "File size %lu of \"%s\" is too large.",
						  (unsigned long)MAX((size_t)st.st_size, size), path) < 0)
				*ret_error = NULL;
			return -EFBIG;
		}
		data = buf;
	}

	l.stack = malloc(sizeof(FileId));
	if (!l.stack)
		return -ENOMEM;
	l.stack[0] = (FileId) { .dev = st.st_dev, .ino = st.st_ino, .path = path };
	/* a buffer has no identity on disk: compare its name only */
	if (!from_file)
		l.stack[0].dev = (dev_t)-1, l.stack[0].ino = (ino_t)-1;
	l.n_stack = 1;

	r = parse_buffer(&l, data, size, path, true, NULL, &cfg, &error);
	free(l.stack);
	free(l.selinux_root);
	if (r < 0) {
		if (ret_error)
			*ret_error = TAKE_PTR(error);
		return r;
	}

	/* move the bookkeeping of the loader into the result */
	cfg->files = TAKE_PTR(root->files);
	cfg->warnings = TAKE_PTR(root->warnings);
	cfg->apparmor_mode = root->apparmor_mode;
	*ret = TAKE_PTR(cfg);
	return 0;
}

int bus_config_load_full(const char *path, const BusConfigLoadOptions *opts,
			 BusConfig **ret, char **ret_error) {
	assert_return(path, -EINVAL);
	assert_return(ret, -EINVAL);
	return load_common(path, NULL, 0, true, opts, ret, ret_error);
}

int bus_config_load(const char *path, BusConfig **ret, char **ret_error) {
	return bus_config_load_full(path, NULL, ret, ret_error);
}

int bus_config_load_string(const char *data, size_t size, const char *name,
			   const BusConfigLoadOptions *opts, BusConfig **ret,
			   char **ret_error) {
	assert_return(data || size == 0, -EINVAL);
	assert_return(name, -EINVAL);
	assert_return(ret, -EINVAL);
	return load_common(name, data ? data : "", size, false, opts, ret, ret_error);
}

