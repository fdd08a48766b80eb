/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * service-file.c - D-Bus activation ".service" files: the desktop-file
 * parser of dbus-daemon (bus/desktop-file.c), the entry rules of
 * bus/activation.c and the Exec splitting of dbus/dbus-shell.c.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compat/service-file.h"
#include "compat/wire.h"
#include "util/format.h"
#include "util/macro.h"
#include "util/strutil.h"

#define SERVICE_FILE_MAX (128 * 1024)     /* bus_desktop_file_load() */
#define SERVICE_SECTION "D-BUS Service"

/* ---------------------------------------------------------------------- */
/* helpers */

bool service_name_is_valid(const char *name) {
	size_t len, elements = 0;
	bool start = true;

	if (!name)
		return false;
	len = strlen(name);
	if (len == 0 || len > 255 || name[0] == '.' || name[0] == ':')
		return false;
	for (const char *s = name; *s; s++) {
		char c = *s;

		if (c == '.') {
			if (start)
				return false;   /* empty element */
			start = true;
			continue;
		}
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '-' ||
		      (c >= '0' && c <= '9')))
			return false;
		if (start && c >= '0' && c <= '9')
			return false;
		if (start)
			elements++;
		start = false;
	}
	return !start && elements >= 2;
}

/* ---------------------------------------------------------------------- */
/* desktop-file parsing */

typedef struct Parser {
	const char *path;
	const char *data;          /* NUL-terminated copy */
	size_t len;
	size_t pos;
	unsigned line;
	int section;               /* -1: none yet; else index of the current group */
	int service_section;       /* index of the first [D-BUS Service] group, or -1 */
	char *current_name;        /* name of the current group, for messages */
	ServiceFile *f;
	char *error;
} Parser;

_printf_(2, 3)
static int parser_error(Parser *p, const char *fmt, ...) {
	_cleanup_free_ char *msg = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	free(p->error);
	p->error = NULL;
	if (p->current_name)
		r = asprintf(&p->error, "%s: Error in section %s at line %u: %s", p->path,
			     p->current_name, p->line, msg);
	else
		r = asprintf(&p->error, "%s: Error at line %u: %s", p->path, p->line, msg);
	if (r < 0) {
		p->error = NULL;
		return -ENOMEM;
	}
	return -EBADMSG;
}

/* _dbus_string_find_eol(): "\r\n", "\n" or "\r" */
static void find_eol(Parser *p, size_t *ret_end, size_t *ret_eol_len) {
	for (size_t i = p->pos; i < p->len; i++) {
		if (p->data[i] == '\r') {
			*ret_end = i;
			*ret_eol_len = (i + 1 < p->len && p->data[i + 1] == '\n') ? 2 : 1;
			return;
		}
		if (p->data[i] == '\n') {
			*ret_end = i;
			*ret_eol_len = 1;
			return;
		}
	}
	*ret_end = p->len;
	*ret_eol_len = 0;
}

static void next_line(Parser *p, size_t end, size_t eol_len) {
	p->pos = end == p->len ? p->len : end + eol_len;
	p->line++;
}

/* the rest of the line (to '\n', not '\r') is blank */
static bool is_blank_line(Parser *p) {
	for (size_t i = p->pos; i < p->len && p->data[i] != '\n'; i++) {
		char c = p->data[i];

		if (!(c == ' ' || c == '\t' || c == '\r' || c == '\f'))
			return false;
	}
	return true;
}

static int unescape(Parser *p, size_t start, size_t end, char **ret) {
	char *r = malloc(end - start + 1), *q;

	if (!r)
		return -ENOMEM;
	q = r;
	for (size_t i = start; i < end; i++) {
		char c = p->data[i];

		if (c == '\0') {
			free(r);
			return parser_error(p, "Text to be unescaped contains embedded nul");
		}
		if (c != '\\') {
			*q++ = c;
			continue;
		}
		if (++i >= end) {
			free(r);
			return parser_error(p, "Text to be unescaped ended in \\");
		}
		switch (p->data[i]) {
		case 's':
			*q++ = ' ';
			break;
		case 't':
			*q++ = '\t';
			break;
		case 'n':
			*q++ = '\n';
			break;
		case 'r':
			*q++ = '\r';
			break;
		case '\\':
			*q++ = '\\';
			break;
		default:
			free(r);
			return parser_error(p, "Text to be unescaped had invalid escape sequence");
		}
	}
	*q = '\0';
	*ret = r;
	return 0;
}

