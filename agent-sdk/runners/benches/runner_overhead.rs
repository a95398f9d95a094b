//! Benchmark (not a test): wall time of the report layer over running each framework's CLI
//! directly, on the repository's fixtures (tests/fixtures/*). For each fixture: one warm-up of
//! each (builds, caches), then alternating runs; the figure is the median of each side and
//! the overhead of `run_tests` (tool probe, reporter flags, parsing, run directory) over the
//! plain CLI running the same tests.
//!
//! `cargo bench -p huddle-runners --bench runner_overhead` — `HUDDLE_BENCH_ROUNDS=N` (default
//! 7), `HUDDLE_BENCH_FIXTURES=jest,go` to choose fixtures. Tools must be installed
//! (scripts/install-test-deps); a missing one skips that fixture with a note.
//!
//! `HUDDLE_BENCH_FIXTURES=pytest-large` is the large-suite scenario (not in the default set:
//! one round takes minutes): a generated pytest project of `HUDDLE_BENCH_LARGE_TESTS` tests
//! (default 50,000: 500 files, some tests parametrized), run natively, through huddle's JUnit
//! path (`PluginPolicy::Never`, the reporter before issue 11) and through huddle's own
//! reporter (`Auto`), interleaved, `HUDDLE_BENCH_LARGE_ROUNDS` rounds (default 3) after one
//! warm-up; each round is printed as it ends, then the medians and overheads.

use huddle_runners::{run_tests, Framework, PluginPolicy, RunOptions};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

struct Case {
    fixture: &'static str,
    framework: Framework,
    plugins: PluginPolicy,
    /// The plain CLI: program and arguments, run in the fixture.
    direct: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        fixture: "pytest",
        framework: Framework::Pytest,
        plugins: PluginPolicy::Never,
        direct: &["python3", "-m", "pytest", "--continue-on-collection-errors"],
    },
    Case {
        fixture: "jest",
        framework: Framework::Jest,
        plugins: PluginPolicy::Auto,
        direct: &["node", "node_modules/.bin/jest", "--ci"],
    },
    Case {
        fixture: "vitest",
        framework: Framework::Vitest,
        plugins: PluginPolicy::Auto,
        direct: &["node", "node_modules/.bin/vitest", "run"],
    },
    Case {
        fixture: "mocha",
        framework: Framework::Mocha,
        plugins: PluginPolicy::Auto,
        direct: &["node", "node_modules/.bin/mocha"],
    },
    Case {
        fixture: "go",
        framework: Framework::Go,
        plugins: PluginPolicy::Auto,
        direct: &["go", "test", "./..."],
    },
    Case {
        fixture: "cargo",
        framework: Framework::Cargo,
        plugins: PluginPolicy::Never,
        direct: &["cargo", "test", "--no-fail-fast"],
    },
    Case {
        fixture: "cargo",
        framework: Framework::Cargo,
        plugins: PluginPolicy::Require,
        direct: &["cargo", "nextest", "run", "--no-fail-fast"],
    },
];

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create copy");
    for entry in std::fs::read_dir(from).expect("read fixture").flatten() {
        let name = entry.file_name();
        if [
            "node_modules",
            "target",
            ".huddle",
            "__pycache__",
            ".pytest_cache",
        ]
        .iter()
        .any(|n| name == *n)
        {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).expect("copy file");
        }
    }
    if from.join("node_modules").is_dir() {
        std::os::unix::fs::symlink(from.join("node_modules"), to.join("node_modules"))
            .expect("link node_modules");
    }
}

fn direct(dir: &Path, argv: &[&str]) -> Duration {
    let start = Instant::now();
    let status = Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    assert!(status.is_ok(), "{argv:?} did not start");
    start.elapsed()
}

