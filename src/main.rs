//! The `pgmcp` binary: parse the command line, run it, report the error chain
//! once and exit with a code. Everything else lives in the library.

#![deny(clippy::print_stdout)]

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = pgmcp::cli::Cli::parse();
    match pgmcp::cli::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("pgmcp: {:#}", anyhow::Error::from(e));
            ExitCode::from(2)
        }
    }
}