static int parse_section_start(Parser *p) {
	_cleanup_free_ char *name = NULL;
	size_t end, eol;
	int r;

	find_eol(p, &end, &eol);
	if (end - p->pos <= 2 || p->data[end - 1] != ']')
		return parser_error(p, "Invalid syntax for section header");
	r = unescape(p, p->pos + 1, end - 1, &name);
	if (r < 0)
		return r;
	for (const unsigned char *s = (const unsigned char *)name; *s; s++)
		if (*s <= 0x1f || *s >= 0x7f || *s == '[' || *s == ']')
			return parser_error(p, "Invalid characters in section name");

	p->section++;
	if (p->service_section < 0 && streq(name, SERVICE_SECTION))
		p->service_section = p->section;
	free(p->current_name);
	p->current_name = TAKE_PTR(name);
	next_line(p, end, eol);
	return 0;
}

static bool is_key_char(char c) {
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

static char **key_slot(ServiceFile *f, const char *key, size_t n) {
	static const struct {
		const char *key;
		size_t offset;
	} keys[] = {
		{ "Name", offsetof(ServiceFile, name) },
		{ "Exec", offsetof(ServiceFile, exec) },
		{ "User", offsetof(ServiceFile, user) },
		{ "SystemdService", offsetof(ServiceFile, systemd_service) },
		{ "AssumedAppArmorLabel", offsetof(ServiceFile, assumed_apparmor_label) },
	};

	for (size_t i = 0; i < ELEMENTSOF(keys); i++)
		if (strlen(keys[i].key) == n && memcmp(keys[i].key, key, n) == 0)
			return (char **)((char *)f + keys[i].offset);
	return NULL;
}

static int parse_key_value(Parser *p) {
	size_t end, eol, k, key_end;
	char *value = NULL, **slot;
	int r;

	find_eol(p, &end, &eol);
	for (k = p->pos; k < end && is_key_char(p->data[k]); k++)
		;
	key_end = k;
	if (key_end == p->pos)
		return parser_error(p, "Empty key name");
	/* "Key[locale]=..." lines are ignored, whatever follows */
	if (k < end && p->data[k] == '[') {
		next_line(p, end, eol);
		return 0;
	}
	while (k < end && p->data[k] == ' ')
		k++;
	if (k < end && p->data[k] != '=')
		return parser_error(p, "Invalid characters in key name");
	if (k == end)
		return parser_error(p, "No '=' in key/value pair");
	k++;
	while (k < end && p->data[k] == ' ')
		k++;
	r = unescape(p, k, end, &value);
	if (r < 0)
		return r;

	/* the first group of that name and the first key of that name win */
	slot = p->section == p->service_section ? key_slot(p->f, p->data + p->pos, key_end - p->pos) : NULL;
	if (slot && !*slot)
		*slot = value;
	else
		free(value);
	next_line(p, end, eol);
	return 0;
}

ServiceFile *service_file_free(ServiceFile *f) {
	if (!f)
		return NULL;
	free(f->path);
	free(f->filename);
	free(f->name);
	free(f->exec);
	free(f->user);
	free(f->systemd_service);
	free(f->assumed_apparmor_label);
	free(f);
	return NULL;
}

ServiceFile **service_files_free(ServiceFile **files, size_t n) {
	for (size_t i = 0; files && i < n; i++)
		service_file_free(files[i]);
	free(files);
	return NULL;
}

int service_file_parse(const char *data, size_t size, const char *path,
		       ServiceFile **ret, char **ret_error) {
	return service_file_parse_full(data, size, path, 0, ret, ret_error);
}

int service_file_parse_full(const char *data, size_t size, const char *path, unsigned flags,
			    ServiceFile **ret, char **ret_error) {
	_cleanup_(service_file_freep) ServiceFile *f = NULL;
	_cleanup_free_ char *copy = NULL;
	Parser p = { .path = path, .line = 1, .section = -1, .service_section = -1 };
	const char *base;
	int r = 0;

	assert_return(data || size == 0, -EINVAL);
	assert_return(path, -EINVAL);
	assert_return(ret, -EINVAL);
	if (ret_error)
		*ret_error = NULL;

	if (size > SERVICE_FILE_MAX) {
		if (ret_error && asprintf(ret_error, "%s: Desktop file size (%zu bytes) is too large", path, size) < 0)
			*ret_error = NULL;
		return -EFBIG;
	}
	if (!wire_utf8_is_valid(data, size)) {
		if (ret_error && asprintf(ret_error, "%s: invalid UTF-8", path) < 0)
			*ret_error = NULL;
		return -EBADMSG;
	}

	copy = malloc(size + 1);
	f = calloc(1, sizeof(*f));
	if (!copy || !f)
		return -ENOMEM;
	memcpy(copy, data, size);
	copy[size] = '\0';
	p.data = copy;
	p.len = size;
	p.f = f;

	f->path = strdup(path);
	base = strrchr(path, '/');
	f->filename = strdup(base ? base + 1 : path);
	if (!f->path || !f->filename)
		return -ENOMEM;

	while (r >= 0 && p.pos < p.len) {
		if (p.data[p.pos] == '[') {
			r = parse_section_start(&p);
		} else if (is_blank_line(&p) || p.data[p.pos] == '#') {
			size_t end, eol;

			find_eol(&p, &end, &eol);
			next_line(&p, end, eol);
		} else if (p.section < 0) {
			free(p.error);
			if (asprintf(&p.error, "%s: invalid service file: key=value before [Section]", path) < 0)
				p.error = NULL;
			r = -EBADMSG;
		} else {
			r = parse_key_value(&p);
		}
	}
	free(p.current_name);

	if (r >= 0 && (!f->name || !f->exec) && !(flags & SERVICE_PARSE_KEYS_OPTIONAL)) {
		/* bus_desktop_file_get_string(): Name first, then Exec */
		if (asprintf(&p.error, "%s: No \"%s\" key in .service file", path, !f->name ? "Name" : "Exec") < 0)
			p.error = NULL;
		r = -EBADMSG;
	}
	if (r < 0) {
		if (ret_error)
			*ret_error = p.error;
		else
			free(p.error);
		return r;
	}

	if (f->name) {
		size_t n = strlen(f->name);

		f->name_matches_filename = strlen(f->filename) == n + strlen(".service") &&
					   strncmp(f->filename, f->name, n) == 0 &&
					   streq(f->filename + n, ".service");
	}
	f->name_valid = f->name && service_name_is_valid(f->name);
	*ret = TAKE_PTR(f);
	return 0;
}

int service_file_load(const char *path, ServiceFile **ret, char **ret_error) {
	return service_file_load_full(path, 0, ret, ret_error);
}

int service_file_load_full(const char *path, unsigned flags, ServiceFile **ret, char **ret_error) {
	_cleanup_free_ char *data = NULL;
	_cleanup_close_ int fd = -1;
	ServiceFile *f = NULL;
	size_t size = 0;
	struct stat st;
	int r;

	assert_return(path, -EINVAL);
	assert_return(ret, -EINVAL);
	if (ret_error)
		*ret_error = NULL;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		if (ret_error && asprintf(ret_error, "%s: Failed to open \"%s\": %s", path, path, strerror(-r)) < 0)
			*ret_error = NULL;
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		if (ret_error && asprintf(ret_error, "%s: \"%s\" is not a regular file", path, path) < 0)
			*ret_error = NULL;
		return -EINVAL;
	}
	if (st.st_size > SERVICE_FILE_MAX) {
		if (ret_error && asprintf(ret_error, "%s: Desktop file size (%ld bytes) is too large", path,
					  (long)st.st_size) < 0)
			*ret_error = NULL;
		return -EFBIG;
	}
	data = malloc(SERVICE_FILE_MAX + 1);
	if (!data)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, data + size, SERVICE_FILE_MAX + 1 - size);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			if (ret_error && asprintf(ret_error, "%s: Failed to read \"%s\": %s", path, path,
						  strerror(-r)) < 0)
				*ret_error = NULL;
			return r;
		}
		if (n == 0)
			break;
		size += n;
		if (size > SERVICE_FILE_MAX)
			break;
	}

	r = service_file_parse_full(data, size, path, flags, &f, ret_error);
	if (r < 0)
		return r;
	f->mtime_usec = (int64_t)st.st_mtim.tv_sec * 1000000 + st.st_mtim.tv_nsec / 1000;
	*ret = f;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* directories */

