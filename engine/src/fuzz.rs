//! Seeds and sizes of the engine's property tests.
//!
//! `cargo test` (so `make test` and CI) runs each property test with its
//! own fixed seed and case count: the same cases on every run, so a
//! commit passes or fails the same way on every clone. `make fuzz`
//! explores instead: it sets `V6BENCH_FUZZ_SEED` (a new seed each run)
//! and `V6BENCH_FUZZ_SCALE` (that many times the cases). A failing test
//! prints the seed it used; a case found that way is kept as an explicit
//! test of its own (README, "Tests").

/// A small deterministic generator (xorshift64).
pub struct XorShift(pub u64);

impl XorShift {
    /// The generator of a property test: `V6BENCH_FUZZ_SEED` if set (a
    /// whole number, 0 is taken as 1), else the test's `fixed` seed.
    pub fn for_test(fixed: u64) -> Self {
        let seed = std::env::var("V6BENCH_FUZZ_SEED").ok().and_then(|s| s.trim().parse::<u64>().ok()).unwrap_or(fixed).max(1);
        println!("property test seed {seed} (V6BENCH_FUZZ_SEED={seed} repeats it)");
        XorShift(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A whole number in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A property test's case count: `n`, times `V6BENCH_FUZZ_SCALE` if set (≥ 1).
pub fn cases(n: u64) -> u64 {
    n * std::env::var("V6BENCH_FUZZ_SCALE").ok().and_then(|s| s.trim().parse::<u64>().ok()).unwrap_or(1).max(1)
}
