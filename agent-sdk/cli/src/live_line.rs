//! `huddle test`'s live line: while the suite runs, one line on stderr with the tests done so
//! far, the failures so far and the time taken (`huddle test: 12 done, 2 failed… 8s`), redrawn
//! when any of them changes; then a final line. Only for a person watching: stdout and stderr
//! are terminals and the output is not JSON. The counts come from the runner's own streaming
//! output ([`huddle_runners::live`]); a framework that reports only at the end shows the time.

use huddle_runners::live::LiveCounts;
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the line looks for new counts.
const REDRAW_EVERY: Duration = Duration::from_millis(100);

/// Set (to anything) by tests that watch the line through a pipe: draw it anyway.
pub const FORCE_ENV: &str = "HUDDLE_FORCE_LIVE_LINE";

/// The line being drawn.
pub struct LiveLine {
    counts: Arc<LiveCounts>,
    stop: tokio::sync::oneshot::Sender<()>,
    drawing: tokio::task::JoinHandle<()>,
    started: Instant,
}

/// Whether a person is watching: both streams are terminals (or the test switch is set).
pub fn wanted(quiet: bool) -> bool {
    let terminals = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
    !quiet && (terminals || std::env::var_os(FORCE_ENV).is_some())
}

impl LiveLine {
    /// Starts drawing; the run must go inside [`huddle_runners::live::with_live_counts`] with
    /// [`LiveLine::counts`].
    pub fn start() -> LiveLine {
        let counts = Arc::new(LiveCounts::default());
        let started = Instant::now();
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let seen = counts.clone();
        let drawing = tokio::spawn(async move {
            let mut tick = tokio::time::interval(REDRAW_EVERY);
            let mut shown = String::new();
            let draw = |shown: &mut String| {
                let line = text(seen.snapshot(), started.elapsed());
                if line != *shown {
                    eprint!("\r\x1b[2K{line}");
                    *shown = line;
                }
            };
            loop {
                tokio::select! {
                    _ = tick.tick() => draw(&mut shown),
                    _ = &mut stopped => break,
                }
            }
            // The counts as the run left them, then the line is wiped for the summary.
            draw(&mut shown);
            eprint!("\r\x1b[2K");
        });
        LiveLine {
            counts,
            stop,
            drawing,
            started,
        }
    }

    /// The counts the run keeps up to date.
    pub fn counts(&self) -> Arc<LiveCounts> {
        self.counts.clone()
    }

    /// Clears the line; returns the seconds the run took.
    pub async fn stop(self) -> f64 {
        let _ = self.stop.send(());
        let _ = self.drawing.await;
        self.started.elapsed().as_secs_f64()
    }
}

/// `huddle test: 12 done, 2 failed… 8s`, or `running the suite… 8s` before the first result.
pub fn text((done, failed): (u64, u64), elapsed: Duration) -> String {
    let secs = elapsed.as_secs();
    if done == 0 && failed == 0 {
        return format!("huddle test: running the suite… {secs}s");
    }
    format!("huddle test: {done} done, {failed} failed… {secs}s")
}

/// The line after the run: `huddle test: 7 run, 1 failed, 1 error in 1.2s (exit 1)`.
pub fn final_line(tally: Option<(usize, usize, usize)>, took: f64, code: i32) -> String {
    match tally {
        Some((run, failed, errors)) => {
            let errors = match errors {
                0 => String::new(),
                1 => ", 1 error".to_string(),
                n => format!(", {n} errors"),
            };
            format!("huddle test: {run} run, {failed} failed{errors} in {took:.1}s (exit {code})")
        }
        None => format!("huddle test: finished in {took:.1}s (exit {code})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_shows_counts_once_there_are_any() {
        let t = Duration::from_millis(8_400);
        assert_eq!(text((0, 0), t), "huddle test: running the suite… 8s");
        assert_eq!(text((12, 2), t), "huddle test: 12 done, 2 failed… 8s");
    }

    #[test]
    fn the_final_line_names_errors_apart_from_failures() {
        assert_eq!(
            final_line(Some((7, 1, 1)), 1.23, 1),
            "huddle test: 7 run, 1 failed, 1 error in 1.2s (exit 1)"
        );
        assert_eq!(
            final_line(Some((3, 0, 0)), 0.5, 0),
            "huddle test: 3 run, 0 failed in 0.5s (exit 0)"
        );
        assert_eq!(
            final_line(None, 2.0, 2),
            "huddle test: finished in 2.0s (exit 2)"
        );
    }
}
