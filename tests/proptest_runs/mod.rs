//! How the property tests of this folder choose their runs: a fixed seed by default, so that CI
//! runs the same cases every time and a failure is reproducible; the test's own seed variable
//! set to `random` (or a number) explores further, and `PROPTEST_CASES` runs more cases.

use proptest::test_runner::{Config, RngSeed};

/// The runs of a property test: `cases` cases (or `PROPTEST_CASES`) from the fixed `seed`, or
/// from what `seed_var` says (`random`, or a number).
pub fn config(seed_var: &str, cases: u32, seed: u64) -> Config {
    let cases = match std::env::var("PROPTEST_CASES") {
        Ok(n) => n.parse().expect("PROPTEST_CASES: a number"),
        Err(_) => cases,
    };
    let rng_seed = match std::env::var(seed_var).as_deref() {
        Ok("random") => RngSeed::Random,
        Ok(n) => RngSeed::Fixed(
            n.parse()
                .unwrap_or_else(|_| panic!("{seed_var}: a number or random")),
        ),
        Err(_) => RngSeed::Fixed(seed),
    };
    Config {
        cases,
        rng_seed,
        ..Config::default()
    }
}
