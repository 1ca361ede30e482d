#!/bin/sh
# make check: the daemon's layers depend downwards only (tools/check-layers).
exec "${srcdir:-.}/tools/check-layers" "$PWD"
