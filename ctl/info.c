/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gpiobrokerctl: detect, info, find (reading the object tree). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

/* --- a chip's identity -------------------------------------------------------------- */

#define BY_PATH_DIR "/dev/gpio/by-path/"
#define BY_ID_DIR "/dev/gpio/by-id/"

/* A link's name in its directory: the directory is in the key already. */
static const char *link_name(const char *link, const char *dir)
{
	size_t len = strlen(dir);

	return strncmp(link, dir, len) == 0 && link[len] ? link + len : link;
}

/* What udev says of the chip, after gpiodetect's or gpioinfo's own text on its line:
 * only what is known, so that where there is no udev (or an older broker) the line
 * is libgpiod's, as scripts written for those tools read it. */
static void print_identity(const struct chipinfo *ch)
{
	if (*ch->by_path)
		printf(" by-path=%s", link_name(ch->by_path, BY_PATH_DIR));
	if (*ch->by_id)
		printf(" by-id=%s", link_name(ch->by_id, BY_ID_DIR));
	if (*ch->serial)
		printf(" serial=%s", ch->serial);
}

/* The same in JSON: always the three keys, the full links, null where unknown (@ch
 * NULL: a line whose chip is not in the tree). */
static void jput_identity(json_t **o, const struct chipinfo *ch)
{
	jput(o, "by_path", jstr_or_null(ch ? ch->by_path : NULL));
	jput(o, "by_id", jstr_or_null(ch ? ch->by_id : NULL));
	jput(o, "serial", jstr_or_null(ch ? ch->serial : NULL));
}

/* --- detect ------------------------------------------------------------------------- */

const char usage_detect[] = "gpiobrokerctl detect [--json]";
const char help_detect[] =
	"List the GPIO chips the broker serves, as gpiodetect: NAME [LABEL] (N lines).\n"
	"After it, what udev says of the chip, where it is known: by-path=LINK by-id=LINK\n"
	"serial=SERIAL (the links' names in /dev/gpio/by-path/ and /dev/gpio/by-id/).\n"
	"      --json               one JSON array of {name, label, num_lines, path, by_path,\n"
	"                           by_id, serial} (the full links; null where unknown)\n";

static int detect_print_json(const struct tree *t)
{
	json_t *chips = json_array();

	for (size_t i = 0; i < t->n_chips; i++) {
		const struct chipinfo *ch = &t->chips[i];
		json_t *o = json_pack("{s:o,s:o,s:I,s:o}", "name", jstr(ch->name), "label",
				      jstr(ch->label), "num_lines", (json_int_t)ch->num_lines,
				      "path", jstr(ch->path));

		jput_identity(&o, ch);
		jpush(&chips, o);
	}
	return json_print(chips);
}

int cmd_detect(int argc, char **argv)
{
	struct tree t;
	bool json;
	int r;

	if ((r = parse_json_only(argc, argv, &json, 0)))
		return r;
	r = bus_load_tree(&t, false);
	if (r < 0)
		return exit_of(r);
	if (json) {
		r = detect_print_json(&t);
	} else {
		for (size_t i = 0; i < t.n_chips; i++) {
			printf("%s [%s] (%" PRIu32 " lines)", t.chips[i].name, t.chips[i].label,
			       t.chips[i].num_lines);
			print_identity(&t.chips[i]);
			printf("\n");
		}
	}
	tree_free(&t);
	return r;
}

/* --- info ------------------------------------------------------------------------- */

const char usage_info[] =
	"gpiobrokerctl info [-c CHIP] [--unquoted] [--verbose] [--json] [LINE]...";
const char help_info[] =
	"Show lines as gpioinfo does: with no LINE every chip (\"CHIP - N lines:\" and a\n"
	"row per line), with LINEs one row each (\"CHIP OFFSET NAME ATTRIBUTES\"). After\n"
	"gpioinfo's attributes come the broker's: alias=\"...\" (the policy's name for the\n"
	"line) and request=ID (the broker's request holding it). A chip's header ends with\n"
	"what udev says of the chip, where it is known, as detect prints it.\n"
	"  -c, --chip CHIP          only this chip (name, number, label or /dev path); LINEs\n"
	"                           may then be offsets\n"
	"      --by-name            LINEs are names even if they look like offsets\n"
	"      --unquoted           don't quote line and consumer names\n"
	"      --verbose            add what the policy lets you do with each LINE\n"
	"      --json               one JSON array of line objects (each with its chip's\n"
	"                           by_path, by_id and serial, as detect's)\n"
	"  -v, --version            print the version\n";