async fn layered(dir: &Path, case: &Case) -> Duration {
    let opts = RunOptions {
        plugins: case.plugins,
        ..RunOptions::default()
    };
    let start = Instant::now();
    let outcome = run_tests(dir, case.framework, &opts)
        .await
        .expect("the run is made");
    let elapsed = start.elapsed();
    assert!(
        outcome.report.summary.total >= 12,
        "{:?}",
        outcome.report.summary
    );
    elapsed
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn available(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Writes a pytest project of about `tests` tests: 500 files, each a parametrized test of
/// two cases and plain tests; every file's last test is skipped and one in fifty fails.
fn generate_pytest_project(dir: &Path, tests: usize) -> usize {
    const FILES: usize = 500;
    let per_file = (tests / FILES).max(3);
    std::fs::create_dir_all(dir.join("tests")).expect("create project");
    std::fs::write(dir.join("pytest.ini"), "[pytest]\ntestpaths = tests\n").expect("ini");
    let mut total = 0;
    for f in 0..FILES {
        let mut src = String::from("import pytest\n\n@pytest.mark.parametrize('x', [1, 2])\ndef test_p0(x):\n    assert x > 0\n\n");
        total += 2;
        for t in 1..per_file - 1 {
            if t == per_file - 2 {
                src.push_str("@pytest.mark.skip(reason='generated')\n");
            }
            let want = if (f * per_file + t).is_multiple_of(50) {
                t
            } else {
                t + 1
            };
            src.push_str(&format!(
                "def test_{t}():\n    assert {t} + 1 == {want}\n\n"
            ));
            total += 1;
        }
        std::fs::write(dir.join(format!("tests/test_mod{f:03}.py")), src).expect("write test");
    }
    total
}

async fn large_pytest(rounds: usize) {
    let tests: usize = std::env::var("HUDDLE_BENCH_LARGE_TESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50_000);
    let dir =
        std::env::temp_dir().join(format!("huddle-bench-pytest-large-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let total = generate_pytest_project(&dir, tests);
    let native: &[&str] = &["python3", "-m", "pytest", "--continue-on-collection-errors"];
    let run = |plugins: PluginPolicy| {
        let dir = dir.clone();
        async move {
            let opts = RunOptions {
                plugins,
                timeout: Duration::from_secs(3600),
                ..RunOptions::default()
            };
            let start = Instant::now();
            let outcome = run_tests(&dir, Framework::Pytest, &opts)
                .await
                .expect("the run is made");
            let elapsed = start.elapsed();
            assert_eq!(outcome.report.summary.total, total, "{plugins:?}");
            let _ = std::fs::remove_dir_all(&outcome.run_dir);
            elapsed
        }
    };
    println!("pytest, {total} generated tests: native, huddle JUnit (Never), huddle reporter (Auto), interleaved");
    direct(&dir, native);
    let (mut n, mut j, mut h) = (Vec::new(), Vec::new(), Vec::new());
    let secs = |d: Duration| d.as_secs_f64();
    for round in 1..=rounds {
        n.push(direct(&dir, native));
        j.push(run(PluginPolicy::Never).await);
        h.push(run(PluginPolicy::Auto).await);
        println!(
            "round {round}: native {:.1} s, JUnit {:.1} s, reporter {:.1} s",
            secs(n[round - 1]),
            secs(j[round - 1]),
            secs(h[round - 1])
        );
    }
    let (n, j, h) = (secs(median(n)), secs(median(j)), secs(median(h)));
    println!("| pytest {total} tests | mode | native | huddle | overhead |");
    println!("| --- | --- | ---: | ---: | ---: |");
    for (mode, t) in [("JUnit XML (before)", j), ("huddle reporter (after)", h)] {
        println!(
            "| median of {rounds} | {mode} | {n:.1} s | {t:.1} s | {:+.1} % |",
            (t / n - 1.0) * 100.0
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let rounds: usize = std::env::var("HUDDLE_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    let only: Option<Vec<String>> = std::env::var("HUDDLE_BENCH_FIXTURES")
        .ok()
        .map(|v| v.split(',').map(str::to_string).collect());
    if only
        .as_ref()
        .is_some_and(|o| o.iter().any(|f| f == "pytest-large"))
    {
        let rounds = std::env::var("HUDDLE_BENCH_LARGE_ROUNDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(3);
        large_pytest(rounds).await;
    }
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    println!("report layer overhead, median of {rounds} alternating runs after one warm-up each");
    println!("| fixture | mode | direct CLI | huddle run_tests | overhead |");
    println!("| --- | --- | ---: | ---: | ---: |");
    for case in CASES {
        if only
            .as_ref()
            .is_some_and(|o| !o.iter().any(|f| f == case.fixture))
        {
            continue;
        }
        if !available(case.direct[0]) {
            println!(
                "| {} | skipped: {} not installed | | | |",
                case.fixture, case.direct[0]
            );
            continue;
        }
        let tmp = std::env::temp_dir().join(format!(
            "huddle-bench-{}-{}",
            case.fixture,
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&tmp);
        copy_tree(&fixtures.join(case.fixture), &tmp);
        direct(&tmp, case.direct);
        layered(&tmp, case).await;
        let (mut plain, mut ours) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            plain.push(direct(&tmp, case.direct));
            ours.push(layered(&tmp, case).await);
        }
        let (p, o) = (median(plain), median(ours));
        let overhead = (o.as_secs_f64() / p.as_secs_f64() - 1.0) * 100.0;
        let mode = case.direct[1..].join(" ");
        println!(
            "| {} | {} | {:.0} ms | {:.0} ms | {:+.1} % |",
            case.fixture,
            mode.trim_start_matches("node_modules/.bin/"),
            p.as_secs_f64() * 1000.0,
            o.as_secs_f64() * 1000.0,
            overhead
        );
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