static int list_service_files(const char *dir, char ***ret, size_t *ret_n) {
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	DIR *d;

	*ret = NULL;
	*ret_n = 0;
	d = opendir(dir);
	if (!d)
		return 0;   /* "it is ok if we can't read the directory" */
	while ((de = readdir(d))) {
		char **t;

		if (!ends_with(de->d_name, ".service"))
			continue;
		t = realloc(names, (n + 2) * sizeof(char *));
		if (!t)
			goto oom;
		names = t;
		names[n] = strdup(de->d_name);
		if (!names[n])
			goto oom;
		names[++n] = NULL;
	}
	closedir(d);
	/* readdir() order, as dbus-daemon: of two files with one Name, the
	 * first one read wins */
	*ret = names;
	*ret_n = n;
	return 0;
oom:
	closedir(d);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return -ENOMEM;
}

static int warn(char ***warnings, size_t *n_warnings, char *msg) {
	char **t;

	if (!warnings) {
		free(msg);
		return 0;
	}
	if (!msg)
		return -ENOMEM;
	t = realloc(*warnings, (*n_warnings + 2) * sizeof(char *));
	if (!t) {
		free(msg);
		return -ENOMEM;
	}
	*warnings = t;
	t[(*n_warnings)++] = msg;
	t[*n_warnings] = NULL;
	return 0;
}

