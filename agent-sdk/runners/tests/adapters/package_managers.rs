//! jest and vitest installed by each package manager, against the runner's own summary: a pnpm
//! workspace (whose `.bin` entries are `#!/bin/sh` shims, not JavaScript), yarn classic and
//! yarn berry with the node_modules linker (npm's layout is every other node fixture's). The
//! framework's own run starts the `.bin` entry itself, as `pnpm test` / `yarn test` would.

use crate::common::*;
use crate::own_summary::own_summary;
use huddle_runners::{list_tests, run_tests, Framework, Report};
use std::path::Path;

fn huddle_counts(report: &Report) -> (usize, usize, usize, usize) {
    let s = report.summary;
    assert_eq!(s.error, 0, "no errors expected: {:#?}", report.tests);
    (s.passed, s.failed, s.skipped, s.total)
}

/// Runs huddle and the runner itself on `member` of a copy of `fixture`; both must agree on
/// the expected counts, and huddle must have started the package's real entry point.
async fn agrees(
    fixture_name: &str,
    member: &str,
    fw: Framework,
    expected: (usize, usize, usize, usize),
) {
    require_tool("node");
    let copy = fixture(fixture_name);
    let project = copy.path().join(member);
    let report = run_tests(&project, fw, &opts())
        .await
        .unwrap_or_else(|e| panic!("{fixture_name}/{member}: {e}"))
        .report;
    assert_eq!(
        huddle_counts(&report),
        expected,
        "huddle's counts: {:#?}",
        report.tests
    );
    assert_eq!(
        own_summary(&project, fw.name()),
        expected,
        "{fw}'s own summary"
    );
    let entry = report
        .command
        .get(1)
        .map(String::as_str)
        .unwrap_or_default();
    assert!(
        !entry.contains("node_modules/.bin/"),
        "huddle ran the .bin shim instead of the package's entry: {:?}",
        report.command
    );
    let listed = list_tests(&project, fw, &opts()).await.expect("lists");
    assert_eq!(listed.tests.len(), expected.3, "listing: {listed:?}");
}

fn first_line(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn pnpm_workspace_members_run_vitest_and_jest_behind_shell_shims() {
    let src = fixture_source("pnpm-workspace");
    for (member, tool) in [("packages/app", "vitest"), ("packages/lib", "jest")] {
        let shim = src.join(member).join("node_modules/.bin").join(tool);
        assert_eq!(
            first_line(&shim),
            "#!/bin/sh",
            "{} should be pnpm's shell shim: run scripts/install-test-deps",
            shim.display()
        );
    }
    agrees(
        "pnpm-workspace",
        "packages/app",
        Framework::Vitest,
        (2, 1, 1, 4),
    )
    .await;
    agrees(
        "pnpm-workspace",
        "packages/lib",
        Framework::Jest,
        (2, 1, 0, 3),
    )
    .await;
}

#[tokio::test]
async fn yarn_classic_runs_jest() {
    agrees("yarn-classic", "", Framework::Jest, (2, 1, 0, 3)).await;
}

#[tokio::test]
async fn yarn_berry_with_the_node_modules_linker_runs_vitest() {
    let rc = std::fs::read_to_string(fixture_source("yarn-berry").join(".yarnrc.yml")).unwrap();
    assert!(rc.contains("nodeLinker: node-modules"), "{rc}");
    agrees("yarn-berry", "", Framework::Vitest, (2, 1, 1, 4)).await;
}

#[tokio::test]
async fn a_pnpm_member_is_detected_from_its_own_package_json() {
    let copy = fixture("pnpm-workspace");
    let found = huddle_runners::detect::detect(
        &copy.path().join("packages/app"),
        &huddle_runners::Overrides::default(),
    )
    .expect("detects");
    assert_eq!(found.framework, Framework::Vitest);
}
