//! Failed commands read as the command line speaks: flags rather than API field names, no SDK
//! type names, the API's error shape on stderr with `--json`, and connection options refused
//! where they would be ignored.

use huddle_tests::cli::Huddle;
use huddle_tests::{TestDaemon, ADMIN};
use serde_json::Value;

#[tokio::test]
async fn errors_name_the_flag_and_come_as_json_with_json() {
    let d = TestDaemon::start_with(|s| s.tasks.max_wait_ms = 1_000).await;
    let coord = d.team("qa").await;
    let h = Huddle::new(&d.url, &coord.token, "qa");

    let (code, err) = h.fails(&["inbox", "--wait", "5s"]).await;
    assert_eq!(code, 1);
    assert!(
        err.contains("`--wait` must be at most 1s, got 5s (400 invalid_field)"),
        "in the flag's units: {err}"
    );
    assert!(!err.contains("waitMs"), "{err}");

    let (_, err) = h.fails(&["--json", "inbox", "--wait", "5s"]).await;
    let body: Value = serde_json::from_str(err.trim()).expect("one JSON document on stderr");
    assert_eq!(body["error"]["code"], "invalid_field");
    assert_eq!(
        body["error"]["message"], "`--wait` must be at most 1s, got 5s",
        "the message alone: status and code are not repeated in it"
    );

    let (_, err) = Huddle::new(&d.url, ADMIN, "")
        .fails(&["--json", "agent", "ls"])
        .await;
    let body: Value = serde_json::from_str(err.trim()).expect("JSON on stderr");
    assert_eq!(body["error"]["code"], "no_team");
    assert!(!err.contains("ClientBuilder"), "{err}");
}

#[tokio::test]
async fn offline_commands_neither_show_nor_take_connection_options() {
    let d = TestDaemon::start().await;
    let h = Huddle::new(&d.url, ADMIN, "qa");
    for command in ["test", "demo"] {
        let help = h.ok(&[command, "--help"]).await;
        for flag in ["--url", "--token", "--team"] {
            assert!(
                !help.contains(flag),
                "`huddle {command} --help` shows {flag}"
            );
        }
        let (code, err) = h.fails(&[command, "--url", "http://127.0.0.1:1"]).await;
        assert_eq!(code, 2, "{err}");
        let refusal = format!("--url is not used by `huddle {command}`");
        assert!(err.contains(&refusal), "{err}");
    }
    // The environment still configures every other command, and help hides its values.
    let help = h.ok(&["task", "--help"]).await;
    assert!(help.contains("[env: HUDDLE_URL]"), "{help}");
    assert!(!help.contains(&d.url), "{help}");
}

#[tokio::test]
async fn worker_help_names_the_model_settings() {
    let d = TestDaemon::start().await;
    let help = Huddle::new(&d.url, ADMIN, "qa")
        .ok(&["worker", "--help"])
        .await;
    for setting in [
        "HUDDLE_LLM_BASE_URL",
        "HUDDLE_LLM_MODEL",
        "HUDDLE_LLM_API_KEY",
        "[llm]",
    ] {
        assert!(help.contains(setting), "{setting} missing from:\n{help}");
    }
}