int service_dir_scan_full(char **dirs, const unsigned *dir_flags, unsigned scan_flags,
			  ServiceFile ***ret, size_t *ret_n, char ***ret_warnings) {
	return service_dir_scan_known(dirs, dir_flags, scan_flags, NULL, NULL, ret, ret_n, ret_warnings);
}

int service_dir_scan_known(char **dirs, const unsigned *dir_flags, unsigned scan_flags, ServiceScanKnownFn known,
			   void *userdata, ServiceFile ***ret, size_t *ret_n, char ***ret_warnings) {
	ServiceFile **files = NULL;
	size_t n_files = 0, n_warnings = 0;
	char **warnings = NULL, ***w = ret_warnings ? &warnings : NULL;
	int r = 0;

	assert_return(ret && ret_n, -EINVAL);

	for (size_t i = 0; dirs && dirs[i] && r >= 0; i++) {
		char **names = NULL;
		size_t n_names = 0;

		r = list_service_files(dirs[i], &names, &n_names);
		if (r < 0)
			break;
		for (size_t j = 0; j < n_names && r >= 0; j++) {
			_cleanup_(service_file_freep) ServiceFile *f = NULL;
			_cleanup_free_ char *path = NULL, *error = NULL;
			bool dup = false;

			path = path_join(dirs[i], names[j]);
			if (!path) {
				r = -ENOMEM;
				break;
			}
			if (known) {
				struct stat st;
				if (stat(path, &st) >= 0 && known(path, names[j], (int64_t) st.st_mtime, userdata))
					continue;
			}
			r = service_file_load(path, &f, &error);
			if (r == -ENOMEM)
				break;
			if (r < 0) {
				r = warn(w, &n_warnings, format("Could not load %s: %s", path, strempty(error)));
				continue;
			}
			if (!f->name_matches_filename) {
				if (dir_flags && (dir_flags[i] & SERVICE_DIR_STRICT_NAMING)) {
					r = warn(w, &n_warnings, format("Service file \"%s\" should have been named "
								    "\"%s.service\": not loading it", path, f->name));
					continue;
				}
				if (scan_flags & SERVICE_SCAN_SERVICEHELPER) {
					r = warn(w, &n_warnings, format("Service file \"%s\" should have been named "
								    "\"%s.service\" and will not work with "
								    "system bus activation", path, f->name));
					if (r < 0)
						break;
				}
			}
			for (size_t k = 0; k < n_files; k++)
				if (streq(files[k]->name, f->name)) {
					dup = true;
					break;
				}
			if (dup) {
				r = warn(w, &n_warnings, format("Service %s already exists in activation entry list "
							    "(%s ignored)", f->name, path));
				continue;
			}
			{
				ServiceFile **t = realloc(files, (n_files + 1) * sizeof(*t));

				if (!t) {
					r = -ENOMEM;
					break;
				}
				files = t;
			}
			f->dir_index = i;
			files[n_files++] = TAKE_PTR(f);
		}
		for (size_t j = 0; j < n_names; j++)
			free(names[j]);
		free(names);
	}

	if (r < 0) {
		service_files_free(files, n_files);
		strv_free(warnings);
		return -ENOMEM;
	}
	*ret = files;
	*ret_n = n_files;
	if (ret_warnings)
		*ret_warnings = warnings;
	return 0;
}

int service_dir_scan(char **dirs, ServiceFile ***ret, size_t *ret_n) {
	return service_dir_scan_full(dirs, NULL, 0, ret, ret_n, NULL);
}

/* ---------------------------------------------------------------------- */
/* Exec splitting: _dbus_shell_parse_argv() */

typedef struct Buf {
	char *s;
	size_t n, alloc;
} Buf;

static int buf_add(Buf *b, char c) {
	if (b->n + 2 > b->alloc) {
		size_t a = b->alloc ? b->alloc * 2 : 32;
		char *t = realloc(b->s, a);

		if (!t)
			return -ENOMEM;
		b->s = t;
		b->alloc = a;
	}
	b->s[b->n++] = c;
	b->s[b->n] = '\0';
	return 0;
}

