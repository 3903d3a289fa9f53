#!/bin/sh
# Prints the runtime's class path as a java @argfile line: our own JARs (runtime/app/), then the third-party ones
# (runtime/lib/), each group in C-locale name order. Run once at image build: the class-data archive is valid only
# for this exact class path, so it must not depend on how a directory happens to list.
set -eu
dir=$1
export LC_ALL=C
path=
for jar in "$dir"/runtime/app/*.jar "$dir"/runtime/lib/*.jar; do
  path=${path:+$path:}$jar
done
printf -- '-cp %s\n' "$path"
