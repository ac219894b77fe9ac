#!/bin/sh
# The manual peer benchmark (not run by CI): installs @vscode/prompt-tsx
# (the version package.json pins) into bench/peer/node_modules, builds the
# promptloom CLI, and prints prompt-tsx, explain.Explain and the CLI side by
# side on the same 10,000-fragment workload, with the ratios of this run.
# Needs node and npm. Extra arguments go to the Go driver (-n, -runs,
# -peer-runs).
set -eu
cd "$(dirname "$0")"
npm install --no-audit --no-fund --no-package-lock --silent
mkdir -p out
go build -o out/promptloom ../../cmd/promptloom
go run . "$@"
