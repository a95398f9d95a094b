//! One verdict per checkout: a worker holds an exclusive lock on its project directory for the
//! whole cycle, so a second worker on the same checkout waits (and says so) instead of judging
//! a tree that another worker's fixes change under it.

use super::report::Reporter;
use crate::worker::{HandlerError, TaskContext};
use serde_json::json;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// The held lock; dropping it lets the next worker in.
#[derive(Debug)]
pub(crate) struct CheckoutLock {
    _file: File,
}

/// Takes the checkout's lock (`.huddle/checkout.lock`), waiting while another worker holds it.
/// A file system without locks is logged and goes on unlocked.
pub(crate) async fn lock_checkout(
    project: &Path,
    reporter: &Reporter,
    ctx: &TaskContext,
) -> Result<Option<CheckoutLock>, HandlerError> {
    let path = project.join(".huddle").join("checkout.lock");
    let open = || -> std::io::Result<File> {
        std::fs::create_dir_all(project.join(".huddle"))?;
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
    };
    let mut file = match open() {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!("cannot open {}: {e}; working unlocked", path.display());
            return Ok(None);
        }
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::Error(e)) => {
            tracing::warn!("cannot lock {}: {e}; working unlocked", path.display());
            return Ok(None);
        }
        Err(TryLockError::WouldBlock) => {
            let holder = holder_of(&mut file).await;
            let task = reporter.task_id().to_string();
            tracing::info!("{task}: waiting for the checkout; {holder} is working in it");
            reporter
                .post(
                    "impl_progress",
                    format!("{task}: waiting for the checkout: {holder} is working in it"),
                    json!({"taskId": task, "phase": "waitingForCheckout", "holder": holder}),
                )
                .await;
            let waiting = tokio::task::spawn_blocking(move || file.lock().map(|()| file));
            file = tokio::select! {
                joined = waiting => match joined {
                    Ok(Ok(f)) => f,
                    Ok(Err(e)) => return Err(format!("cannot lock the checkout: {e}").into()),
                    Err(e) => return Err(format!("waiting for the checkout failed: {e}").into()),
                },
                _ = ctx.cancelled() => {
                    return Err("cancelled while waiting for the checkout".into());
                }
            };
        }
    }
    // Who holds it, for the next worker's message (from the start: a worker that waited has
    // read to the end).
    let _ = file.set_len(0);
    let _ = file.seek(SeekFrom::Start(0));
    let _ = write!(file, "{} (pid {})", reporter.task_id(), std::process::id());
    Ok(Some(CheckoutLock { _file: file }))
}

/// Who holds the lock, as its holder wrote it. A holder writes its name just after it takes
/// the lock, so an empty file is read again for a moment before giving up on the name.
async fn holder_of(file: &mut File) -> String {
    for _ in 0..50 {
        let mut text = String::new();
        let _ = file.seek(SeekFrom::Start(0));
        let _ = file.read_to_string(&mut text);
        let name = text.trim_matches(|c: char| c == '\0' || c.is_whitespace());
        if !name.is_empty() {
            return name.to_string();
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    "another worker".to_string()
}
