//! The runner adapters against real pytest, jest, vitest, mocha, go test and cargo runs on the
//! fixture projects in `tests/fixtures/` (one test binary; a module per framework or concern).
//! A missing tool fails loudly: `scripts/install-test-deps` installs them.

mod common;

mod affected;
mod affected_cargo;
mod affected_doctests;
mod affected_graph;
mod cargo;
mod cargo_doctests;
mod cargo_shadowed;
mod coverage;
mod cypress;
mod go;
mod jest;
mod jest_config;
mod jest_odd;
mod jest_projects;
mod jest_wrapper;
mod live;
mod maestro;
mod missing;
mod mocha;
mod mocha8;
mod no_match;
mod node_test;
mod node_test_tsx;
mod output_limits;
mod own_summary;
mod package_managers;
mod pytest;
mod pytest_duplicates;
mod report;
mod runner_args;
mod sandbox;
mod scrub;
mod scrub_encoded;
mod scrub_runs;
mod secrets;
mod tier_playwright;
mod tier_service_pool;
mod tier_services;
mod timeout;
mod timeout_partial;
mod timeout_partial_cargo;
mod vitest;
mod vitest2;
mod vitest_config;
mod vitest_projects;
