//! One Claude Code session: a scripted model stub of its own, a project whose settings install
//! `huddle hook` for an agent's token, run headless to its end. Sessions of one test share a
//! HOME and a task list id, as the teammates of one Claude Code team on one machine do.

use huddle_tests::cli::huddle_bin;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use tokio::io::AsyncBufReadExt;

fn package_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("claude-code")
}

/// The installed Claude Code, or a loud failure: this test is never skipped.
pub fn require_claude() -> PathBuf {
    let bin = package_dir().join("node_modules/.bin/claude");
    assert!(
        bin.is_file(),
        "@anthropic-ai/claude-code is not installed in tests/claude-code: run scripts/install-test-deps"
    );
    bin
}

/// The machine the teammates share: HOME (Claude Code's task list lives there), the project
/// and where the hook keeps what each session holds.
pub struct Machine {
    pub dir: tempfile::TempDir,
    pub url: String,
    pub team: String,
}

/// What a finished session left: Claude Code's JSON result and what the model was sent.
pub struct Finished {
    pub result: Value,
    /// Every scripted request's last user message, one JSON line each: the tool results.
    pub model_log: String,
}

impl Finished {
    /// The tool results the model read, as one string to search.
    pub fn tool_results(&self) -> String {
        self.model_log
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .flat_map(|l| l["content"].as_array().cloned().unwrap_or_default())
            .filter(|b| b["type"] == "tool_result")
            .map(|b| b.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The hook events the bridge is installed on; `release` adds `SessionEnd`.
pub fn settings(release: bool) -> Value {
    let hook = |event: &str| {
        json!([{ "matcher": "*", "hooks": [{
            "type": "command",
            "command": format!("{} hook {event}", huddle_bin().display()),
        }]}])
    };
    let mut hooks = json!({
        "PreToolUse": [{ "matcher": "TaskUpdate", "hooks": [{
            "type": "command",
            "command": format!("{} hook PreToolUse", huddle_bin().display()),
        }]}],
        "PostToolUse": hook("PostToolUse"),
    });
    if release {
        hooks["SessionEnd"] = json!([{ "hooks": [{
            "type": "command",
            "command": format!("{} hook SessionEnd", huddle_bin().display()),
        }]}]);
    }
    json!({ "hooks": hooks })
}

impl Machine {
    pub fn new(url: &str, team: &str) -> Machine {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "state", "logs"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        Machine {
            dir,
            url: url.to_string(),
            team: team.to_string(),
        }
    }

    /// Runs one session of `token`'s agent in a project of its own (named `name`) with the
    /// bridge installed by `settings`; the model answers with `turns`.
    pub async fn session(
        &self,
        name: &str,
        token: &str,
        settings: &Value,
        turns: Value,
    ) -> Finished {
        self.session_with(name, token, settings, turns, &[]).await
    }

    /// `session` with more arguments for `claude` (`--mcp-config …`).
    pub async fn session_with(
        &self,
        name: &str,
        token: &str,
        settings: &Value,
        turns: Value,
        args: &[String],
    ) -> Finished {
        let claude = require_claude();
        let root = self.dir.path();
        let project = root.join(name);
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        std::fs::write(
            project.join(".claude/settings.json"),
            serde_json::to_vec_pretty(settings).unwrap(),
        )
        .unwrap();
        let script = root.join("logs").join(format!("{name}.script.json"));
        std::fs::write(&script, json!({ "turns": turns }).to_string()).unwrap();
        let log = root.join("logs").join(format!("{name}.model.jsonl"));
        let stub_source =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/claude_code/model_stub.py");
        let mut stub = tokio::process::Command::new("python3")
            .arg(&stub_source)
            .arg(&script)
            .arg(&log)
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("python3 runs the model stub");
        let mut lines = tokio::io::BufReader::new(stub.stdout.take().unwrap()).lines();
        let port = lines
            .next_line()
            .await
            .unwrap()
            .expect("the stub prints its port");

        let mut cmd = tokio::process::Command::new(claude);
        cmd.args(["-p", "Work on the team's tasks.", "--output-format", "json"])
            .args(args)
            .current_dir(&project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", root.join("home"))
            .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}"))
            .env("ANTHROPIC_API_KEY", "sk-ant-test")
            .env("DISABLE_TELEMETRY", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            // Claude Code 2.1 offers its task tools (TaskCreate, TaskUpdate, …) to newer models
            // only when asked; the teammates share one task list, as a team's do.
            .env("CLAUDE_CODE_ENABLE_TODO_TOOLS", "1")
            .env("CLAUDE_CODE_TASK_LIST_ID", &self.team)
            .env("HUDDLE_URL", &self.url)
            .env("HUDDLE_TOKEN", token)
            .env("HUDDLE_TEAM", &self.team)
            .env("HUDDLE_HOOK_STATE_DIR", root.join("state"))
            .stdin(Stdio::null())
            .kill_on_drop(true);
        let out = tokio::time::timeout(std::time::Duration::from_secs(240), cmd.output())
            .await
            .unwrap_or_else(|_| panic!("Claude Code session {name} ran past four minutes"))
            .expect("Claude Code starts");
        assert!(
            out.status.success(),
            "Claude Code session {name} failed: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let result: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{name}: Claude Code's JSON result: {e}: {}",
                String::from_utf8_lossy(&out.stdout)
            )
        });
        assert_eq!(result["is_error"], false, "{name}: {result}");
        Finished {
            result,
            model_log: std::fs::read_to_string(&log).unwrap_or_default(),
        }
    }
}

/// A model turn that calls one tool.
pub fn call(tool: &str, input: Value) -> Value {
    json!([{ "tool": tool, "input": input }])
}

/// The first turn of every script: Claude Code defers its team tools until the model loads them.
pub fn load_team_tools() -> Value {
    call(
        "ToolSearch",
        json!({ "query": "select:TaskCreate,TaskUpdate,SendMessage" }),
    )
}

/// The lead's session creates Claude Code tasks 1..=n; each is mirrored as TEST-00n.
pub async fn lead_creates(machine: &Machine, lead_token: &str, subjects: &[&str]) {
    let mut turns = vec![load_team_tools()];
    for subject in subjects {
        turns.push(call(
            "TaskCreate",
            json!({ "subject": subject, "description": "from the lead" }),
        ));
    }
    machine
        .session("lead", lead_token, &settings(true), Value::Array(turns))
        .await;
}
