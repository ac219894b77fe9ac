# Shortcuts for the commands the docs mention. Nothing here is needed to
# build or test: `go test ./...` is the test command.

FUZZTIME ?= 10m

.PHONY: test race bench fuzz lint api

test:
	go test ./...

race:
	go test -race ./...

# The exported names a user must learn, per package (TestExportedNames).
api:
	go test -run '^TestExportedNames$$' -v . | sed -n '/exported names per package/,/in all/p'

lint:
	test -z "$$(gofmt -l . | grep -v '^testdata/')"
	go vet ./...
	go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

# The benchmarks docs/performance.md quotes.
bench:
	go test ./reducer -run '^$$' -bench 'Ratio/10000' -benchtime 3s -count 10
	go test ./reducer -run '^$$' -bench 'Reduce|Floor|Validate' -benchmem -count 5
	go test ./reducer -run '^$$' -bench 'Fit' -benchmem -count 5
	go test ./redact -run '^$$' -bench RedactScan -benchmem -count 5
	go test ./internal/cli -run '^$$' -bench CLIExplain -benchmem -count 5
	go test ./explain -run '^$$' -bench ExplainBudget -benchmem -count 5
	go test ./internal/cli -run '^$$' -bench CLIExplainBudget -benchmem -count 5
	go test ./journal -run '^$$' -bench VerifySharedPrompt -benchmem -count 5
	# PostgreSQL's rows need PROMPTLOOM_TEST_POSTGRES (see docs/postgres.md).
	go test ./eventlog/sqlite ./eventlog/postgres -run '^$$' -bench Append -benchmem -benchtime 1s -count 3

# Each fuzz target for FUZZTIME (go test runs one -fuzz target at a time).
# Minimising a new input stops the other counters; 10s keeps it short.
fuzz:
	go test ./options -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s
	go test ./options -run '^$$' -fuzz '^FuzzWellFormed$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s
	go test ./options -run '^$$' -fuzz '^FuzzEach$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s
	go test ./manifest -run '^$$' -fuzz '^FuzzReadValidate$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s
	go test ./manifest -run '^$$' -fuzz '^FuzzMetadataRedacted$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s
	go test ./redact -run '^$$' -fuzz '^FuzzRedact$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s
	go test ./explain -run '^$$' -fuzz '^FuzzRoundTrip$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s
	go test ./journal -run '^$$' -fuzz '^FuzzVerify$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s
	go test ./payload -run '^$$' -fuzz '^FuzzExtract$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s
	go test ./internal/canon -run '^$$' -fuzz '^FuzzEncode$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s
	go test ./internal/cli -run '^$$' -fuzz '^FuzzCLIText$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s
	go test ./internal/textsafe -run '^$$' -fuzz '^FuzzLine$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s
