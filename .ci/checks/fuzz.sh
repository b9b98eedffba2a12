#!/usr/bin/env bash
# Bounded libFuzzer runs of the protocol decoder, the command parser and the board-to-bus path
# (see fuzz/README.md), where cargo-fuzz and a nightly toolchain are installed. The same properties
# always run on stable in `cargo test` (tests/fuzz_stable.rs), so without nightly this only says so.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: no cargo-fuzz: the properties run on stable in cargo test (tests/fuzz_stable.rs)"
  exit 0
fi
if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz: no nightly toolchain: the properties run on stable in cargo test (tests/fuzz_stable.rs)"
  exit 0
fi

seconds="${FUZZ_SECONDS:-30}"
# The code under test is safe Rust: no sanitizer (faster build), but debug assertions on so
# arithmetic overflow panics.
for target in decoder commands session; do
  echo "fuzz: $target for ${seconds}s"
  cargo +nightly fuzz run --sanitizer none --debug-assertions "$target" -- \
    -max_total_time="$seconds" -rss_limit_mb=1024
done
