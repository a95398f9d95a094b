//! `huddle export` and `huddle import`: a team as JSON Lines, streamed between the daemon and
//! stdout/stdin (or a file), for backup, audit and moving between daemons and backends.

use crate::{output, CliResult, Ctx};
use clap::Args;
use futures::{Stream, StreamExt};
use std::path::PathBuf;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Write to this file (mode 0600) instead of stdout. The file holds token hashes and
    /// webhook secrets: keep it as a secret.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The export to read; stdin when absent.
    pub file: Option<PathBuf>,
    /// The new team's name (default: the name in the file). The name must be free.
    #[arg(long)]
    pub name: Option<String>,
}

/// Streams the `--team` team's export to stdout or `--output`.
pub async fn export(ctx: &Ctx, args: ExportArgs) -> CliResult {
    let team = ctx
        .team
        .as_deref()
        .ok_or("no team: pass --team or set HUDDLE_TEAM")?;
    let mut chunks = Box::pin(ctx.client.export_team(team).await?);
    let mut out: Box<dyn tokio::io::AsyncWrite + Unpin + Send> = match &args.output {
        Some(path) => Box::new(private_file(path).await?),
        None => Box::new(tokio::io::stdout()),
    };
    while let Some(chunk) = chunks.next().await {
        out.write_all(&chunk?).await?;
    }
    out.flush().await?;
    if let Some(path) = &args.output {
        eprintln!("exported team {team} to {}", path.display());
    }
    Ok(())
}

async fn private_file(path: &PathBuf) -> std::io::Result<tokio::fs::File> {
    let mut options = tokio::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    options.mode(0o600);
    options.open(path).await
}

/// Streams an export to the daemon as a new team.
pub async fn import(ctx: &Ctx, args: ImportArgs) -> CliResult {
    let input: Box<dyn AsyncRead + Unpin + Send> = match &args.file {
        Some(path) => Box::new(tokio::fs::File::open(path).await?),
        None => Box::new(tokio::io::stdin()),
    };
    let mut input = BufReader::with_capacity(64 * 1024, input);
    // The first line is the team's record: its name is the default.
    let mut first = Vec::new();
    input.read_until(b'\n', &mut first).await?;
    let name = match args.name {
        Some(name) => name,
        None => file_team_name(&first)?,
    };
    let lines =
        futures::stream::once(async move { Ok::<_, std::io::Error>(first) }).chain(rest_of(input));
    let team = ctx.client.import_team(&name, lines).await?;
    if ctx.json {
        output::json(&team)
    } else {
        output::line(&format!("imported team {}", team.name))
    }
}

fn file_team_name(first: &[u8]) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    let record: serde_json::Value =
        serde_json::from_slice(first).map_err(|e| format!("line 1 is not a team record: {e}"))?;
    match (record["kind"].as_str(), record["name"].as_str()) {
        (Some("team"), Some(name)) => Ok(name.to_string()),
        _ => Err(
            "line 1 is not a team record (an export starts with one); is this an export?".into(),
        ),
    }
}

/// The rest of the input in chunks, as it is read.
fn rest_of(
    input: BufReader<Box<dyn AsyncRead + Unpin + Send>>,
) -> impl Stream<Item = std::io::Result<Vec<u8>>> + Send + 'static {
    futures::stream::unfold(Some(input), |input| async move {
        let mut input = input?;
        let mut chunk = vec![0u8; 64 * 1024];
        match input.read(&mut chunk).await {
            Ok(0) => None,
            Ok(n) => {
                chunk.truncate(n);
                Some((Ok(chunk), Some(input)))
            }
            Err(e) => Some((Err(e), None)),
        }
    })
}
