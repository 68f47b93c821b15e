# Plain wrapper over CMake: `make demo`, `make test`, `make install`, `make bench`, `make fuzz`.
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 60
CMAKE_FLAGS ?=
PREFIX     ?= /usr/local
DESTDIR    ?=

.PHONY: all deps build asan demo test test-fast install bench fuzz format clean golden-update

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DPFI_SANITIZE=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(ASAN_BUILD) -j$(JOBS)

demo: build
	@bash scripts/demo.sh $(BUILD)/pfi

# pfi, pfid, the man pages, the dataset, the systemd units and the Slurm
# plugin under $(DESTDIR)$(PREFIX) (bin/, share/man/, share/pfi/,
# lib/systemd/system/, lib/pfi/).
install: build
	@DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

# Every test in the ASan+UBSan build, and all but the integration tests
# (CMakeLists.txt: PFI_INTEGRATION_BOTH) in the optimised build too; then
# every fuzzer from its corpus for a fixed seed and number of runs (at most
# 10 s each), so a fuzzer that traps on what it finds fails the suite, and
# the suite's fuzzing is the same on every machine (a prefix of one
# sequence where a slow one hits the time cap first).
FUZZ_TEST_SECONDS ?= 10
FUZZ_TEST_FLAGS ?= -seed=1 -runs=20000
test: build asan
	@cd $(BUILD) && ctest --output-on-failure -j$(JOBS) -LE '^integration$$'
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j$(JOBS)
	@rm -rf $(FUZZ_BUILD)/corpus-fuzz_*
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_TEST_SECONDS) FUZZ_FLAGS="$(FUZZ_TEST_FLAGS)"

# The only way golden expectations change (ctest only compares):
# `make golden-update` for all, `make golden-update GOLDEN="a b"` for some.
golden-update: build
	@bash scripts/golden-update.sh $(BUILD)/pfi $(GOLDEN)

test-fast: build
	@cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

bench: deps
	@cmake -S . -B $(BUILD)-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD)-bench -j$(JOBS)
	@for b in $(BUILD)-bench/bench_*; do "$$b" || exit 1; done

fuzz: deps
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DPFI_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) -j$(JOBS)
	@for f in $(FUZZ_BUILD)/fuzz_*; do \
	  name=$$(basename $$f); corpus=tests/fuzz/corpus/$${name#fuzz_}; \
	  mkdir -p $(FUZZ_BUILD)/corpus-$$name; \
	  echo "fuzz: $$name for $(FUZZ_SECONDS) s"; \
	  "$$f" -max_total_time=$(FUZZ_SECONDS) $(FUZZ_FLAGS) -print_final_stats=1 \
	    $(FUZZ_BUILD)/corpus-$$name $$( [ -d $$corpus ] && echo $$corpus ) \
	    > $(FUZZ_BUILD)/log-$$name.txt 2>&1; status=$$?; \
	  tail -n 8 $(FUZZ_BUILD)/log-$$name.txt; \
	  [ $$status -eq 0 ] || { echo "fuzz: $$name FAILED (see $(FUZZ_BUILD)/log-$$name.txt)"; exit 1; }; \
	done

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(BUILD)-bench
