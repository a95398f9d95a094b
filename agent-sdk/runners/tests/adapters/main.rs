//! The runner adapters against real pytest, jest, vitest, mocha, go test and cargo runs on the
//! fixture projects in `tests/fixtures/` (one test binary; a module per framework or concern).
//! A missing tool fails loudly: `scripts/install-test-deps` installs them.

mod common;

mod affected;
mod cargo;
mod coverage;
mod go;
mod jest;
mod missing;
mod mocha;
mod pytest;
mod report;
mod scrub;
mod scrub_encoded;
mod scrub_runs;
mod secrets;
mod timeout;
mod vitest;
