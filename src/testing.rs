//! The test surface: what `tests/`, `benches/` and `examples/` reach that is
//! not the API. Not API: hidden from the docs, no semver promise, and any
//! release may change or drop any of it.
//!
//! It is apart so the API can stay narrow while the tests still check the
//! pure stages one by one, with data tables and no database, and the
//! database's own defences with the guard out of the way; the only way in
//! for them, rather than a module path into the crate's layout, so a file
//! that moves changes a line here and no test. Each group below says why
//! it is here. Everything an embedder also uses (`Engine`, `Config`,
//! `Policy`, `Rule`, `Violation`, `Hook`, `Target`, ...) is at the crate
//! root, not here.

/// The guard alone, pure: a statement judged against a policy and a
/// server's catalog facts with no engine and no database (the corpus, the
/// fuzzer and the guard bench), PostgreSQL's parse tree as the guard reads
/// it (and as `examples/parse_tree.rs` prints it), and the lexical outline
/// the embedded engines' guards read.
pub mod guard {
    pub use crate::guard::outline::Outline;
    pub use crate::guard::{DEFAULT_BLOCKED_FUNCTIONS, Judge, Mode, ParseError, Routines, Tree, check, parse};
}

/// PostgreSQL's pieces without an engine in front: connection settings
/// resolved with an environment the test gives (never the process's), the
/// backend itself (so a statement reaches the server with no guard, to show
/// what the server refuses on its own), identifier quoting for the SQL a
/// test writes, and text output → JSON for the values bench.
pub mod postgres {
    pub use crate::backend::postgres::{PgBackend, PgOptions, quote_ident};

    /// Connection settings: a connection string, the config's `connection`
    /// section and an environment lookup → the parameters a connection uses.
    pub mod params {
        pub use crate::backend::postgres::params::resolve;
    }

    /// PostgreSQL's text output → JSON, one value at a time.
    pub mod value {
        pub use crate::backend::postgres::value::{Shape, from_text};
    }
}

/// One statement as a backend takes it (its deadline, its read budget), and
/// the rows it returns shaped and encoded as the pipeline would: for the
/// tests that send a statement straight to [`postgres::PgBackend`].
pub mod statement {
    pub use crate::backend::{Deadline, Statement};
    pub use crate::pipeline::answer::encode;
    pub use crate::pipeline::budget::ReadBudget;
    pub use crate::pipeline::shape::shaped;
}

/// What the server says about a login's `pg_hba.conf` lines, as `pgmcp
/// check --suggest-role --login` asks it: the command line's, so not an
/// [`Engine`](crate::Engine) method an embedder sees.
pub mod login {
    use tokio_util::sync::CancellationToken;

    /// [`Engine`](crate::Engine)'s `hba_facts`, for `reader`.
    pub async fn hba_facts(
        engine: &crate::Engine,
        reader: &str,
        cancel: CancellationToken,
    ) -> Result<crate::backend::postgres::HbaFacts, crate::Error> {
        engine.hba_facts(reader, cancel).await
    }
}

/// The hook runner alone: a chain of hook programs run over one text, and
/// the environment variables a hook may inherit.
pub mod hooks {
    pub use crate::pipeline::hooks::{ENV_ALLOWED, run_chain};
}

/// `pgmcp configure`'s questions, in the order it asks them: the tests
/// answer each one through a terminal.
pub mod wizard {
    pub use crate::cli::wizard::{ADVANCED, ADVANCED_QUESTION, FIRST, Question};
}
