//! A custom worker: claims `TEST-*` tasks, tells the coordinator what it is doing, and
//! completes each task with a result. Configured like the `huddle` CLI, logging by default:
//!
//! ```sh
//! HUDDLE_URL=http://127.0.0.1:7700 HUDDLE_TEAM=qa HUDDLE_TOKEN=<a tester's token> \
//!   cargo run -p huddle-sdk --example worker
//! ```
//!
//! `HUDDLE_LOG` filters the log (`info` by default; `huddle_sdk=debug` for every request).

use huddle_sdk::wire::{PostMessage, Role, Task};
use huddle_sdk::{Client, HandlerResult, TaskContext, Worker};
use serde_json::json;

async fn count_files(task: Task, ctx: TaskContext) -> HandlerResult {
    let files = task.metadata["files"].as_array().map_or(0, Vec::len);
    let note = PostMessage {
        to: "coordinator".into(),
        kind: "impl_progress".into(),
        summary: format!("{}: looking at {files} files", task.id),
        data: json!({ "files": files }),
    };
    ctx.client().post_message(&note).await?;
    Ok(json!({ "files": files }))
}

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
    let stats = Worker::new(client, count_files)
        .role(Role::Tester)
        .run()
        .await?;
    tracing::info!("stopped after {} tasks", stats.completed + stats.failed);
    Ok(())
}
