# Shortcuts for the commands the docs mention. Nothing here is needed to
# build or test: `go test ./...` is the test command.

FUZZTIME ?= 10m

.PHONY: test race bench fuzz lint api errors

test:
	go test ./...

race:
	go test -race ./...

# The exported names a user must learn, per package (TestExportedNames).
api:
	go test -run '^TestExportedNames$$' -v . | sed -n '/exported names per package/,/in all/p'

# docs/errors.md, from the error catalogue (cmd/promptloom/testdata/errors
# and cmd/promptloom/internal/errdoc): every case is run and its output
# written. TestErrorsDoc fails when the committed page is not current.
errors:
	go generate ./cmd/promptloom

lint:
	test -z "$$(gofmt -l . | grep -v '^testdata/')"
	go vet ./...
	go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

# The benchmarks docs/performance.md quotes.
bench:
	go test ./manifest -run '^$$' -bench 'Ratio/10000' -benchtime 3s -count 10
	go test ./manifest -run '^$$' -bench 'Reduce|Floor|Validate' -benchmem -count 5
	go test . -run '^$$' -bench 'Fit' -benchmem -count 5
	go test ./internal/redact -run '^$$' -bench RedactScan -benchmem -count 5
	go test ./cmd/promptloom/internal/cli -run '^$$' -bench CLIExplain -benchmem -count 5
	go test ./explain -run '^$$' -bench ExplainBudget -benchmem -count 5
	go test ./journal -run '^$$' -bench VerifySharedPrompt -benchmem -count 5
	go test ./transport -run '^$$' -bench Transport -benchmem -count 6
	go test ./journal/postgres -run '^$$' -bench FleetAppend -benchmem -benchtime 4000x -count 5
	# PostgreSQL's rows need PROMPTLOOM_TEST_POSTGRES (see docs/postgres.md).
	go test ./eventlog/sqlite ./eventlog/postgres -run '^$$' -bench Append -benchmem -benchtime 1s -count 3

# Each fuzz target of the module for FUZZTIME (go test runs one -fuzz
# target at a time). Minimising a new input stops the other counters; 10s
# keeps it short.
fuzz:
	@grep -rl --include='*_test.go' '^func Fuzz' . | while read f; do \
		for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
			echo "== $$(dirname $$f) $$t"; \
			go test $$(dirname $$f) -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 10s || exit 1; \
		done; \
	done
