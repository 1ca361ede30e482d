/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file gpiobroker.h
 * @brief libgpiobroker: GPIO lines from gpiod-broker, the kernel's GPIO model over D-Bus.
 *
 * A thin client of the gpiod-broker D-Bus API (docs/dbus-api.md): every function
 * is one or two calls to the broker, which does all the work and all the checks.
 * Names follow the kernel's consumer API, so a driver writer feels at home:
 *
 * | kernel                       | libgpiobroker                         |
 * |------------------------------|---------------------------------------|
 * | gpio_request()               | gpiobroker_request()                  |
 * | gpio_request_array()         | gpiobroker_request_array()            |
 * | gpio_direction_input()       | gpiobroker_direction_input()          |
 * | gpio_direction_output()      | gpiobroker_direction_output()         |
 * | gpio_get_value()             | gpiobroker_get_value()                |
 * | gpio_set_value()             | gpiobroker_set_value()                |
 * | gpio_to_irq() + request_irq()| gpiobroker_to_irq()                   |
 * | gpio_free()                  | gpiobroker_free()                     |
 * | sysfs "value" + poll()       | gpiobroker_watch() (read-only, not held) |
 * | devm_gpio_request()          | the default: a request lives no longer than its connection |
 *
 * Objects are opaque. struct gpiobroker is one bus connection; struct gpiobroker_request
 * is a set of lines held through the broker, addressed by @em index (their position
 * in the request). Lines are named as the broker names them: a policy alias or line
 * name ("reset"), "CHIP:OFFSET" ("gpiochip0:3", or the chip's label), or the line's
 * object path.
 *
 * Errors: functions returning int return 0 (or a value) on success and a negative
 * errno on failure; functions returning a pointer return NULL and set errno. When
 * the broker refused, gpiobroker_last_error_name() and gpiobroker_last_error_message()
 * say why, with the broker's words. The errno values are:
 *
 * | broker error                               | errno      |
 * |--------------------------------------------|------------|
 * | org.gpiodbroker1.Error.Busy                | EBUSY      |
 * | org.gpiodbroker1.Error.NotFound            | ENOENT     |
 * | org.gpiodbroker1.Error.InvalidArgs         | EINVAL     |
 * | org.gpiodbroker1.Error.PermissionDenied    | EACCES     |
 * | org.gpiodbroker1.Error.NotOutput           | EPERM      |
 * | org.gpiodbroker1.Error.ChipGone            | ENODEV     |
 * | org.gpiodbroker1.Error.PolicyInvalid       | EBADMSG    |
 * | org.gpiodbroker1.Error.LimitsExceeded      | EDQUOT     |
 * | org.gpiodbroker1.Error.Failed              | EIO        |
 * | org.freedesktop.DBus.Error.UnknownObject   | ENOENT (e.g. a request already released) |
 * | org.freedesktop.DBus.Error.UnknownMethod   | ENOENT (an older broker) |
 * | org.freedesktop.DBus.Error.ServiceUnknown, NameHasNoOwner | EHOSTDOWN (no broker on the bus) |
 * | anything else                              | what sd-bus maps it to, else EIO |
 *
 * Threads: a struct gpiobroker and its requests must be used from one thread at a
 * time (like an sd_bus). Use one connection per thread if needed.
 *
 * Event loops: the connection is an sd-bus connection. Either attach it to an
 * sd-event loop (gpiobroker_attach_event()), or poll gpiobroker_get_fd() for
 * gpiobroker_get_events() until gpiobroker_get_timeout() and then call
 * gpiobroker_process(). Event handlers (gpiobroker_to_irq()) run only from there.
 * Every other call is a blocking method call (sd-bus's default 25 s timeout).
 */
#ifndef GPIOBROKER_H
#define GPIOBROKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup version Version
 * Kept equal to the package version (AC_INIT; tests/client/test-shortpaths checks).
 * The version of the headers a program was built with (these macros) and of the
 * library it runs with (gpiobroker_version()): a program built against a newer
 * header than the library it finds may check the latter before using new calls.
 * @{ */
#define GPIOBROKER_VERSION_MAJOR 0  /**< major version of these headers */
#define GPIOBROKER_VERSION_MINOR 1  /**< minor version */
#define GPIOBROKER_VERSION_MICRO 0  /**< micro version */
/** The headers' version as "MAJOR.MINOR.MICRO". */
#define GPIOBROKER_VERSION_STRING "0.1.0"
/** True if the headers are at least version @p maj.@p min.@p mic. */
#define GPIOBROKER_VERSION_CHECK(maj, min, mic) \
	(GPIOBROKER_VERSION_MAJOR > (maj) || \
	 (GPIOBROKER_VERSION_MAJOR == (maj) && GPIOBROKER_VERSION_MINOR > (min)) || \
	 (GPIOBROKER_VERSION_MAJOR == (maj) && GPIOBROKER_VERSION_MINOR == (min) && \
	  GPIOBROKER_VERSION_MICRO >= (mic)))

/** The running library's version, "MAJOR.MINOR.MICRO" (static storage). */
const char *gpiobroker_version(void);
/** @} */

/* sd-bus and sd-event types, declared so this header needs no systemd headers. */
struct sd_bus;
struct sd_event;

/** @defgroup connection Connection to the broker
 * @{ */

/** One connection to gpiod-broker (opaque). */
struct gpiobroker;

/**
 * Connect to the broker on the system bus.
 * @return the connection, or NULL with errno set.
 *
 * The broker need not be running yet: calls fail with EHOSTDOWN until it is (and
 * with D-Bus activation installed, the first call starts it).
 */
struct gpiobroker *gpiobroker_open(void);

/**
 * Connect to the broker on the bus at @p address (a D-Bus address such as
 * "unix:path=/run/dbus/system_bus_socket"), for tests and unusual setups.
 * @return the connection, or NULL with errno set.
 */
struct gpiobroker *gpiobroker_open_address(const char *address);

/**
 * Use an existing, started sd-bus connection (the library takes its own reference).
 * For programs that already have a bus connection, or tests that made one as
 * another user. The library adds matches for the broker's signals. It opens a
 * private connection as gpiobroker_open() does (the transport is chosen by
 * GPIOBROKER_TRANSPORT); the broker's events then come on that one, so process
 * with gpiobroker_process() (or gpiobroker_attach_event()), not by processing
 * @p bus alone. If @p bus is attached to an sd-event loop already, the private
 * connection is attached to the same loop.
 * @return the connection, or NULL with errno set.
 */
struct gpiobroker *gpiobroker_open_bus(struct sd_bus *bus);

/** How calls reach the broker (gpiobroker_open_transport()). */
enum gpiobroker_transport {
	/** GPIOBROKER_TRANSPORT from the environment ("bus", "p2p" or "auto");
	 *  unset or "auto": the private connection if the broker gives one, else
	 *  the bus. What gpiobroker_open() does. */
	GPIOBROKER_TRANSPORT_AUTO = 0,
	/** Every call through the bus daemon, as before private connections. */
	GPIOBROKER_TRANSPORT_BUS,
	/** The private connection (Manager.OpenConnection): one hop instead of two.
	 *  Opening fails if a running broker refuses it (an older broker: errno
	 *  ENOENT, UnknownMethod); with no broker running yet it is opened when one
	 *  comes. */
	GPIOBROKER_TRANSPORT_P2P,
};

/**
 * Connect to the broker on the bus at @p address (NULL: the system bus), talking
 * to it as @p transport says.
 *
 * With a private connection, the library keeps the bus connection too: the
 * private one carries the identity of the bus connection that opened it, lives
 * as long as it, and after a broker restart is opened again to the new broker
 * (calls go over the bus in between). The broker releases the managed requests
 * of the connection when either closes.
 * @return the connection, or NULL with errno set.
 */
struct gpiobroker *gpiobroker_open_transport(const char *address,
					     enum gpiobroker_transport transport);

/**
 * Connect to the broker on another host, as busctl -H does: @p host is
 * [USER@]HOST[:PORT] (HOST a name, an IPv4 address or an [IPv6] address in
 * brackets). The library runs "ssh -xT HOST systemd-stdio-bridge" with SSH's
 * keepalive on (ServerAliveInterval 5, ServerAliveCountMax 3), so ssh's own
 * configuration (keys, ~/.ssh/config, known hosts) applies. The broker sees the
 * SSH login user, and its policy applies to that user as to a local one.
 *
 * An SSH link cannot carry file descriptors: there is no private connection
 * (gpiobroker_get_transport() says GPIOBROKER_TRANSPORT_BUS; GPIOBROKER_TRANSPORT=p2p
 * makes this fail with errno EOPNOTSUPP), a request with
 * GPIOBROKER_REQUEST_DIRECT fails with NoFdPassing, and one with
 * GPIOBROKER_REQUEST_DIRECT_OR_BUS is made on the bus. gpiobroker_get_fd() is an
 * epoll fd from the start, the same across gpiobroker_reconnect().
 *
 * When the link is lost (ssh exits: its connection closed at once; a link gone
 * silent after about 20 s, when 3 keepalive probes 5 s apart went unanswered),
 * every request and watch of the handle gets GPIOBROKER_EVENT_BROKER_GONE with the
 * detail "the connection to the bus was lost", then gpiobroker_process(),
 * gpiobroker_wait() and every call fail with -ENOTCONN, and
 * gpiobroker_is_connected() is false. The broker
 * releases the managed requests to their safe state when it notices (at once when
 * the connection closes; for a silent link after sshd's ClientAliveInterval x
 * ClientAliveCountMax). See gpiobroker_reconnect().
 * @return the connection, or NULL with errno set.
 */
struct gpiobroker *gpiobroker_open_host(const char *host);

/**
 * Connect to the broker on the system bus of the local container @p machine (a
 * name systemd-machined knows), as busctl -M does. Usually needs root. As for a
 * host, gpiobroker_get_fd() is an epoll fd from the start.
 * @return the connection, or NULL with errno set.
 */
struct gpiobroker *gpiobroker_open_machine(const char *machine);

/** Whether the bus connection is up: false once the link is lost (see gpiobroker_open_host()). */
bool gpiobroker_is_connected(struct gpiobroker *b);

/** Flags of gpiobroker_reconnect(). */
enum gpiobroker_reconnect_flags {
	/**
	 * Also make again each request and watch whose handle the program still has:
	 * a managed request is requested again with the lines, label and settings it
	 * was made with and the values and directions set since; a persistent one (or
	 * one opened by path) is found again at its path if nobody released it; a
	 * watch is made again. Each handle made again gets
	 * GPIOBROKER_EVENT_BROKER_RESTARTED (its path may have changed); one that could
	 * not be stays gone, and is counted in the return value.
	 */
	GPIOBROKER_RECONNECT_REQUESTS = 1 << 0,
};

/**
 * After the link was lost: open a new connection to what @p b was opened to (the
 * same host, machine, address or system bus). Does nothing if still connected. Not
 * for connections from gpiobroker_open_bus() (-EOPNOTSUPP). What the broker did
 * meanwhile is the broker's: edges while the link was down are not reported, and
 * outputs were at their safe state until they are requested again.
 * Must not be called from an event handler.
 * @return with GPIOBROKER_RECONNECT_REQUESTS the number of requests and watches
 * that could not be made again (0: all of them), else 0; or -errno (the link is
 * still down: try again later).
 */
int gpiobroker_reconnect(struct gpiobroker *b, unsigned int flags);

/** gpiobroker_open_bus() on @p transport. */
struct gpiobroker *gpiobroker_open_bus_transport(struct sd_bus *bus,
						 enum gpiobroker_transport transport);

/**
 * The transport in use now: GPIOBROKER_TRANSPORT_P2P while a private connection
 * is open, else GPIOBROKER_TRANSPORT_BUS.
 */
enum gpiobroker_transport gpiobroker_get_transport(struct gpiobroker *b);

/**
 * Close the connection. Request handles still open are freed without being
 * released: managed requests are released by the broker as the connection leaves
 * the bus, persistent ones stay held. NULL is ignored.
 * Must not be called from an event handler.
 */
void gpiobroker_close(struct gpiobroker *b);

/**
 * The connection's bus sd-bus object (borrowed), to read broker properties
 * directly. It is the bus connection even when calls go over a private one.
 */
struct sd_bus *gpiobroker_get_bus(struct gpiobroker *b);

/**
 * The D-Bus error name of the last failed call on @p b, e.g.
 * "org.gpiodbroker1.Error.Busy"; NULL if the last call succeeded or failed
 * locally (then errno says why). Valid until the next call on @p b.
 */
const char *gpiobroker_last_error_name(struct gpiobroker *b);

/**
 * The broker's message for the last failed call on @p b (for Busy: who holds the
 * line), or for local failures strerror(); NULL if the last call succeeded.
 * Valid until the next call on @p b.
 */
const char *gpiobroker_last_error_message(struct gpiobroker *b);

/**
 * Limit every blocking call on @p b (requests, values, lookups...) to @p usec
 * microseconds; 0 restores sd-bus's default (25 s). A call that times out fails
 * with -ETIMEDOUT (the broker may still carry it out: a timed-out request may be
 * held until the connection closes). The setting belongs to the bus connection:
 * with gpiobroker_open_bus() it is the caller's sd_bus's method-call timeout.
 * @return 0 or -errno.
 */
int gpiobroker_set_call_timeout(struct gpiobroker *b, uint64_t usec);

/** The call timeout in µs (sd-bus's default if never set), or 0 if it cannot be read. */
uint64_t gpiobroker_get_call_timeout(struct gpiobroker *b);

/** @} */

/** @defgroup settings Line settings
 * @{ */

/** Direction of a line. */
enum gpiobroker_direction {
	GPIOBROKER_DIRECTION_AS_IS = 0, /**< leave as it is */
	GPIOBROKER_DIRECTION_INPUT,     /**< input */
	GPIOBROKER_DIRECTION_OUTPUT,    /**< output, driven to gpiobroker_line_settings.value */
};

/** Edge detection; an event's edge is RISING or FALLING. */
enum gpiobroker_edge {
	GPIOBROKER_EDGE_NONE = 0, /**< no events */
	GPIOBROKER_EDGE_RISING,   /**< inactive to active */
	GPIOBROKER_EDGE_FALLING,  /**< active to inactive */
	GPIOBROKER_EDGE_BOTH,     /**< both */
};

/** Bias (pull). */
enum gpiobroker_bias {
	GPIOBROKER_BIAS_AS_IS = 0,  /**< leave as it is */
	GPIOBROKER_BIAS_DISABLED,   /**< no pull */
	GPIOBROKER_BIAS_PULL_UP,    /**< pull-up */
	GPIOBROKER_BIAS_PULL_DOWN,  /**< pull-down */
};

/** Output drive. */
enum gpiobroker_drive {
	GPIOBROKER_DRIVE_PUSH_PULL = 0, /**< push-pull (default) */
	GPIOBROKER_DRIVE_OPEN_DRAIN,    /**< open drain */
	GPIOBROKER_DRIVE_OPEN_SOURCE,   /**< open source */
};

/** Clock of event timestamps. */
enum gpiobroker_event_clock {
	GPIOBROKER_CLOCK_MONOTONIC = 0, /**< CLOCK_MONOTONIC (default) */
	GPIOBROKER_CLOCK_REALTIME,      /**< CLOCK_REALTIME */
	GPIOBROKER_CLOCK_HTE,           /**< hardware timestamp engine */
};

/**
 * Settings of one line, as the broker's per-line settings (a{sv}) in
 * Manager.Request and Request.Reconfigure.
 *
 * A public struct: always start from gpiobroker_line_settings_init(), which sets
 * every field to its default, so that code keeps compiling and meaning the same
 * when fields are added. Fields left at their default are not sent, so the broker's
 * defaults (and, for Reconfigure, the line's current settings) apply to them.
 */
struct gpiobroker_line_settings {
	enum gpiobroker_direction direction; /**< default AS_IS */
	int value;                           /**< initial output value (logical, after active_low); sent only for outputs */
	enum gpiobroker_edge edge;           /**< default NONE; needs INPUT */
	enum gpiobroker_bias bias;           /**< default AS_IS */
	enum gpiobroker_drive drive;         /**< default PUSH_PULL; others need OUTPUT */
	bool active_low;                     /**< default false */
	unsigned int debounce_us;            /**< default 0; needs INPUT */
	enum gpiobroker_event_clock event_clock; /**< default MONOTONIC */
};

/** Set every field of @p s to its default (as-is direction, value 0, no edges...). */
void gpiobroker_line_settings_init(struct gpiobroker_line_settings *s);

/** @} */

/** @defgroup request Requesting lines
 * @{ */

/** Lines held through the broker (opaque): one Request object of the broker. */
struct gpiobroker_request;

/** Flags of gpiobroker_request_array(). */
enum gpiobroker_request_flags {
	/**
	 * Persistent: the request belongs to the caller's uid and stays held after
	 * the connection closes, until released (for scripts and CLIs whose processes
	 * exit between steps). Default: managed, released when the connection leaves
	 * the bus however it leaves, like devm_gpio_request().
	 */
	GPIOBROKER_REQUEST_PERSISTENT = 1 << 0,
	/**
	 * Direct: the broker hands this process the kernel line fds of the request
	 * (where the policy says "direct = yes", gpiod-broker.policy(5)), and
	 * gpiobroker_get_value(s)() and gpiobroker_set_value(s)() become one ioctl on
	 * them, edges are read from them; no broker in the path. Everything else
	 * (reconfigure, direction, free) still goes through the broker, which checks
	 * the policy and keeps the settings it restores after a restart. The broker
	 * reads no edges of a direct request: its lines have no watchers, and a
	 * refusal is the request's error (EACCES: no "direct = yes"; EBUSY: the line
	 * has watchers). Managed only: not with GPIOBROKER_REQUEST_PERSISTENT.
	 * See gpiobroker_request_is_direct() and, for event loops, gpiobroker_get_fd().
	 */
	GPIOBROKER_REQUEST_DIRECT = 1 << 1,
	/**
	 * Direct if the broker grants it, else the same request on the bus: if the
	 * direct request fails for any reason (policy, watchers, a broker without
	 * direct requests), it is made again without GPIOBROKER_REQUEST_DIRECT, and
	 * that outcome is returned. gpiobroker_request_is_direct() tells which.
	 */
	GPIOBROKER_REQUEST_DIRECT_OR_BUS = 1 << 2,
};

/**
 * gpio_request(): request one line.
 * @param line  alias, line name, CHIP:OFFSET or line object path.
 * @param label the consumer shown by the kernel and the broker (1-31 printable ASCII).
 * @param s     settings, or NULL for the defaults (as-is).
 * @return the request (managed), or NULL with errno set (see the error table).
 */
struct gpiobroker_request *gpiobroker_request(struct gpiobroker *b, const char *line,
					      const char *label,
					      const struct gpiobroker_line_settings *s);

/**
 * gpio_request_array(): request @p n lines atomically: either all are held, or
 * none is when the error arrives. Index i of the request is @p lines[i].
 * @param settings  NULL (all defaults) or @p n settings.
 * @param flags     0 or GPIOBROKER_REQUEST_PERSISTENT.
 * @return the request, or NULL with errno set.
 */
struct gpiobroker_request *gpiobroker_request_array(struct gpiobroker *b, size_t n,
						    const char *const lines[],
						    const struct gpiobroker_line_settings settings[],
						    const char *label, unsigned int flags);

/**
 * The short path for an output, as the kernel's
 * gpiod_get(dev, "reset", GPIOD_OUT_LOW): request @p line as an output driven to
 * @p value (logical, 0 or 1) from the moment it is held, with every other setting
 * at its default. A program drives a line in two calls:
 * @code
 * struct gpiobroker_request *reset = gpiobroker_request_output(b, "reset", "my-app", 0);
 * gpiobroker_set_value(reset, 0, 1);
 * @endcode
 * @return the request (managed, one line at index 0), or NULL with errno set.
 */
struct gpiobroker_request *gpiobroker_request_output(struct gpiobroker *b, const char *line,
						     const char *label, int value);

/**
 * The short path for an input (GPIOD_IN): request @p line as an input with edge
 * detection @p edges (GPIOBROKER_EDGE_NONE for none); events then go to the
 * handler given to gpiobroker_to_irq().
 * @return the request (managed, one line at index 0), or NULL with errno set
 * (EINVAL: @p edges out of range).
 */
struct gpiobroker_request *gpiobroker_request_input(struct gpiobroker *b, const char *line,
						    const char *label, enum gpiobroker_edge edges);

/**
 * Completion of gpiobroker_request_array_async(). @p req is the new request (the
 * callee owns it, as if returned by gpiobroker_request_array()) and @p error 0; or
 * @p req is NULL and @p error a negative errno, with the broker's error on the
 * connection (gpiobroker_last_error_name()) for the duration of the call.
 */
typedef void (*gpiobroker_request_handler)(struct gpiobroker *b, struct gpiobroker_request *req,
					   int error, void *userdata);

/**
 * gpiobroker_request_array() without waiting: the call is sent, and @p handler runs
 * from gpiobroker_process() (or the attached loop) when the broker answers, within
 * the call timeout (gpiobroker_set_call_timeout()): an event loop never blocks on a
 * request. If gpiobroker_close() comes first, the handler is never called (the
 * request, if the broker made it, is released with the connection).
 * @return 0 if sent (the handler will run once), or -errno (it will not).
 */
int gpiobroker_request_array_async(struct gpiobroker *b, size_t n, const char *const lines[],
				   const struct gpiobroker_line_settings settings[],
				   const char *label, unsigned int flags,
				   gpiobroker_request_handler handler, void *userdata);

/**
 * Use an existing request by its object path, e.g. a persistent request made by
 * another process of the same user (the broker decides whether this caller may use
 * it; here nothing is checked but that it exists).
 * @return a handle, or NULL with errno set (ENOENT: no such request).
 */
struct gpiobroker_request *gpiobroker_request_open(struct gpiobroker *b, const char *path);

/**
 * gpio_free(): release the lines (they are back with the kernel when this returns)
 * and free the handle. The handle is freed even if the release fails.
 * May be called from the request's own event handler. NULL is ignored (returns 0).
 * @return 0, or a negative errno if the broker refused (the error is then on the
 * connection: gpiobroker_last_error_name()).
 */
int gpiobroker_free(struct gpiobroker_request *req);

/**
 * Free the handle but leave the request held: a persistent request stays until
 * someone releases it, a managed one until the connection closes. NULL is ignored.
 */
void gpiobroker_request_close(struct gpiobroker_request *req);

/** The request's object path ("/org/gpiodbroker1/request/N"); valid while @p req is. */
const char *gpiobroker_request_get_path(const struct gpiobroker_request *req);

/** Number of lines in the request. */
size_t gpiobroker_request_get_num_lines(const struct gpiobroker_request *req);

/** Chip name ("gpiochipN") of line @p index, or NULL (errno EINVAL) if out of range. */
const char *gpiobroker_request_get_chip(const struct gpiobroker_request *req, size_t index);

/** Offset of line @p index on its chip, or -EINVAL. */
int gpiobroker_request_get_offset(const struct gpiobroker_request *req, size_t index);

/** Whether the request is persistent. */
bool gpiobroker_request_is_persistent(const struct gpiobroker_request *req);

/**
 * Whether this handle holds the request's line fds (GPIOBROKER_REQUEST_DIRECT
 * granted): values by ioctl, edges read here. False for a handle from
 * gpiobroker_request_open() (the fds go only to the connection that made it).
 */
bool gpiobroker_request_is_direct(const struct gpiobroker_request *req);

/** The connection the request handle belongs to. */
struct gpiobroker *gpiobroker_request_get_broker(const struct gpiobroker_request *req);

/** @} */

/** @defgroup values Directions and values
 * Values are logical (active_low applied) 0 or 1.
 * @{ */

/** gpio_direction_input(): line @p index becomes an input. 0 or -errno. */
int gpiobroker_direction_input(struct gpiobroker_request *req, unsigned int index);

/** gpio_direction_output(): line @p index becomes an output driven to @p value, in one step. */
int gpiobroker_direction_output(struct gpiobroker_request *req, unsigned int index, int value);

/** gpio_get_value(): 0 or 1, or -errno. */
int gpiobroker_get_value(struct gpiobroker_request *req, unsigned int index);

/** gpio_set_value(): 0 or -errno (-EPERM, NotOutput, on an input). */
int gpiobroker_set_value(struct gpiobroker_request *req, unsigned int index, int value);

/**
 * Read @p n lines at once. @p idx NULL: lines 0..n-1 (n may then be
 * gpiobroker_request_get_num_lines()). @p values receives n values 0/1.
 * @return 0 or -errno.
 */
int gpiobroker_get_values(struct gpiobroker_request *req, size_t n, const unsigned int idx[],
			  int values[]);

/** Set @p n lines at once (all or none); @p idx NULL: lines 0..n-1. 0 or -errno. */
int gpiobroker_set_values(struct gpiobroker_request *req, size_t n, const unsigned int idx[],
			  const int values[]);

/**
 * Change settings of @p n lines (@p idx NULL: lines 0..n-1). Only the fields of
 * @p settings[i] that differ from the defaults are changed (see
 * gpiobroker_line_settings); switching to output takes settings[i].value.
 * @return 0 or -errno.
 */
int gpiobroker_reconfigure(struct gpiobroker_request *req, size_t n, const unsigned int idx[],
			   const struct gpiobroker_line_settings settings[]);

/** @} */

/** @defgroup events Edge events (gpio_to_irq)
 * @{ */

/** What an event reports. */
enum gpiobroker_event_type {
	GPIOBROKER_EVENT_EDGE = 1,   /**< an edge on a line of the request */
	GPIOBROKER_EVENT_CHIP_GONE,  /**< a chip of the request was unplugged; only release works now */
	GPIOBROKER_EVENT_REVOKED,    /**< a policy reload revoked the request; it is gone */
	GPIOBROKER_EVENT_BROKER_GONE,/**< the broker left the bus; the request is gone, unless BROKER_RESTARTED follows */
	/**
	 * The line's level when the subscription began (gpiobroker_event_get_value()),
	 * before any edge: a watch's first event, and a request's first per
	 * edge-detecting line when asked for with GPIOBROKER_IRQ_INITIAL_STATE. Comes
	 * again when a watched line's source changes (a holder came or went): edges in
	 * between belonged to nobody. gpiobroker_event_is_initial() is true for it.
	 */
	GPIOBROKER_EVENT_INITIAL_STATE,
	/**
	 * After GPIOBROKER_EVENT_BROKER_GONE: a new broker took the request over (a
	 * crash or "systemctl restart" under systemd, where the request's lines stay in
	 * the fd store; see gpiod-broker(8), RESTARTS). The request is held as before,
	 * under the same path, and its events come again, numbered on from the old
	 * broker's; edges the old broker had read and not sent when it died are
	 * counted in gpiobroker_event_get_lost() of the next edge. Comes to watch
	 * handlers too (a watch the new broker took over; its INITIAL_STATE follows).
	 * Comes only to handlers that kept the request or watch after BROKER_GONE.
	 */
	GPIOBROKER_EVENT_BROKER_RESTARTED,
	/**
	 * A direct request only: a policy reload no longer allows it, but the kernel
	 * cannot take back the line fds this process holds, so the broker asks it to
	 * let go (gpiobroker_event_get_detail(): the reason). The request stays until
	 * gpiobroker_free() (always allowed) or the connection closes; calls through
	 * the broker are checked against the new policy as always, the fds keep working.
	 */
	GPIOBROKER_EVENT_REVOKE_PENDING,
	/**
	 * After GPIOBROKER_EVENT_CHIP_GONE: the same device came back (its udev
	 * identity: gpiod-broker.policy(5), CHIPS BY IDENTITY), under the chip name
	 * gpiobroker_event_get_detail() gives, and the broker gave it back: a watch
	 * watches again, and a persistent request whose entry says restore-on-replug =
	 * yes holds its lines again with their settings and values. The handle's
	 * chip names (gpiobroker_watch_get_chip(), gpiobroker_request_get_chip()) are
	 * the new one from now on; INITIAL_STATE follows (a watch; a request's
	 * edge-detecting lines). A request not given back stays gone.
	 */
	GPIOBROKER_EVENT_CHIP_BACK,
};

/** One event, passed to the handler (opaque; valid only during the call). */
struct gpiobroker_event;

/**
 * Event handler. Runs from gpiobroker_process() (or the attached sd-event loop).
 * It may call anything on the request, including gpiobroker_free(req).
 */
typedef void (*gpiobroker_irq_handler)(struct gpiobroker_request *req,
				       const struct gpiobroker_event *ev, void *userdata);

/**
 * gpio_to_irq() + request_irq(): deliver the request's events to @p handler.
 * Edges are those asked for in the settings (edge != NONE). For a persistent
 * request this also makes this connection the receiver of its events (Subscribe).
 * Replaces a previous handler; @p handler NULL stops delivery (events are then
 * counted as lost to the next handler).
 *
 * Edge events that arrived before a handler was set are not delivered; they are
 * counted in the next event's lost count. For a request made by this handle, loss
 * counts from the first event; for one opened with gpiobroker_request_open(), from
 * the first event after this call (earlier history belongs to someone else).
 * @return 0 or -errno.
 */
int gpiobroker_to_irq(struct gpiobroker_request *req, gpiobroker_irq_handler handler,
		      void *userdata);

/** Flags of gpiobroker_to_irq_flags(). */
enum gpiobroker_irq_flags {
	/**
	 * Also deliver the initial state (GPIOBROKER_EVENT_INITIAL_STATE) of each line
	 * with edge detection, before its first edge. The broker sends it right after
	 * the request is made (or, for a persistent request, subscribed); if it arrived
	 * before this call, the handler is called with it from this call.
	 */
	GPIOBROKER_IRQ_INITIAL_STATE = 1 << 0,
};

/**
 * gpiobroker_to_irq() with @p flags (0 or GPIOBROKER_IRQ_INITIAL_STATE). Without
 * the flag, handlers never see GPIOBROKER_EVENT_INITIAL_STATE, so handlers written
 * before it existed keep working.
 * @return 0 or -errno (-EINVAL: unknown flags).
 */
int gpiobroker_to_irq_flags(struct gpiobroker_request *req, gpiobroker_irq_handler handler,
			    void *userdata, unsigned int flags);

/** The event's type. */
enum gpiobroker_event_type gpiobroker_event_get_type(const struct gpiobroker_event *ev);
/** EDGE: index of the line in the request. */
unsigned int gpiobroker_event_get_index(const struct gpiobroker_event *ev);
/** EDGE: offset of the line on its chip. */
unsigned int gpiobroker_event_get_offset(const struct gpiobroker_event *ev);
/** EDGE: GPIOBROKER_EDGE_RISING or GPIOBROKER_EDGE_FALLING. */
enum gpiobroker_edge gpiobroker_event_get_edge(const struct gpiobroker_event *ev);
/** EDGE: the kernel's timestamp in ns (clock: the line's event_clock). */
uint64_t gpiobroker_event_get_timestamp_ns(const struct gpiobroker_event *ev);
/** EDGE: the kernel's sequence number of the event in its chip request. */
uint64_t gpiobroker_event_get_global_seqno(const struct gpiobroker_event *ev);
/** EDGE: the kernel's sequence number of the event on its line. */
uint64_t gpiobroker_event_get_line_seqno(const struct gpiobroker_event *ev);
/** EDGE: the broker's sequence number of the event in this request (1, 2, ...). */
uint64_t gpiobroker_event_get_seqno(const struct gpiobroker_event *ev);
/**
 * EDGE: events lost just before this one: those the broker reported lost
 * (EventsLost: the kernel's buffer overflowed) plus gaps in the broker's seqno
 * (lost on the bus, or arrived while no handler was set). 0 normally.
 */
uint64_t gpiobroker_event_get_lost(const struct gpiobroker_event *ev);
/** True for GPIOBROKER_EVENT_INITIAL_STATE: the level, not an edge. */
bool gpiobroker_event_is_initial(const struct gpiobroker_event *ev);
/**
 * INITIAL_STATE: the level (logical, 0 or 1); EDGE: the level the edge led to
 * (1 after rising); otherwise -EINVAL. Timestamp (gpiobroker_event_get_timestamp_ns())
 * of an initial state: when the broker read it, on the line's event clock.
 */
int gpiobroker_event_get_value(const struct gpiobroker_event *ev);
/** CHIP_GONE: the chip's name; CHIP_BACK: its name now; REVOKED, REVOKE_PENDING: the
 * broker's reason; otherwise NULL. */
const char *gpiobroker_event_get_detail(const struct gpiobroker_event *ev);

/** Total events lost so far as seen by this handle (the sum of the lost counts). */
uint64_t gpiobroker_request_get_events_lost(const struct gpiobroker_request *req);

/** @} */

/** @defgroup watch Watching a line without holding it
 * A watch receives a line's level and edges while someone else (or nobody) holds
 * it: the edges the holder's settings produce, with the same kernel timestamps and
 * sequence numbers the holder sees. A line nobody holds is requested by the broker
 * for its watchers (input, both edges) and handed over as soon as someone requests
 * it. Watching needs the policy's watch-users or watch-groups, and a line has at
 * most max-watchers watchers (gpiod-broker.policy(5)).
 * @{ */

/** A watch of one line (opaque): one Watch object of the broker. */
struct gpiobroker_watch;

/**
 * Watch handler: as gpiobroker_irq_handler. Events: INITIAL_STATE first, then
 * EDGE (index 0), CHIP_GONE (and CHIP_BACK if the same device comes back), BROKER_GONE,
 * and after a broker restart that took the
 * watch over BROKER_RESTARTED and INITIAL_STATE again. It may call
 * gpiobroker_watch_close(w).
 */
typedef void (*gpiobroker_watch_handler)(struct gpiobroker_watch *w,
					 const struct gpiobroker_event *ev, void *userdata);

/**
 * Manager.Watch(): watch @p line (alias, name, CHIP:OFFSET or path). The handler
 * runs from gpiobroker_process() (or the attached loop); its first event is the
 * line's level. Like a managed request, a watch ends when the connection closes.
 * Events are acknowledged automatically (flow control: a program that stops
 * processing loses its own events, counted in gpiobroker_event_get_lost()).
 * @return the watch, or NULL with errno set (EACCES: no watch permission; EBUSY:
 * max-watchers reached, or the line is used outside the broker or is an output
 * nobody holds).
 */
struct gpiobroker_watch *gpiobroker_watch(struct gpiobroker *b, const char *line,
					  gpiobroker_watch_handler handler, void *userdata);

/** Stop watching and free the handle (also from its own handler). 0 or -errno. */
int gpiobroker_watch_close(struct gpiobroker_watch *w);
/** The watch's object path ("/org/gpiodbroker1/watch/N"). */
const char *gpiobroker_watch_get_path(const struct gpiobroker_watch *w);
/** The watched line's chip name. */
const char *gpiobroker_watch_get_chip(const struct gpiobroker_watch *w);
/** The watched line's offset. */
unsigned int gpiobroker_watch_get_offset(const struct gpiobroker_watch *w);
/** Total events lost so far as seen by this handle. */
uint64_t gpiobroker_watch_get_events_lost(const struct gpiobroker_watch *w);
/** The connection the watch belongs to. */
struct gpiobroker *gpiobroker_watch_get_broker(const struct gpiobroker_watch *w);

/** @} */

/** @defgroup loop Event-loop integration
 * @{ */

/**
 * The file descriptor to poll. Unless the transport is GPIOBROKER_TRANSPORT_BUS
 * it is an epoll fd holding the bus, the private connection and the line fds of
 * direct requests (GPIOBROKER_REQUEST_DIRECT), the same fd for the handle's whole
 * life. On the bus transport it is the bus connection's fd until the first direct
 * request, and from then on an epoll fd over the bus connection and every line fd:
 * ask for it again after the first direct request. gpiobroker_get_events() is
 * POLLIN for an epoll fd; gpiobroker_process() reads everything behind it and
 * gpiobroker_attach_event() attaches all of it.
 */
int gpiobroker_get_fd(struct gpiobroker *b);
/**
 * The poll events (POLLIN, POLLOUT) to wait for on gpiobroker_get_fd(). Call it
 * before each poll: it also brings the epoll set up to date.
 */
int gpiobroker_get_events(struct gpiobroker *b);
/**
 * When to call gpiobroker_process() at the latest, as an absolute CLOCK_MONOTONIC
 * time in µs (UINT64_MAX: no timeout; 0: now), as sd_bus_get_timeout().
 * @return 0 or -errno.
 */
int gpiobroker_get_timeout(struct gpiobroker *b, uint64_t *usec);
/**
 * Process everything pending on the connection (both, with a private one),
 * running event handlers.
 * Does not block. @return number of messages processed, or -errno.
 */
int gpiobroker_process(struct gpiobroker *b);
/**
 * Wait at most @p timeout_us (UINT64_MAX: forever) for something to process.
 * @return >0 ready, 0 timed out, -errno.
 */
int gpiobroker_wait(struct gpiobroker *b, uint64_t timeout_us);
/**
 * The fd to poll for @p req's events alone, as libgpiod's
 * gpiod_line_request_get_fd(): for a direct request (GPIOBROKER_REQUEST_DIRECT)
 * whose lines are on one chip, its kernel line fd itself, so that an edge is one
 * poll() and one read() away, nothing between; for any other request,
 * gpiobroker_get_fd(), since its events come over the connection with everyone
 * else's. Poll it for POLLIN, then call gpiobroker_request_process().
 * @return the fd (the request's: do not close it), -EXDEV for a direct request
 * over several chips (use gpiobroker_get_fd()), -EINVAL.
 */
int gpiobroker_request_get_fd(struct gpiobroker_request *req);
/**
 * Process what gpiobroker_request_get_fd() has ready, running @p req's handler:
 * for a direct request, the edges on its line fds; for any other,
 * gpiobroker_process(). Does not block. @return events or messages handled, or
 * -errno.
 */
int gpiobroker_request_process(struct gpiobroker_request *req);
/**
 * Attach the connection to an sd-event loop (NULL: the thread's default) at
 * @p priority. Unlike sd-bus's default, the connection stays open when the loop
 * exits (so managed requests stay held until gpiobroker_close()).
 */
int gpiobroker_attach_event(struct gpiobroker *b, struct sd_event *e, int priority);
/** Detach it again. */
int gpiobroker_detach_event(struct gpiobroker *b);

/** @} */

/** @defgroup lookup Lines and requests
 * @{ */

/**
 * Manager.FindLine(): resolve a line reference without requesting it.
 * @param path,chip  NULL or receive malloc'ed strings (line object path, chip name).
 * @param offset     NULL or receives the offset.
 * @return 0 or -errno (-ENOENT: no such line).
 */
int gpiobroker_find_line(struct gpiobroker *b, const char *line, char **path, char **chip,
			 unsigned int *offset);

/** One entry of gpiobroker_list_requests(). */
struct gpiobroker_request_info {
	char *path;       /**< request object path */
	char *label;      /**< its label */
	bool persistent;  /**< persistent or managed */
	uid_t owner_uid;  /**< owner's uid */
	char *owner;      /**< owner's unique bus name, "" if none (persistent, unsubscribed) */
};

/**
 * Manager.ListRequests(). @p out receives an array to free with
 * gpiobroker_request_info_free(). @return the number of entries, or -errno.
 */
int gpiobroker_list_requests(struct gpiobroker *b, struct gpiobroker_request_info **out);

/** Free what gpiobroker_list_requests() returned. */
void gpiobroker_request_info_free(struct gpiobroker_request_info *info, size_t n);

/** @} */

/** @defgroup lineinfo Line info
 * What the broker knows of a line, whoever holds it: libgpiod's gpiod_line_info and
 * its line-info watch, through the broker's Line object (which follows the kernel's
 * line-info watch, so changes made outside the broker are seen too).
 * @{ */

/** A snapshot of one line's info (opaque). */
struct gpiobroker_line_info;

/**
 * Read @p line's info (alias, name, CHIP:OFFSET or path) now.
 * @return the info, to free with gpiobroker_line_info_free(), or NULL with errno
 * set (ENOENT: no such line).
 */
struct gpiobroker_line_info *gpiobroker_line_info_get(struct gpiobroker *b, const char *line);
/** Free @p info; NULL is ignored. */
void gpiobroker_line_info_free(struct gpiobroker_line_info *info);
/** Whether the line is in use (by the broker for someone, or by another consumer). */
bool gpiobroker_line_info_is_used(const struct gpiobroker_line_info *info);
/** The kernel's consumer label ("" if unused). */
const char *gpiobroker_line_info_get_consumer(const struct gpiobroker_line_info *info);
/** The policy's alias of the line ("" if none). */
const char *gpiobroker_line_info_get_alias(const struct gpiobroker_line_info *info);
/** The kernel's line name ("" if unnamed). */
const char *gpiobroker_line_info_get_name(const struct gpiobroker_line_info *info);
/** The chip's name ("gpiochipN"). */
const char *gpiobroker_line_info_get_chip(const struct gpiobroker_line_info *info);
/** The offset on the chip. */
unsigned int gpiobroker_line_info_get_offset(const struct gpiobroker_line_info *info);
/** INPUT or OUTPUT (AS_IS if the broker reported something else). */
enum gpiobroker_direction gpiobroker_line_info_get_direction(const struct gpiobroker_line_info *info);
/** Label of the broker request holding the line ("" if none held through the broker). */
const char *gpiobroker_line_info_get_request_label(const struct gpiobroker_line_info *info);

/** A watch of a line's info (opaque). */
struct gpiobroker_line_info_watch;

/**
 * Line-info change handler: @p info is the line's info after the change (valid only
 * during the call). Runs from gpiobroker_process(); it may call
 * gpiobroker_line_info_unwatch(w).
 */
typedef void (*gpiobroker_line_info_handler)(struct gpiobroker_line_info_watch *w,
					     const struct gpiobroker_line_info *info,
					     void *userdata);

/**
 * Call @p handler whenever the broker reports a change of @p line's info
 * (PropertiesChanged on its Line object: requested, released, reconfigured, by
 * anyone). Needs no permission on the line, holds nothing.
 * @return the watch, or NULL with errno set (ENOENT: no such line).
 */
struct gpiobroker_line_info_watch *gpiobroker_line_info_watch(struct gpiobroker *b,
							      const char *line,
							      gpiobroker_line_info_handler handler,
							      void *userdata);
/** Stop the watch and free it (before gpiobroker_close() of its connection); NULL is ignored. */
void gpiobroker_line_info_unwatch(struct gpiobroker_line_info_watch *w);

/** @} */

#ifdef __cplusplus
}
#endif

#endif
