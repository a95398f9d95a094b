//! Printing: JSON for scripts, aligned tables and coloured lines for humans.

use crate::CliResult;
use serde::Serialize;
use std::io::{IsTerminal, Write};

/// Prints `value` as pretty JSON (one document).
pub fn json<T: Serialize + ?Sized>(value: &T) -> CliResult {
    line(&serde_json::to_string_pretty(value)?)
}

/// Prints `value` as compact JSON on one line (for streams: one document per line).
pub fn json_line<T: Serialize + ?Sized>(value: &T) -> CliResult {
    line(&serde_json::to_string(value)?)
}

/// Prints one line to stdout and flushes it (so `tail` output reaches pipes at once).
pub fn line(text: &str) -> CliResult {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()?;
    Ok(())
}

/// `-` for an absent value.
pub fn opt(value: Option<&str>) -> String {
    value.filter(|v| !v.is_empty()).unwrap_or("-").to_string()
}

/// `10:01:02` out of `2025-01-02T10:01:02.345Z`.
pub fn clock(timestamp: &str) -> &str {
    timestamp
        .split_once('T')
        .map(|(_, t)| t.get(..8).unwrap_or(t))
        .unwrap_or(timestamp)
}

/// Columns padded to their widest cell; the last column is never padded or cut.
pub struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(headers: &[&str]) -> Table {
        Table {
            rows: vec![headers.iter().map(|h| h.to_string()).collect()],
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn print(&self) -> CliResult {
        let columns = self.rows[0].len();
        let mut widths = vec![0; columns];
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate().take(columns.saturating_sub(1)) {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        for row in &self.rows {
            let mut text = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i + 1 < columns {
                    text.push_str(&format!("{cell:<width$}  ", width = widths[i]));
                } else {
                    text.push_str(cell);
                }
            }
            line(text.trim_end())?;
        }
        Ok(())
    }
}

/// When to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// When stdout is a terminal and `NO_COLOR` is unset.
    Auto,
    Always,
    Never,
}

/// ANSI colours by message type, or none.
pub struct Colors {
    on: bool,
}

impl Colors {
    pub fn new(choice: ColorChoice) -> Colors {
        let on = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::io::stdout().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none()
                    && std::env::var("TERM").map_or(true, |t| t != "dumb")
            }
        };
        Colors { on }
    }

    /// `text` in the colour of message type `kind`.
    pub fn kind(&self, kind: &str, text: &str) -> String {
        if !self.on {
            return text.to_string();
        }
        let code = match kind {
            "test_result" => "32",   // green
            "impl_progress" => "36", // cyan
            "fix_required" => "33",  // yellow
            "error" => "31",         // red
            _ => "35",               // magenta
        };
        format!("\x1b[{code}m{text}\x1b[0m")
    }

    /// `text` dimmed (timestamps, sequence numbers).
    pub fn dim(&self, text: &str) -> String {
        if self.on {
            format!("\x1b[2m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}
