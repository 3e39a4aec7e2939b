//! The `pgmcp` binary: parse the command line, run it, report the error chain
//! once and exit with a code. Everything else lives in the library.

#![deny(clippy::print_stdout)]

use std::process::ExitCode;

fn main() -> ExitCode {
    match pgmcp::binary::run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("pgmcp: {:#}", anyhow::Error::from(e));
            ExitCode::from(2)
        }
    }
}