struct info_cfg {
	struct line_opts lines;
	bool unquoted, verbose, json;
};

/* A row of the output: a chip's header (no line), or a line. */
struct info_row {
	const struct chipinfo *chip;
	const struct lineinfo *line;
	struct access access; /* --verbose */
};

static int info_options(int argc, char **argv, struct info_cfg *cfg)
{
	static const struct option opts[] = {
		{ "chip", required_argument, NULL, 'c' }, { "by-name", no_argument, NULL, OPT_BY_NAME },
		{ "unquoted", no_argument, NULL, OPT_UNQUOTED }, { "verbose", no_argument, NULL, OPT_VERBOSE },
		{ "json", no_argument, NULL, OPT_JSON }, { "strict", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' }, { 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "+:c:s", opts, NULL)) != -1) {
		if (line_opt(c, optarg, &cfg->lines))
			continue;
		switch (c) {
		case OPT_UNQUOTED:
			cfg->unquoted = true;
			break;
		case OPT_VERBOSE:
			cfg->verbose = true;
			break;
		case OPT_JSON:
			cfg->json = true;
			break;
		case 's':
			return refuse_opt("-s/--strict", "the broker resolves every line reference to "
					  "one line (aliases and names are unique there)");
		default:
			return opt_error(c, argv, opts);
		}
	}
	return 0;
}

/* The rows: the LINEs in argument order, else every line of every chip (or -c's). */
static size_t info_rows(const struct resolver *res, struct info_row *rows)
{
	const struct tree *t = &res->tree;
	size_t n = 0;

	for (int a = 0; a < res->num_lines; a++) {
		const struct lineinfo *l = tree_line_by_path(t, res->lines[a].path);

		if (l)
			rows[n++] = (struct info_row){ tree_chip_by_path(t, l->chip), l };
	}
	for (size_t c = 0; res->num_lines == 0 && c < t->n_chips; c++) {
		if (res->chip && res->chip != &t->chips[c])
			continue;
		rows[n++] = (struct info_row){ &t->chips[c], NULL };
		for (size_t i = 0; i < t->n_lines; i++)
			if (t->lines[i].chip && strcmp(t->lines[i].chip, t->chips[c].path) == 0)
				rows[n++] = (struct info_row){ &t->chips[c], &t->lines[i] };
	}
	return n;
}

static void print_access_row(const struct access *a)
{
	if (!a->known)
		printf("\t\taccess: unknown (%s)\n", a->error);
	else if (a->may_use) {
		printf("\t\taccess: allowed");
		if (*a->entry)
			printf(" by %s: directions=%s edges=%s persistent=%s%s", a->entry,
			       *a->directions ? a->directions : "-", *a->edges ? a->edges : "none",
			       a->persistent ? "yes" : "no", a->direct ? " direct=yes" : "");
		else if (a->bypass)
			printf(" (root bypass)");
		printf("\n");
	} else
		printf("\t\taccess: denied: %s\n", *a->reason ? a->reason : "no policy entry allows it");
}

static void info_print_text(const struct info_cfg *cfg, bool one_row_form,
			    const struct info_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct info_row *row = &rows[i];

		if (!row->line) {
			printf("%s - %" PRIu32 " lines:", row->chip->name, row->chip->num_lines);
			print_identity(row->chip);
			printf("\n");
			continue;
		}
		if (one_row_form)
			printf("%s %" PRIu32 "\t", row->chip ? row->chip->name : "?", row->line->offset);
		else
			printf("\tline %3" PRIu32 ":\t", row->line->offset);
		print_name_col(row->line, cfg->unquoted);
		print_attrs(row->line, cfg->unquoted);
		printf("\n");
		if (cfg->verbose)
			print_access_row(&row->access);
	}
}

