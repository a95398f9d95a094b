//! `huddle demo` as a real process: it starts `huddled` as a child on a temporary SQLite file,
//! runs a tester and an executor on the bundled sample project and prints the message log —
//! repairing the bug through a configured model (the stub), or showing the `fix_required`
//! path without one; and it says clearly when `huddled` cannot be found.

use huddle_tests::cli::huddle_bin;
use huddle_tests::llm::projects::require_tool;
use huddle_tests::llm::stub::fix;
use huddle_tests::llm::LlmStub;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// `huddled` beside the `huddle` binary, built when missing (scripts/test builds it anyway).
fn huddled_beside(huddle: &Path) -> PathBuf {
    let bin = huddle.with_file_name("huddled");
    if !bin.exists() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = std::process::Command::new(cargo)
            .args([
                "build",
                "--quiet",
                "-p",
                "huddle-daemon",
                "--bin",
                "huddled",
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building huddled failed");
    }
    assert!(
        bin.exists(),
        "{} is missing: run `cargo build --bin huddled`",
        bin.display()
    );
    bin
}

async fn demo(huddle: &Path, env: &[(&str, &str)]) -> (bool, String, String) {
    demo_with(huddle, &[], env).await
}

fn demo_command(huddle: &Path, args: &[&str], env: &[(&str, &str)]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(huddle);
    cmd.args(["demo", "--color", "never", "--timeout", "5m"])
        .args(args)
        .env_remove("HUDDLE_CONFIG")
        .env_remove("HUDDLE_LOG")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    for k in [
        "HUDDLE_LLM_BASE_URL",
        "HUDDLE_LLM_MODEL",
        "HUDDLE_LLM_API_KEY",
        "HUDDLE_URL",
        "HUDDLE_TOKEN",
        "HUDDLE_TEAM",
    ] {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

async fn demo_with(huddle: &Path, args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let out = demo_command(huddle, args, env)
        .output()
        .await
        .expect("huddle demo runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_model_the_demo_shows_the_fix_required_path() {
    require_tool("python3");
    huddled_beside(huddle_bin());
    let (ok, out, err) = demo(huddle_bin(), &[]).await;
    assert!(ok, "demo failed:\n{out}\n{err}");
    for part in [
        "huddled running at http://127.0.0.1:",
        "[fix_required]",
        "HUDDLE_LLM_BASE_URL",
        "[test_result]",
        "## Test cycle TEST-001: FAILED",
        "QARUN-001 stays blocked",
        "### Why they fail",
        "test_ten_percent_discount: `assert",
    ] {
        assert!(out.contains(part), "missing {part:?} in:\n{out}");
    }
    assert_eq!(
        out.matches("HUDDLE_LLM_BASE_URL").count(),
        1,
        "the missing setting is named once:\n{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_demo_prints_where_it_is_and_every_token_that_opens_it() {
    require_tool("python3");
    huddled_beside(huddle_bin());
    let (ok, out, err) = demo_with(huddle_bin(), &["--keep"], &[]).await;
    assert!(ok, "demo failed:\n{out}\n{err}");
    let kept = out
        .lines()
        .find_map(|l| l.strip_prefix("kept "))
        .unwrap_or_else(|| panic!("no kept line in:\n{out}"));
    let dir = Path::new(kept.trim());
    assert!(dir.join("data/huddle.db").is_file());
    assert!(dir.join("project/shop/cart.py").is_file());
    let admin_token = std::fs::read_to_string(dir.join("data/admin-token")).unwrap();
    assert!(!admin_token.trim().is_empty());
    let tokens: Vec<&str> = ["coordinator", "tester", "executor"]
        .iter()
        .map(|name| {
            out.lines()
                .find_map(|l| l.trim().strip_prefix(name).map(str::trim))
                .filter(|t| t.starts_with("hud_"))
                .unwrap_or_else(|| panic!("no {name} token in:\n{out}"))
        })
        .collect();
    assert_eq!(tokens.len(), 3);
    assert!(out.contains("team         demo"), "{out}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_demo_whose_reader_goes_away_stops_quietly_and_cleans_up() {
    require_tool("python3");
    huddled_beside(huddle_bin());
    let mut child = demo_command(huddle_bin(), &[], &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("demo starts");
    let stdout = child.stdout.take().unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
    let first = lines.next_line().await.unwrap().unwrap();
    let data_dir = first
        .split("(data in ")
        .nth(1)
        .and_then(|rest| rest.strip_suffix(')'))
        .map(|d| Path::new(d).parent().unwrap().to_path_buf())
        .unwrap_or_else(|| panic!("no data dir in {first:?}"));
    drop(lines); // `huddle demo | head -1`
    let status = tokio::time::timeout(std::time::Duration::from_secs(120), child.wait())
        .await
        .expect("the demo stops once nobody reads")
        .unwrap();
    let mut stderr = String::new();
    tokio::io::AsyncReadExt::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr)
        .await
        .unwrap();
    assert!(status.success(), "exit {status:?}: {stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
    assert!(!data_dir.exists(), "{} was left behind", data_dir.display());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_model_the_demo_repairs_the_sample_and_runs_the_qa_task() {
    require_tool("python3");
    huddled_beside(huddle_bin());
    let search = "return round(amount - amount * percent / 10, 2)";
    let replace = "return round(amount - amount * percent / 100, 2)";
    let stub = LlmStub::start(
        "sk-demo-key-abcdef0123456789",
        vec![fix(&[("shop/cart.py", search, replace)])],
    )
    .await;
    let env = [
        ("HUDDLE_LLM_BASE_URL", stub.base_url.as_str()),
        ("HUDDLE_LLM_MODEL", "stub-model"),
        ("HUDDLE_LLM_API_KEY", stub.key.as_str()),
    ];
    let (ok, out, err) = demo(huddle_bin(), &env).await;
    assert!(ok, "demo failed:\n{out}\n{err}");
    for part in [
        "model: stub-model",
        "[impl_progress]",
        "## Test cycle TEST-001: PASSED",
        "## QA run (L1) QARUN-001: PASSED",
        "TEST-001: completed   QARUN-001: completed",
        "\"allPassed\":true",
    ] {
        assert!(out.contains(part), "missing {part:?} in:\n{out}");
    }
    assert!(!out.contains("sk-demo-key") && !err.contains("sk-demo-key"));
    assert_eq!(stub.requests().len(), 1);
}

#[tokio::test]
async fn a_missing_huddled_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let lonely = dir.path().join("huddle");
    std::fs::copy(huddle_bin(), &lonely).unwrap();
    let (ok, out, err) = demo(&lonely, &[("PATH", "/nonexistent")]).await;
    assert!(!ok, "{out}");
    assert!(
        err.contains("huddled not found next to") && err.contains("cargo build --bin huddled"),
        "{err}"
    );
}

/// The caller's own daemon settings — a PostgreSQL URL, an admin token too short to start
/// with — never reach the demo's temporary daemon; and `--json` prints JSON only on stdout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_ignores_the_callers_daemon_settings_and_prints_json() {
    require_tool("python3");
    huddled_beside(huddle_bin());
    let hostile = [
        ("HUDDLE_DATABASE_URL", "postgres://nobody@127.0.0.1:1/none"),
        ("HUDDLE_STORAGE_BACKEND", "postgres"),
        ("HUDDLE_ADMIN_TOKEN", "short"),
    ];
    let mut cmd = demo_command(huddle_bin(), &[], &hostile);
    cmd.arg("--json");
    let out = cmd.output().await.expect("huddle demo runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "demo failed:\n{stdout}\n{stderr}");
    assert!(
        stderr.contains("huddled running at http://127.0.0.1:"),
        "the narration is on stderr:\n{stderr}"
    );
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(
        lines.iter().any(|m| m["type"] == "test_result"),
        "the messages are JSON lines:\n{stdout}"
    );
    let summary = lines.last().expect("a summary");
    for id in ["TEST-001", "QARUN-001"] {
        assert!(summary["tasks"][id].is_string(), "{id} in {summary}");
    }
}
