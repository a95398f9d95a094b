//! `[tiers]` globs in huddle.toml through `huddle test --tiers --explain`: the pattern that
//! put a file in its tier is named, and a pattern that does not parse is a clear error.

use crate::common::*;
use crate::tiers::tiers_args;
use huddle_cli::test_command::{execute, TestArgs};

const GLOBS: &str = r#"
[tiers]
unit = ["tests/unit"]
integration = ["tests/**/test_prop*.py"]
e2e = ["tests/*/test_page.py"]
"#;

#[tokio::test]
async fn explain_names_the_glob_that_matched() {
    let project = fixture("tiers-python");
    std::fs::write(project.path().join("huddle.toml"), GLOBS).unwrap();
    let out = execute(&TestArgs {
        json: false,
        explain: true,
        ..tiers_args(project.path())
    })
    .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    for line in [
        "  tests/unit/test_text.py — huddle.toml [tiers] unit lists tests/unit",
        "  tests/pbt/test_properties.py — huddle.toml [tiers] integration pattern \
         tests/**/test_prop*.py matches",
        "  tests/e2e/test_page.py — huddle.toml [tiers] e2e pattern tests/*/test_page.py matches",
        "  tests/integration/test_api.py — in the directory integration/",
    ] {
        assert!(out.stdout.contains(line), "{line:?} in:\n{}", out.stdout);
    }
}

#[tokio::test]
async fn a_glob_that_does_not_parse_is_a_clear_error() {
    let project = fixture("tiers-python");
    std::fs::write(
        project.path().join("huddle.toml"),
        "[tiers]\nintegration = [\"tests/[unclosed\"]\n",
    )
    .unwrap();
    let out = execute(&tiers_args(project.path())).await;
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("huddle.toml")
            && out.stderr.contains("[tiers] integration")
            && out.stderr.contains("tests/[unclosed"),
        "{}",
        out.stderr
    );
}
