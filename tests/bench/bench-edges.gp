# make bench: the edge latency of every path, kernel timestamp to handler, as the
# share of edges at or below each latency (tests/bench/bench-edges.c writes the
# samples, one block per series, its title first, in its order: libgpiod, the
# relay (the floor of any hop, grey), then direct, private connection and bus, each
# waiting in gpiobroker_wait() and then in its own poll(), drawn dashed; the direct
# request also on its own fd, dotted).
#
#   gnuplot -e "data='bench-edges.dat'; out='bench-edges.svg'" tests/bench/bench-edges.gp
#
# Optional: -e "note='...'" adds a line under the title (the run's conditions).
if (!exists("data") || !exists("out")) {
	print "bench-edges.gp: set data='SAMPLES' and out='FILE.svg' with -e"
	exit status 2
}
if (!exists("note")) note = ""

stats data using 1 nooutput
set terminal svg size 960,600 dynamic enhanced font "sans,13" background "#ffffff"
set output out
set title "Edge latency, kernel timestamp to handler\n{/*0.8 ".note."}"
set xlabel "latency (µs)"
set ylabel "edges at or below (%)"
set logscale x 10
set xrange [50:300000]
set yrange [0:100]
set ytics 10
set grid xtics mxtics ytics
set key inside right bottom opaque box noenhanced
# One colour per path, dashed for the poll() series, dotted for the request's own
# fd: as many as bench-edges.c writes.
array colour[9] = ["#000000", "#8c8c8c", "#1f5fbf", "#1f5fbf", "#1f5fbf", "#d98c00", "#d98c00", "#c0282d", "#c0282d"]
array dash[9] = [1, 1, 1, 2, 3, 1, 2, 1, 2]
if (STATS_blocks != 9) {
	print sprintf("bench-edges.gp: %s has %d series, the colours are for 9", data, STATS_blocks)
	exit status 2
}
plot for [i=1:9] data index i-1 using 1:($2*100) with steps lw 2 lc rgb colour[i] dt dash[i] \
	title columnheader(1)
