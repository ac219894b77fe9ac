#!/bin/sh
# The manual gateway benchmark (not run by CI): installs Portkey's gateway
# (the version package.json pins, @hono/node-server held by its override)
# into bench/gateway/node_modules, builds the promptloom CLI and the driver
# into out/, and runs the driver, which prints the three gateways and the
# upstream called directly side by side, with the ratios of this run, and
# verifies the proxy's transcript. Needs node and npm. Extra arguments go
# to the driver (-rounds, -calls, -duration, -clients, -profile FILE, ...).
#
# REV=COMMIT builds the CLI and the driver from that commit (git archive)
# instead of the working tree; BASELINE=COMMIT builds that commit's CLI
# too and measures it beside the first, as "promptloom (baseline)".
set -eu
cd "$(dirname "$0")"
npm install --no-audit --no-fund --no-package-lock --silent
mkdir -p out
here=$(pwd)
# build COMMIT DIR: the CLI (and, with a third argument, the driver) of
# COMMIT, from a copy of the tree at it, this driver's source put in.
build() {
	rm -rf "out/src-$1" && mkdir -p "out/src-$1"
	git -C ../.. archive "$1" | tar -x -C "out/src-$1"
	mkdir -p "out/src-$1/bench/gateway" && cp main.go "out/src-$1/bench/gateway/"
	(cd "out/src-$1" && go build -o "$here/$2" ./cmd/promptloom)
	if [ $# -gt 2 ]; then (cd "out/src-$1" && go build -o "$here/$3" ./bench/gateway); fi
	# Not left in the tree: tests that walk the repository would read it.
	rm -rf "out/src-$1"
}
if [ -n "${REV:-}" ]; then
	build "$REV" out/promptloom out/gateway
	echo "promptloom at $(git rev-parse --short "$REV")"
else
	go build -o out/promptloom ../../cmd/promptloom
	go build -o out/gateway .
	echo "promptloom from the working tree at $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- ../.. || echo ', with changes not committed')"
fi
if [ -n "${BASELINE:-}" ]; then
	build "$BASELINE" out/promptloom-baseline
	echo "baseline at $(git rev-parse --short "$BASELINE")"
	set -- -baseline out/promptloom-baseline "$@"
fi
exec out/gateway "$@"
