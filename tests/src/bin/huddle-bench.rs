//! `huddle-bench SCENARIO [--sync full|normal] [--json|--markdown] [sizes…]`; see `--help`.

use clap::Parser;
use huddle_tests::bench::{self, stats::MARKDOWN_HEADER, Args};
use std::process::ExitCode;

/// The load generator shares the machine with the daemon: the same allocator keeps its own
/// CPU cost (thousands of connections, many small buffers) from crowding the daemon out.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(daemon) = &args.daemon {
        huddle_tests::process::use_huddled_binary(daemon.clone());
    }
    // `guard` prints a table of its own.
    if args.markdown
        && !matches!(
            args.scenario,
            bench::Scenario::Guard | bench::Scenario::ParallelRepair
        )
    {
        println!("{MARKDOWN_HEADER}");
    }
    match bench::main(args).await {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("huddle-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
