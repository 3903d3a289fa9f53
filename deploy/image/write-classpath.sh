#!/bin/sh
# Prints the runtime's class path as a java @argfile line: our own JARs first, then the third-party ones, each
# group sorted by name. Run once at image build; the class-data archive is valid only for this exact class path.
set -eu
dir=$1
printf -- '-cp '
ls "$dir"/app/*.jar "$dir"/lib/*.jar | LC_ALL=C sort -t/ -k4,4 -s | paste -sd: -