static int strv_add(char ***l, size_t *n, char *s) {
	char **t;

	if (!s)
		return -ENOMEM;
	t = realloc(*l, (*n + 2) * sizeof(char *));
	if (!t) {
		free(s);
		return -ENOMEM;
	}
	*l = t;
	t[(*n)++] = s;
	t[*n] = NULL;
	return 0;
}

static int delimit(Buf *tok, char ***l, size_t *n) {
	char *s = tok->s ? tok->s : strdup("");

	tok->s = NULL;
	tok->n = tok->alloc = 0;
	return strv_add(l, n, s);
}

/* tokenize_command_line() */
static int tokenize(const char *line, char ***ret, size_t *ret_n) {
	char **tokens = NULL;
	size_t n = 0;
	Buf tok = {};
	char quote = '\0';
	bool quoted = false;
	int r = 0;

	for (const char *p = line; *p && r >= 0; p++) {
		if (quote == '\\') {
			if (*p != '\n') {
				r = buf_add(&tok, '\\');
				if (r >= 0)
					r = buf_add(&tok, *p);
			}
			quote = '\0';
		} else if (quote == '#') {
			while (*p && *p != '\n')
				p++;
			quote = '\0';
			if (*p == '\0')
				break;
		} else if (quote) {
			if (*p == quote && !(quote == '"' && quoted))
				quote = '\0';
			r = buf_add(&tok, *p);
		} else {
			switch (*p) {
			case '\n':
				r = delimit(&tok, &tokens, &n);
				break;
			case ' ':
			case '\t':
				if (tok.n > 0)
					r = delimit(&tok, &tokens, &n);
				break;
			case '\'':
			case '"':
				r = buf_add(&tok, *p);
				quote = *p;
				break;
			case '#':
			case '\\':
				quote = *p;
				break;
			default:
				r = buf_add(&tok, *p);
				break;
			}
		}
		quoted = *p == '\\' ? !quoted : false;
	}
	if (r >= 0)
		r = delimit(&tok, &tokens, &n);
	free(tok.s);
	if (r >= 0 && quote)
		r = -EINVAL;   /* "Unclosed quotes in command line" */
	if (r < 0) {
		strv_free(tokens);
		return r;
	}
	*ret = tokens;
	*ret_n = n;
	return 0;
}

/* _dbus_shell_unquote() */
static int unquote(const char *s, char **ret) {
	Buf out = {};
	int r = 0;

	r = buf_add(&out, 'x');   /* make sure the result is allocated */
	out.n = 0;
	out.s[0] = '\0';
	while (*s && r >= 0) {
		while (*s && *s != '"' && *s != '\'' && r >= 0) {
			if (*s == '\\') {
				s++;
				if (*s) {
					if (*s != '\n')
						r = buf_add(&out, *s);
					s++;
				}
			} else
				r = buf_add(&out, *s++);
		}
		if (!*s || r < 0)
			break;
		if (*s == '"') {
			bool closed = false;

			for (s++; *s && r >= 0;) {
				if (*s == '"') {
					s++;
					closed = true;
					break;
				}
				if (*s == '\\') {
					s++;
					if (*s == '"' || *s == '\\' || *s == '`' || *s == '$' || *s == '\n')
						r = buf_add(&out, *s++);
					else
						r = buf_add(&out, '\\');
				} else
					r = buf_add(&out, *s++);
			}
			if (!closed && r >= 0)
				r = -EINVAL;
		} else {
			bool closed = false;

			for (s++; *s && r >= 0;) {
				if (*s == '\'') {
					s++;
					closed = true;
					break;
				}
				r = buf_add(&out, *s++);
			}
			if (!closed && r >= 0)
				r = -EINVAL;
		}
	}
	if (r < 0) {
		free(out.s);
		return r;
	}
	*ret = out.s;
	return 0;
}

int service_exec_split(const char *exec, char ***ret_argv) {
	_cleanup_strv_free_ char **tokens = NULL;
	char **argv;
	size_t n = 0;
	int r;

	assert_return(exec, -EINVAL);
	assert_return(ret_argv, -EINVAL);

	r = tokenize(exec, &tokens, &n);
	if (r < 0)
		return r;
	argv = calloc(n + 1, sizeof(char *));
	if (!argv)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		r = unquote(tokens[i], &argv[i]);
		if (r < 0) {
			strv_free(argv);
			return r;
		}
	}
	*ret_argv = argv;
	return 0;
}
