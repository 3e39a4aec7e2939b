//! The process guarding itself, apart from any query: the environment as
//! pgmcp reads it, who may change the files it takes as its owner's word,
//! the log (never stdout), and the kernel's fence around SQL that may name
//! files.

pub(crate) mod environment;
pub(crate) mod logging;
pub(crate) mod private_file;
#[cfg(any(target_os = "linux", feature = "duckdb"))]
pub(crate) mod roots;
pub(crate) mod sandbox;
pub(crate) mod trust;
