# Shell helpers for gpio-sim chips (sourced by guest-init, shell tests and the demo).
#
# A chip is described as NAME:LINES[:OFF=LINENAME,...], e.g. "demo:8:0=led,3=button".
# gpio-sim chips are made through configfs: one device directory with one bank, lines
# with names, then "live". The kernel picks the gpiochip number; sim_chip_dev prints it.

GB_SIM_CONFIGFS=/sys/kernel/config/gpio-sim

# sim_chip_add SPEC: create and enable a chip; prints its gpiochip name.
sim_chip_add() {
	_spec=$1
	_name=${_spec%%:*}; _rest=${_spec#*:}
	_lines=${_rest%%:*}
	case "$_rest" in *:*) _names=${_rest#*:} ;; *) _names="" ;; esac
	_dev="$GB_SIM_CONFIGFS/$_name"
	mkdir "$_dev" "$_dev/bank0" || return 1
	echo "$_lines" > "$_dev/bank0/num_lines"
	echo "$_name" > "$_dev/bank0/label"
	_oldifs=$IFS; IFS=,
	for _ln in $_names; do
		mkdir "$_dev/bank0/line${_ln%%=*}"
		echo "${_ln#*=}" > "$_dev/bank0/line${_ln%%=*}/name"
	done
	IFS=$_oldifs
	echo 1 > "$_dev/live" || return 1
	cat "$_dev/bank0/chip_name"
}

# sim_chip_dev NAME: the gpiochipN of a live chip.
sim_chip_dev() { cat "$GB_SIM_CONFIGFS/$1/bank0/chip_name"; }

# sim_line_dir NAME OFFSET: the sysfs directory with the line's "pull" and "value".
sim_line_dir() {
	echo "/sys/devices/platform/$(cat "$GB_SIM_CONFIGFS/$1/dev_name")/$(sim_chip_dev "$1")/sim_gpio$2"
}

# sim_pull NAME OFFSET pull-up|pull-down: drive a simulated input.
sim_pull() { echo "$3" > "$(sim_line_dir "$1" "$2")/pull"; }

# sim_value NAME OFFSET: the level the line is driven to (what an output was set to).
sim_value() { cat "$(sim_line_dir "$1" "$2")/value"; }

# sim_chip_remove NAME: unplug the chip and delete its description.
sim_chip_remove() {
	_dev="$GB_SIM_CONFIGFS/$1"
	echo 0 > "$_dev/live"
	for _l in "$_dev"/bank0/line*; do [ -d "$_l" ] && rmdir "$_l"; done
	rmdir "$_dev/bank0" "$_dev"
}
