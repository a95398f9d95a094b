//! What a JavaScript runner's command line gets beside huddle's own reporter flags: from the
//! project's `npm test` script ([`super::script`]) its environment, node's options and the
//! options the runner's table keeps; then the caller's arguments (`huddle test -- …`), which
//! win over the script's and are refused when they would take the run away from huddle.

use super::cli_options::{self, Opt};
use super::script;
use super::Ctx;
use crate::guard::GuardError;
use crate::process::Invocation;
use std::ffi::OsString;

/// How one JavaScript runner reads its command line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunnerSpec {
    /// The runner's name, as written in scripts (`jest`).
    pub tool: &'static str,
    /// Its options, and what huddle does with each one found in the test script.
    pub options: &'static [Opt],
    /// Leading words of the script that mean "run the tests" (vitest's `run`), skipped.
    pub run_words: &'static [&'static str],
    /// Leading words that mean another command (`vitest bench`): the script is not read.
    pub other_commands: &'static [&'static str],
    /// Options the caller may not pass: they redirect or replace the reporter output huddle
    /// reads, or stop the runner from running the tests (watch mode, `--help`).
    pub refused: &'static [&'static str],
}

/// The project's and the caller's part of a runner's command line.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunnerArgs {
    /// The script's `VAR=value` assignments (the caller's environment wins).
    pub env: Vec<(OsString, OsString)>,
    /// Node's own options from the script (`node --experimental-vm-modules …/jest.js`).
    pub node_args: Vec<String>,
    /// The script's kept options (minus those the caller sets again), then the caller's
    /// arguments.
    pub args: Vec<String>,
    /// The script's test path patterns or file filters (words, or options such as jest's
    /// `--testPathPatterns x`): for a whole-suite run only.
    pub positionals: Vec<String>,
    /// The script's test-name filter as written (`-t`, `unit`): used when huddle sets none.
    pub name_filter: Vec<String>,
}

impl RunnerArgs {
    /// The value of the script's name filter (`-t x`, `--testNamePattern=x`).
    pub fn name_filter_value(&self) -> Option<String> {
        let first = self.name_filter.first()?;
        match first.split_once('=') {
            Some((_, value)) => Some(value.to_string()),
            None => self.name_filter.get(1).cloned(),
        }
    }

    /// Puts the script's environment and node's options on `inv`: a `node <bin> …`
    /// invocation takes node's options before the bin; a shim that starts node itself (pnpm's
    /// `.bin` scripts) gets them through `NODE_OPTIONS`.
    pub fn apply_to(&self, inv: &mut Invocation) {
        // Later entries win when the process starts: the caller's environment goes last.
        let caller_env = std::mem::take(&mut inv.env);
        inv.env = self.env.iter().cloned().chain(caller_env).collect();
        let starts_node = inv
            .program
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("node"));
        if starts_node {
            inv.args
                .splice(0..0, self.node_args.iter().map(OsString::from));
        } else if !self.node_args.is_empty() {
            let inherited = inv
                .env
                .iter()
                .rev()
                .find(|(k, _)| k == "NODE_OPTIONS")
                .map(|(_, v)| v.to_string_lossy().into_owned())
                .or_else(|| std::env::var("NODE_OPTIONS").ok())
                .unwrap_or_default();
            let joined = std::iter::once(inherited.as_str())
                .chain(self.node_args.iter().map(String::as_str))
                .filter(|a| !a.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            inv.env.push(("NODE_OPTIONS".into(), joined.into()));
        }
    }
}

/// Refuses caller arguments that `spec`'s runner must not get.
pub(crate) fn check_caller_args(spec: &RunnerSpec, args: &[String]) -> Result<(), GuardError> {
    match cli_options::first_refused(args, spec.refused) {
        None => Ok(()),
        Some(word) => Err(GuardError {
            what: "runner argument".into(),
            reason: format!(
                "{word:?} would change where or how {} reports results, or stop it from running \
                 the tests; huddle sets the reporter itself (refused for {}: {})",
                spec.tool,
                spec.tool,
                spec.refused
                    .iter()
                    .map(|r| if r.chars().count() == 1 {
                        format!("-{r}")
                    } else {
                        format!("--{r}")
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
    }
}

/// Gathers the project's and the caller's arguments for `spec`'s runner (the caller's were
/// checked by [`super::check_runner_args`] before the run started).
pub(crate) fn gather(ctx: &Ctx<'_>, spec: &RunnerSpec) -> RunnerArgs {
    let caller = &ctx.opts.runner_args;
    let lookup = |name: &str| {
        ctx.opts
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(name).ok())
    };
    let mut out = RunnerArgs::default();
    if let Some(found) = script::read(ctx.project, spec.tool, &lookup) {
        let first = found.args.first().map(String::as_str);
        if !first.is_some_and(|f| spec.other_commands.contains(&f)) {
            let skip = usize::from(first.is_some_and(|f| spec.run_words.contains(&f)));
            let taken = cli_options::take(&found.args[skip..], spec.options);
            out.env = found
                .env
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect();
            out.node_args = found.node_args;
            out.args = taken.kept_words(&cli_options::option_names(caller, spec.options));
            // The caller's own test paths replace the script's.
            if cli_options::take(caller, spec.options)
                .positionals
                .is_empty()
            {
                out.positionals = taken.positionals;
            }
            out.name_filter = taken.name_filter;
        }
    }
    out.args.extend(caller.iter().cloned());
    out
}
