# bash completion for gpiobrokerctl(1): commands, options (read from each command's
# --help, so they stay in step with the binary), option values, and what the broker
# knows: line names, policy aliases, chips and request ids.
# Plain bash: it needs neither bash-completion's helpers nor a running broker (with
# no broker, only commands, options and values are offered).

_gpiobrokerctl_ctl() {
	# The same binary and bus as the command line being completed.
	command "${_gpiobrokerctl_bin:-gpiobrokerctl}" ${_gpiobrokerctl_addr:+--address "$_gpiobrokerctl_addr"} \
		${_gpiobrokerctl_host:+--host "$_gpiobrokerctl_host"} \
		${_gpiobrokerctl_machine:+--machine "$_gpiobrokerctl_machine"} "$@" 2>/dev/null
}

# Line names and aliases, from "info --unquoted": TAB-separated rows whose third
# field is the name column and whose attributes may hold alias=NAME.
_gpiobrokerctl_lines() {
	_gpiobrokerctl_ctl info --unquoted | awk -F '\t' '
		/^\tline / {
			name = $3; sub(/ +$/, "", name)
			if (name != "unnamed") print name
			if (match($4, /alias=[^ ]+/)) print substr($4, RSTART + 6, RLENGTH - 6)
		}'
}

_gpiobrokerctl_requests() {
	_gpiobrokerctl_ctl requests | cut -f1
}

_gpiobrokerctl_chips() {
	_gpiobrokerctl_ctl detect | awk '{ print $1; l = $2; gsub(/[][]/, "", l); print l }'
}

_gpiobrokerctl() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local commands="detect info find status request requests release get set reconfigure monitor watch notify wait slices"
	local i cmd="" words=""
	_gpiobrokerctl_bin=${COMP_WORDS[0]}
	_gpiobrokerctl_addr=""
	_gpiobrokerctl_host=""
	_gpiobrokerctl_machine=""

	# -H and -M may come after the command too: the whole line is read for them.
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-H | --host) _gpiobrokerctl_host=${COMP_WORDS[i + 1]}; ((i++)) ;;
		--host=*) _gpiobrokerctl_host=${COMP_WORDS[i]#--host=} ;;
		-M | --machine) _gpiobrokerctl_machine=${COMP_WORDS[i + 1]}; ((i++)) ;;
		--machine=*) _gpiobrokerctl_machine=${COMP_WORDS[i]#--machine=} ;;
		esac
	done
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--address) _gpiobrokerctl_addr=${COMP_WORDS[i + 1]}; ((i++)) ;;
		--address=*) _gpiobrokerctl_addr=${COMP_WORDS[i]#--address=} ;;
		-H | --host | -M | --machine) ((i++)) ;;
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--address --host --machine --help --version" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$commands" -- "$cur"))
		fi
		return 0
	fi

	case $prev in
	-b | --bias) COMPREPLY=($(compgen -W "as-is disabled pull-up pull-down" -- "$cur")); return 0 ;;
	-d | --drive) COMPREPLY=($(compgen -W "push-pull open-drain open-source" -- "$cur")); return 0 ;;
	-e | --edges | --edge)
		if [[ $cmd == notify ]]; then
			COMPREPLY=($(compgen -W "requested released reconfigured" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "none rising falling both" -- "$cur"))
		fi
		return 0 ;;
	--event) COMPREPLY=($(compgen -W "requested released reconfigured" -- "$cur")); return 0 ;;
	-E | --event-clock | --clock) COMPREPLY=($(compgen -W "monotonic realtime hte" -- "$cur")); return 0 ;;
	-c | --chip) COMPREPLY=($(compgen -W "$(_gpiobrokerctl_chips)" -- "$cur")); return 0 ;;
	-C | --consumer | --label | -F | --format | -n | --num-events | --count | -p | \
	--debounce-period | --hold-period | -t | --timeout | --idle-timeout | --address | \
	-H | --host | -M | --machine)
		return 0 ;;
	esac

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_gpiobrokerctl_ctl "$cmd" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u)" -- "$cur"))
		return 0
	fi
	case $cmd in
	release | reconfigure) words="$(_gpiobrokerctl_requests) $(_gpiobrokerctl_lines)" ;;
	get | monitor) words="$(_gpiobrokerctl_requests) $(_gpiobrokerctl_lines)" ;;
	info | find | watch | notify | request) words=$(_gpiobrokerctl_lines) ;;
	set)
		# LINE=VALUE: the name, then the value ("=" may be a word of its own, as
		# COMP_WORDBREAKS has it by default).
		if [[ $prev == = ]]; then
			COMPREPLY=($(compgen -W "0 1 active inactive on off" -- "$cur"))
		elif [[ $cur == *=* ]]; then
			COMPREPLY=($(compgen -P "${cur%%=*}=" -W "0 1 active inactive on off" -- "${cur#*=}"))
		else
			COMPREPLY=($(compgen -S = -W "$(_gpiobrokerctl_lines)" -- "$cur"))
			compopt -o nospace 2>/dev/null
		fi
		return 0 ;;
	*) return 0 ;;
	esac
	COMPREPLY=($(compgen -W "$words" -- "$cur"))
	return 0
}

complete -F _gpiobrokerctl gpiobrokerctl
