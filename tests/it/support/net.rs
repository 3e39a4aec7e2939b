//! Ports for tests that need one nobody answers on.

/// A port nothing listens on right now: bound by the kernel's choice, then
/// let go. Another process could take it in between, which would only make
/// a test that expects a refused connection fail loudly.
pub(crate) fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}
