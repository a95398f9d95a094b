//! The e2e tier on a pytest-playwright project that records video itself
//! (tests/fixtures/tiers-playwright-video: `addopts = --video=on`), run for real on Debian's
//! Chromium. The caller's `PYTEST_ADDOPTS` (`-k` deselecting a failing test) and the
//! project's `--video=on` survive huddle's options; `capture = on` adds every test's
//! screenshot and trace, the default only the failing test's. The files land in the run's own
//! directory beside its report.json, which lists them with the raw report (capped per run).
//!
//! Playwright records video through an ffmpeg of its own, which cannot be downloaded here: the
//! test gives it Debian's (`scripts/install-test-deps` installs it) at the place Playwright
//! looks, `$PLAYWRIGHT_BROWSERS_PATH/ffmpeg-<revision>/ffmpeg-linux`.

use crate::common::*;
use huddle_runners::artifacts::{Artifact, ArtifactKind};
use huddle_runners::limits::OutputLimits;
use huddle_runners::tiers::e2e_capture::Capture;
use huddle_runners::tiers::pipeline::{run_tiers, TiersOptions};
use huddle_runners::tiers::Tier;
use huddle_runners::{Framework, RunOptions};
use std::path::Path;

/// A browsers directory holding only Debian's ffmpeg, under the revision the installed
/// Playwright wants (its driver's browsers.json). Asked of the fixture's own `.venv` (the
/// Python that runs its tests, `scripts/install-test-deps`), not whatever `python3` is first
/// on the PATH.
fn ffmpeg_for_playwright(dir: &Path) -> String {
    require_tool("ffmpeg");
    let python = fixture_source("tiers-playwright-video").join(".venv/bin/python");
    let out = std::process::Command::new(&python)
        .args([
            "-c",
            "import json, os, playwright; d = os.path.dirname(playwright.__file__); \
             b = json.load(open(os.path.join(d, 'driver/package/browsers.json')))['browsers']; \
             print(next(x['revision'] for x in b if x['name'] == 'ffmpeg'))",
        ])
        .output()
        .unwrap_or_else(|e| panic!("{} runs (scripts/install-test-deps): {e}", python.display()));
    assert!(
        out.status.success(),
        "playwright's browsers.json: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let revision = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let target = dir.join(format!("ffmpeg-{revision}"));
    std::fs::create_dir_all(&target).unwrap();
    let ffmpeg = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("ffmpeg"))
        .find(|p| p.is_file())
        .unwrap();
    std::os::unix::fs::symlink(ffmpeg, target.join("ffmpeg-linux")).unwrap();
    dir.display().to_string()
}

/// The e2e tier's artefacts, as `<test dir>/<file name>` (test dirs shortened to their test).
fn artefacts(report_artifacts: &[String]) -> Vec<String> {
    sorted(
        report_artifacts
            .iter()
            .map(|a| {
                let mut parts = a.rsplit('/');
                let file = parts.next().unwrap_or_default();
                let dir = parts.next().unwrap_or_default();
                let test = if dir.contains("greeting") {
                    "greeting"
                } else {
                    "farewell"
                };
                format!("{test}/{file}")
            })
            .collect(),
    )
}

/// The e2e tier's artifacts (as [`artefacts`] names them) and its one run's report.json
/// list of them, checked against the run directory.
async fn e2e(
    project: &Path,
    browsers: &str,
    capture: Option<Capture>,
    cap: Option<u64>,
) -> (Vec<String>, Vec<Artifact>) {
    let mut output = OutputLimits::default();
    if let Some(c) = cap {
        output.artifacts = c;
    }
    let opts = TiersOptions {
        run: RunOptions {
            env: vec![
                ("PYTEST_ADDOPTS".into(), "-k 'not left_out'".into()),
                ("PLAYWRIGHT_BROWSERS_PATH".into(), browsers.into()),
            ],
            output,
            ..opts()
        },
        capture,
        ..TiersOptions::default()
    };
    let report = run_tiers(project, Framework::Pytest, &opts)
        .await
        .expect("tiers run");
    let tier = report
        .tiers
        .iter()
        .find(|t| t.tier == Tier::E2e)
        .expect("an e2e tier");
    assert_eq!(tier.skipped, None, "{:?}", tier.skip_detail);
    let s = tier.summary;
    assert_eq!(
        (s.passed, s.failed, s.error),
        (1, 1, 0),
        "the user's -k keeps the third test out: {:#?}",
        tier.reports
    );
    let [run] = tier.runs.as_slice() else {
        panic!("one e2e run: {:?}", tier.runs)
    };
    let written: serde_json::Value = serde_json::from_slice(
        &std::fs::read(run.run_dir.join("report.json")).expect("report.json"),
    )
    .unwrap();
    let listed: Vec<Artifact> =
        serde_json::from_value(written["artifacts"].clone()).expect("report.json's artifacts");
    assert_eq!(listed, tier.reports[0].artifacts);
    for a in &listed {
        assert_eq!(
            run.run_dir.join(&a.path).is_file(),
            !a.removed,
            "{a:?} in {}",
            run.run_dir.display()
        );
    }
    (artefacts(&tier.artifacts), listed)
}

#[tokio::test]
async fn the_projects_video_and_the_users_addopts_survive_and_capture_on_adds_the_rest() {
    require_pytest();
    require_tool("chromium");
    let browsers = tempfile::tempdir().unwrap();
    let browsers = ffmpeg_for_playwright(browsers.path());
    let project = fixture("tiers-playwright-video");

    let (on, listed) = e2e(project.path(), &browsers, Some(Capture::On), None).await;
    let kinds = |k: ArtifactKind| listed.iter().filter(|a| a.kind == k).count();
    assert_eq!(
        (
            kinds(ArtifactKind::Screenshot),
            kinds(ArtifactKind::Trace),
            kinds(ArtifactKind::Video),
            kinds(ArtifactKind::RawReport)
        ),
        (2, 2, 2, 1),
        "report.json lists every file and pytest's raw report: {listed:#?}"
    );
    assert!(
        listed.iter().all(|a| !a.removed && a.bytes > 0),
        "{listed:#?}"
    );
    assert_eq!(
        on,
        [
            "farewell/test-failed-1.png",
            "farewell/trace.zip",
            "farewell/video.webm",
            "greeting/test-finished-1.png",
            "greeting/trace.zip",
            "greeting/video.webm",
        ],
        "capture on: every screenshot and trace; --video=on (the project's) over huddle's \
         retain-on-failure"
    );

    let (default, _) = e2e(project.path(), &browsers, None, None).await;
    assert_eq!(
        default,
        [
            "farewell/test-failed-1.png",
            "farewell/trace.zip",
            "farewell/video.webm",
            "greeting/video.webm",
        ],
        "default capture: the failure's screenshot and trace; the project's video of both"
    );

    // A cap of 0 bytes keeps nothing, and says so file by file.
    let (_, capped) = e2e(project.path(), &browsers, None, Some(0)).await;
    assert_eq!(capped.len(), 5, "{capped:#?}");
    assert!(capped.iter().all(|a| a.removed), "{capped:#?}");
}