static json_t *access_json(const struct access *a)
{
	return json_pack("{s:b,s:b,s:b,s:b,s:o,s:o,s:o,s:o}", "known", a->known, "may_use",
			 a->may_use, "persistent", a->persistent, "direct", a->direct, "entry",
			 jstr_or_null(a->entry), "reason", jstr_or_null(a->reason), "directions",
			 jstr_or_null(a->directions), "edges", jstr_or_null(a->edges));
}

static json_t *line_json(const struct info_row *row, bool verbose)
{
	const struct lineinfo *l = row->line;
	bool held = line_is_held(l);
	json_t *o = json_pack("{s:o,s:I,s:o,s:o,s:b,s:o,s:o,s:o,s:o,s:o,s:b,s:o,s:o,s:o,s:o,s:o}",
			      "chip", jstr(row->chip ? row->chip->name : ""),
			      "offset", (json_int_t)l->offset, "name", jstr_or_null(l->name),
			      "direction", jstr(l->direction), "active_low", l->active_low,
			      "edges", jstr(l->edge), "bias", jstr(l->bias), "drive", jstr(l->drive),
			      "event_clock", jstr(l->clock), "debounce_period_us", ju64(l->debounce),
			      "used", l->used, "consumer", jstr_or_null(l->consumer),
			      "alias", jstr_or_null(l->alias),
			      "request", held ? jstr(short_id(l->request)) : json_null(),
			      "request_label", jstr_or_null(held ? l->request_label : NULL),
			      "path", jstr(l->path));

	/* info --json has no chip objects, only lines: each carries its chip's identity,
	 * so that a line is tied to the device without a detect to match it against. */
	jput_identity(&o, row->chip);
	if (verbose)
		jput(&o, "access", access_json(&row->access));
	return o;
}

static int info_print_json(const struct info_cfg *cfg, const struct info_row *rows, size_t n)
{
	json_t *lines = json_array();

	for (size_t i = 0; i < n; i++)
		if (rows[i].line)
			jpush(&lines, line_json(&rows[i], cfg->verbose));
	return json_print(lines);
}

int cmd_info(int argc, char **argv)
{
	struct info_cfg cfg = { 0 };
	struct resolver *res = NULL;
	struct info_row *rows = NULL;
	size_t n;
	int r;

	if ((r = info_options(argc, argv, &cfg)))
		return r;
	r = resolve_lines(argc - optind, argv + optind, &cfg.lines, 0, &res);
	if (!r && (r = resolver_load_tree(res, false)) < 0)
		r = exit_of(r);
	if (!r && !(rows = calloc(res->tree.n_chips + res->tree.n_lines + res->num_lines + 1,
				  sizeof(*rows))))
		r = EX_ERROR;
	if (r)
		goto out;
	n = info_rows(res, rows);
	for (size_t i = 0; cfg.verbose && i < n; i++)
		if (rows[i].line)
			bus_get_access(rows[i].line->path, &rows[i].access);
	if (cfg.json)
		r = info_print_json(&cfg, rows, n);
	else
		info_print_text(&cfg, res->num_lines > 0, rows, n);
out:
	free(rows);
	resolver_free(res);
	return r;
}

/* --- find ------------------------------------------------------------------------- */

const char usage_find[] = "gpiobrokerctl find [--json] LINE";
const char help_find[] =
	"Print the chip and offset of a line (alias, name, CHIP:OFFSET or path), as gpiofind.\n"
	"      --json               {\"chip\":..., \"offset\":..., \"path\":...}\n";

int cmd_find(int argc, char **argv)
{
	struct resolver *res = NULL;
	struct resolved_line *rl;
	bool json;
	int r;

	if ((r = parse_json_only(argc, argv, &json, 1)))
		return r;
	r = resolve_lines(1, argv + optind, NULL, 0, &res);
	if (r)
		goto out;
	rl = &res->lines[0];
	if (json)
		r = json_print(json_pack("{s:o,s:I,s:o}", "chip", jstr(rl->chip), "offset",
					 (json_int_t)rl->offset, "path", jstr(rl->path)));
	else
		printf("%s %u\n", rl->chip, rl->offset);
out:
	resolver_free(res);
	return r;
}
