/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gpiobrokerctl: the libgpiod v2 tools (gpiodetect, gpioinfo, gpioget, gpioset,
 * gpiomon, gpionotify) for lines held through gpiod-broker, with their option
 * letters and output, plus the broker's own notions: persistent requests, listing
 * and releasing requests, watching, status, waiting for the broker. Everything goes
 * through libgpiobroker, except reading the object tree, access and policy status,
 * which is plain D-Bus property reading, all of it in ctl/bus.c. See
 * gpiobrokerctl(1). The commands live in ctl/ (ctl.h says what is where).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

static const char *address, *host, *machine;

static int connect_broker(void)
{
	if (B)
		return 0;
	if (host)
		B = gpiobroker_open_host(host);
	else if (machine)
		B = gpiobroker_open_machine(machine);
	else
		B = address ? gpiobroker_open_address(address) : gpiobroker_open();
	if (!B) {
		if (host || machine)
			fprintf(stderr, "gpiobrokerctl: cannot connect to the system bus of %s: %s\n",
				host ? host : machine, strerror(errno));
		else
			fprintf(stderr, "gpiobrokerctl: cannot connect to the %s bus: %s\n",
				address ? "given" : "system", strerror(errno));
		return EX_NOBROKER;
	}
	return 0;
}

/*
 * -H/--host and -M/--machine, with busctl's meaning, wherever they are before "--"
 * (before the command or among its options): taken out of argv here, so that every
 * command has them and no command's getopt sees them. 0, or an exit code.
 */
