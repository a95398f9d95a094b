//! A coordinator: posts `TEST-001` and `QARUN-001` (blocked by it), follows the team's events
//! and prints each task's verdict when it closes (docs/coordinator-guide.md explains why it
//! waits for the task, not for the `test_result` message). Configured like the `huddle` CLI:
//!
//! ```sh
//! HUDDLE_URL=http://127.0.0.1:7700 HUDDLE_TEAM=qa HUDDLE_TOKEN=<a coordinator's token> \
//!   cargo run -p huddle-sdk --example coordinator
//! ```

use futures::StreamExt;
use huddle_sdk::wire::{NewTask, TaskStatus};
use huddle_sdk::{Client, StreamOptions};
use std::collections::BTreeSet;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let filter = std::env::var("HUDDLE_LOG").unwrap_or_else(|_| "info".into());
    tracing_subscriber::fmt().with_env_filter(filter).init();
    let var = |name: &str| std::env::var(name).map_err(|_| format!("set {name}"));
    let url = std::env::var("HUDDLE_URL").unwrap_or_else(|_| "http://127.0.0.1:7700".into());
    let client = Client::builder(&url)
        .token(&var("HUDDLE_TOKEN")?)
        .team(&var("HUDDLE_TEAM")?)
        .build()?;
    let task = |id: &str, subject: &str, blocked_by: &[&str]| NewTask {
        id: Some(id.into()),
        subject: subject.into(),
        blocked_by: blocked_by.iter().map(|s| s.to_string()).collect(),
        ..NewTask::default()
    };
    client
        .create_tasks(&[
            task("TEST-001", "Make the unit tests pass", &[]),
            task("QARUN-001", "QA run of layer L1", &["TEST-001"]),
        ])
        .await?;
    tracing::info!("posted TEST-001 and QARUN-001; waiting for the verdicts");
    let mut waiting: BTreeSet<&str> = ["TEST-001", "QARUN-001"].into();
    let options = StreamOptions {
        kind: Some("task.".into()),
        ..StreamOptions::default()
    };
    let mut events = client.stream_events(&options)?;
    while let Some(event) = events.next().await {
        let task: huddle_sdk::wire::Task = serde_json::from_value(event?.data)?;
        let closed = matches!(
            task.status,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        );
        if !closed || !waiting.remove(task.id.as_str()) {
            continue;
        }
        match (&task.status, &task.result) {
            // The result holds the test_result's numbers.
            (TaskStatus::Completed, Some(result)) => {
                println!("{}: completed, pass rate {}%", task.id, result["passRate"]);
            }
            _ => println!(
                "{}: {} ({})",
                task.id,
                task.status,
                task.failure_reason.as_deref().unwrap_or("no reason given")
            ),
        }
        if task.status != TaskStatus::Completed || waiting.is_empty() {
            break;
        }
    }
    Ok(())
}
