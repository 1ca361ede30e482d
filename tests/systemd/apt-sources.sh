# Shell helper (sourced by tools/setup-debian and tests/systemd/build-root): the
# machine's own apt sources, so that nothing names a Debian mirror of its own.
#
# apt_deb_sources: print "URI SUITE" for every enabled "deb" source with component
# main, from the one-line format (sources.list, *.list) and deb822 (*.sources).
apt_deb_sources() {
	for _f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$_f" ] || continue
		sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$_f" | awk '$1 == "deb" {
			for (i = 4; i <= NF; i++) if ($i == "main") { print $2, $3; break } }'
	done
	for _f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$_f" ] || continue
		# Stanzas are separated by blank lines; field names are case-insensitive.
		awk 'function flush() {
			if (types ~ /(^| )deb( |$)/ && comps ~ /(^| )main( |$)/ && enabled != "no") {
				n = split(uris, u, " "); m = split(suites, s, " ")
				for (i = 1; i <= n; i++) for (j = 1; j <= m; j++) print u[i], s[j]
			}
			types = uris = suites = comps = enabled = ""
		}
		/^[ \t]*#/ { next }
		/^[ \t]*$/ { flush(); next }
		{
			key = tolower($1); sub(/:$/, "", key); $1 = ""; sub(/^ +/, "")
			if (key == "types") types = $0
			else if (key == "uris") uris = $0
			else if (key == "suites") suites = $0
			else if (key == "components") comps = $0
			else if (key == "enabled") enabled = tolower($0)
		}
		END { flush() }' "$_f"
	done
}

# apt_mirror SUITE: the URI of the first source carrying SUITE itself (e.g. bookworm).
apt_mirror() {
	apt_deb_sources | awk -v s="$1" '$2 == s { print $1; exit }'
}
