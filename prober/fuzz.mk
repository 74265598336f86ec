# fuzz.mk: the `fuzz` target, included from the root Makefile.
#
#   make fuzz                      # every fuzz target of the module, 60 s each
#   make fuzz FUZZTIME=10m         # longer
#   make fuzz FUZZ=Parser          # only the targets whose name matches (grep -E)
#
# It finds every `func FuzzXxx` in the _test.go files of the module's
# packages (go list ./..., so the tools module is left out) and runs each
# with `go test -fuzz` for FUZZTIME, one after the other: go test fuzzes
# one target per run, with GOMAXPROCS workers. A failing target does not
# stop the others; the run fails at the end, and go test leaves each
# crasher in the package's testdata/fuzz/<target>/, where it becomes a
# regression test of `make test` once committed. Not part of `make test`.
#
# Go 1.26's fuzz coordinator can fail a target with a bare "context
# deadline exceeded" when -fuzztime ends while a worker is busy
# (golang/go#75804, fixed in Go 1.27). Such a run wrote no crasher; it is
# reported as a flake and does not fail the target. A run that wrote a
# new file under testdata/fuzz/<target>/ always fails.

GO       ?= go
FUZZTIME ?= 60s
FUZZ     ?= .

.PHONY: fuzz
fuzz:
	@failed=""; flaked=""; log=$$(mktemp); rc=$$(mktemp); trap 'rm -f "$$log" "$$rc"' EXIT; \
	for dir in $$($(GO) list -f '{{.Dir}}' ./...); do \
		for t in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u | grep -E '$(FUZZ)'); do \
			echo ">> fuzzing $$t in $${dir#$(CURDIR)/} for $(FUZZTIME)"; \
			before=$$(ls "$$dir/testdata/fuzz/$$t" 2>/dev/null | wc -l); \
			{ $(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) "$$dir" 2>&1; echo $$? > "$$rc"; } | tee "$$log"; \
			if [ "$$(cat "$$rc")" = 0 ]; then continue; fi; \
			after=$$(ls "$$dir/testdata/fuzz/$$t" 2>/dev/null | wc -l); \
			if [ "$$after" = "$$before" ] && grep -q '^    context deadline exceeded$$' "$$log"; then \
				echo ">> $$t: no crasher written, the fuzztime deadline race of golang/go#75804: a flake"; \
				flaked="$$flaked $$t"; \
			else \
				failed="$$failed $$t"; \
			fi; \
		done; \
	done; \
	if [ -n "$$flaked" ]; then echo "fuzz: flaked (golang/go#75804, no crasher):$$flaked"; fi; \
	if [ -n "$$failed" ]; then echo "fuzz: failed:$$failed"; exit 1; fi; \
	echo "fuzz: no target failed"
