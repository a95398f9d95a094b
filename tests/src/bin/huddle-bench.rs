//! `huddle-bench SCENARIO [--sync full|normal] [--json|--markdown] [sizes…]`; see `--help`.

use clap::Parser;
use huddle_tests::bench::{self, stats::MARKDOWN_HEADER, Args};
use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    if args.markdown {
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