static int take_target_opts(int *argc, char **argv)
{
	int out = 1;

	for (int i = 1; i < *argc; i++) {
		const char **dst = NULL;
		const char *val = NULL, *a = argv[i];

		if (strcmp(a, "--") == 0) {
			while (i < *argc)
				argv[out++] = argv[i++];
			break;
		}
		if (strcmp(a, "-H") == 0 || strcmp(a, "--host") == 0)
			dst = &host;
		else if (strcmp(a, "-M") == 0 || strcmp(a, "--machine") == 0)
			dst = &machine;
		if (dst) {
			if (i + 1 >= *argc) {
				fprintf(stderr, "gpiobrokerctl: option '%s' needs a value\n"
						"try 'gpiobrokerctl --help'\n", a);
				return EX_USAGE;
			}
			val = argv[++i];
		} else if (strncmp(a, "-H", 2) == 0 || strncmp(a, "--host=", 7) == 0) {
			dst = &host;
			val = a[1] == 'H' ? a + 2 : a + 7;
		} else if (strncmp(a, "-M", 2) == 0 || strncmp(a, "--machine=", 10) == 0) {
			dst = &machine;
			val = a[1] == 'M' ? a + 2 : a + 10;
		}
		if (!dst) {
			argv[out++] = argv[i];
			continue;
		}
		if (!*val) {
			fprintf(stderr, "gpiobrokerctl: option '%s' needs a value\n"
					"try 'gpiobrokerctl --help'\n", a);
			return EX_USAGE;
		}
		*dst = val;
	}
	*argc = out;
	argv[out] = NULL;
	return 0;
}

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage, *help;
	bool chip_opt; /* takes -c CHIP */
} commands[] = {
	{ "detect", cmd_detect, usage_detect, help_detect, false },
	{ "info", cmd_info, usage_info, help_info, true },
	{ "find", cmd_find, usage_find, help_find, false },
	{ "status", cmd_status, usage_status, help_status, false },
	{ "request", cmd_request, usage_request, help_request, true },
	{ "requests", cmd_requests, usage_requests, help_requests, false },
	{ "release", cmd_release, usage_release, help_release, false },
	{ "get", cmd_get, usage_get, help_get, true },
	{ "set", cmd_set, usage_set, help_set, true },
	{ "reconfigure", cmd_reconfigure, usage_reconfigure, help_reconfigure, false },
	{ "monitor", cmd_monitor, usage_monitor, help_monitor, true },
	{ "watch", cmd_watch, usage_watch, help_watch, true },
	{ "notify", cmd_notify, usage_notify, help_notify, true },
	{ "wait", cmd_wait, usage_wait, help_wait, false },
	{ "slices", cmd_slices, usage_slices, help_slices, false },
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void main_help(FILE *f)
{
	fprintf(f, "usage: gpiobrokerctl [-H [USER@]HOST[:PORT] | -M CONTAINER | --address ADDRESS]\n"
		   "                     COMMAND [ARGS]\n"
		   "GPIO lines through gpiod-broker, with the libgpiod tools' options. Commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %s\n", commands[i].usage + strlen("gpiobrokerctl "));
	fprintf(f, "\"gpiobrokerctl COMMAND --help\" describes a command. A LINE is a policy alias,\n"
		   "a line name, CHIP:OFFSET or a line object path; with -c CHIP, an offset. A\n"
		   "request is its id (N) or path (/org/gpiodbroker1/request/N).\n"
		   "-H/--host reaches the broker of another host over SSH (as busctl -H), -M/--machine\n"
		   "the broker in a local container (as busctl -M); either goes before or after the\n"
		   "command.\n"
		   "Exit codes: 0 ok, 1 error, 2 usage, 3 not found, 4 busy, 5 permission denied,\n"
		   "6 timeout, 7 broker not running (or no bus, or the link to it lost).\n");
}

static int version(void)
{
	printf("gpiobrokerctl (gpiod-broker) %s\n", PACKAGE_VERSION);
	return EX_OK;
}

int main(int argc, char **argv)
{
	int i = 1, ret;

	opterr = 0; /* getopt's errors are ours: one line, with the allowed values */
	ret = take_target_opts(&argc, argv);
	if (ret)
		return ret;
	while (i < argc && argv[i][0] == '-') {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			main_help(stdout);
			return EX_OK;
		} else if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-v") == 0) {
			return version();
		} else if (strcmp(argv[i], "--address") == 0 && i + 1 < argc) {
			address = argv[i + 1];
			i += 2;
		} else if (strncmp(argv[i], "--address=", 10) == 0) {
			address = argv[i] + 10;
			i++;
		} else {
			fprintf(stderr, "gpiobrokerctl: unknown option '%s'\n"
					"try 'gpiobrokerctl --help'\n", argv[i]);
			return EX_USAGE;
		}
	}
	if ((host != NULL) + (machine != NULL) + (address != NULL) > 1) {
		fprintf(stderr, "gpiobrokerctl: --host, --machine and --address exclude one another\n"
				"try 'gpiobrokerctl --help'\n");
		return EX_USAGE;
	}
	if (i >= argc) {
		fprintf(stderr, "gpiobrokerctl: no command given\ntry 'gpiobrokerctl --help'\n");
		return EX_USAGE;
	}
	for (size_t c = 0; c < N_COMMANDS; c++) {
		const struct command *cmd = &commands[c];

		if (strcmp(argv[i], cmd->name) != 0)
			continue;
		cur_cmd = cmd->name;
		cur_chip_opt = cmd->chip_opt;
		for (int a = i + 1; a < argc; a++) {
			if (strcmp(argv[a], "--") == 0)
				break;
			if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
				printf("usage: %s\n%s", cmd->usage, cmd->help);
				return EX_OK;
			}
			if (strcmp(argv[a], "--version") == 0 || strcmp(argv[a], "-v") == 0)
				return version();
		}
		cur_target = host ? host : machine;
		ret = connect_broker();
		if (ret)
			return ret;
		optind = 0; /* getopt from the command's own arguments */
		ret = cmd->run(argc - i, argv + i);
		gpiobroker_close(B);
		return ret;
	}
	{
		const char *names[N_COMMANDS];
		const char *best;

		for (size_t c = 0; c < N_COMMANDS; c++)
			names[c] = commands[c].name;
		best = suggest(argv[i], names, N_COMMANDS);
		if (best)
			fprintf(stderr, "gpiobrokerctl: unknown command '%s' (did you mean '%s'?)\n",
				argv[i], best);
		else
			fprintf(stderr, "gpiobrokerctl: unknown command '%s'\n", argv[i]);
		fprintf(stderr, "try 'gpiobrokerctl --help'\n");
	}
	return EX_USAGE;
}
