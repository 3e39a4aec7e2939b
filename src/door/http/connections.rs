//! The connection slots ([`Door`]): a connection that has shown no token
//! yet is a stranger, with slots of its own, and the oldest idle stranger
//! is dropped for a newcomer, so strangers cannot crowd out token holders.
//! Apart from the request front because it works below HTTP: on accepted
//! sockets ([`Watched`]), before any request of theirs is read.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use super::lock;

/// Most connections open at once that have shown a token (on a server
/// without tokens: that have sent an MCP request).
pub(super) const MAX_CONNECTIONS: usize = 256;

/// Most connections open at once that have not: anyone who can reach the
/// port can open these, so they have slots of their own, and when all are
/// taken the oldest is dropped for the newcomer (see [`Door`]).
pub(super) const MAX_STRANGERS: usize = 64;

/// The connection slots. A connection is a stranger until one of its
/// requests shows a valid token (on a server without tokens: until it
/// sends an MCP request), then a member.
///
/// Anyone who can reach the port can open connections and send nothing,
/// and a slot held that way is one a token holder cannot have. So
/// strangers have [`MAX_STRANGERS`] slots of their own, and when a new
/// connection finds them all taken, the oldest stranger that pgmcp is
/// waiting on (its last read found nothing, and no request of its is
/// being answered) is dropped to make room. A real client sends its
/// request as soon as it has connected and becomes a member as soon as its
/// headers are read; idle connections only ever age toward the front of
/// the line. A connection pgmcp has not read from yet (many clients
/// connecting at once) is never dropped: the newcomer waits for a slot
/// instead. What remains: a client whose request arrives after pgmcp's
/// first read found nothing, and is still unread when 64 newer strangers
/// have come, can be dropped; only a flood reconnecting thousands of
/// times a second comes near that.
/// Members have [`MAX_CONNECTIONS`] slots, which only token holders can
/// take, and are never dropped for room. (A short header timeout alone
/// would not do: a flood that reconnects as fast as it is cut off keeps
/// every slot taken, and real clients would wait that long.)
pub(super) struct Door {
    pub(super) strangers: Arc<Semaphore>,
    /// Strangers, oldest first.
    pub(super) waiting: Mutex<BTreeMap<u64, Arc<Mark>>>,
    /// Told when a stranger starts waiting on its client.
    pub(super) idle: tokio::sync::Notify,
    pub(super) members: Arc<Semaphore>,
    pub(super) next: AtomicU64,
}

/// What the door knows of a stranger.
pub(super) struct Mark {
    /// Cancelled when the connection is dropped to make room.
    pub(super) dropped: CancellationToken,
    /// Whether pgmcp's last read from it found nothing to read.
    idle: AtomicBool,
    /// Its requests being answered (none once idle, unless a body is
    /// still to come): a stranger answering one is not dropped.
    busy: AtomicUsize,
    /// Its stranger's slot. Whoever drops it for room takes the slot
    /// over at once, rather than wait for its task to end.
    slot: Mutex<Option<OwnedSemaphorePermit>>,
}

impl Door {
    /// A stranger's slot for a connection just accepted: a free one, or an
    /// idle stranger's. `None` once the door is closed.
    pub(super) async fn admit(self: Arc<Self>) -> Option<Conn> {
        let slot = loop {
            if let Ok(slot) = self.strangers.clone().try_acquire_owned() {
                break slot;
            }
            let oldest_idle = {
                let mut waiting = lock(&self.waiting);
                let id = waiting
                    .iter()
                    .find(|(_, mark)| mark.idle.load(Ordering::Acquire) && mark.busy.load(Ordering::Acquire) == 0)
                    .map(|(id, _)| *id);
                id.and_then(|id| waiting.remove(&id))
            };
            if let Some(mark) = oldest_idle {
                // Its task ends at once; its slot is the newcomer's.
                mark.dropped.cancel();
                match lock(&mark.slot).take() {
                    Some(slot) => break slot,
                    None => continue,
                }
            }
            // No stranger is idle yet: wait for a slot, or for one to be.
            tokio::select! {
                slot = self.strangers.clone().acquire_owned() => break slot.ok()?,
                () = self.idle.notified() => {}
            }
        };
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mark = Arc::new(Mark {
            dropped: CancellationToken::new(),
            idle: AtomicBool::new(false),
            busy: AtomicUsize::new(0),
            slot: Mutex::new(Some(slot)),
        });
        lock(&self.waiting).insert(id, mark.clone());
        Some(Conn {
            id,
            door: self,
            mark,
            member: tokio::sync::Mutex::new(None),
        })
    }
}

/// One client connection and the slot it holds: a stranger's (in its
/// mark) until it has a member's.
pub(super) struct Conn {
    id: u64,
    door: Arc<Door>,
    pub(super) mark: Arc<Mark>,
    member: tokio::sync::Mutex<Option<OwnedSemaphorePermit>>,
}

impl Conn {
    /// Make this connection a member, once one of its requests showed a
    /// token. `false` if it was dropped for room first.
    pub(super) async fn admit_member(&self) -> bool {
        let mut member = self.member.lock().await;
        if member.is_some() {
            return true;
        }
        // No longer one that may be dropped for room; it keeps its
        // stranger's slot until it has a member's.
        if lock(&self.door.waiting).remove(&self.id).is_none() {
            return false;
        }
        match self.door.members.clone().acquire_owned().await {
            Ok(slot) => {
                *member = Some(slot);
                drop(lock(&self.mark.slot).take());
                true
            }
            Err(_) => false,
        }
    }
}

/// A request being answered on a connection.
pub(super) struct Busy(pub(super) Arc<Conn>);

impl Busy {
    pub(super) fn new(conn: Arc<Conn>) -> Busy {
        conn.mark.busy.fetch_add(1, Ordering::AcqRel);
        Busy(conn)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.mark.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        lock(&self.door.waiting).remove(&self.id);
    }
}

/// A client's socket that tells the door whether pgmcp is waiting on the
/// client: its last read found nothing to read.
pub(super) struct Watched {
    pub(super) stream: tokio::net::TcpStream,
    pub(super) conn: Arc<Conn>,
}

impl tokio::io::AsyncRead for Watched {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let read = std::pin::Pin::new(&mut self.stream).poll_read(cx, buf);
        let idle = read.is_pending();
        if self.conn.mark.idle.swap(idle, Ordering::AcqRel) != idle && idle {
            self.conn.door.idle.notify_one();
        }
        read
    }
}

impl tokio::io::AsyncWrite for Watched {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn door() -> Arc<Door> {
        Arc::new(Door {
            strangers: Arc::new(Semaphore::new(MAX_STRANGERS)),
            waiting: Mutex::new(BTreeMap::new()),
            idle: tokio::sync::Notify::new(),
            members: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
            next: AtomicU64::new(0),
        })
    }

    fn set_idle(door: &Door, conn: &Conn) {
        conn.mark.idle.store(true, Ordering::Release);
        door.idle.notify_one();
    }

    /// With every stranger's slot taken, a newcomer gets the slot of the
    /// oldest stranger pgmcp waits on; never one whose bytes are unread,
    /// nor a member's.
    #[tokio::test]
    async fn the_oldest_idle_stranger_makes_room() {
        let door = door();
        let mut conns = Vec::new();
        for _ in 0..MAX_STRANGERS {
            conns.push(Some(door.clone().admit().await.unwrap()));
        }
        // conns[0] shows a token: a member, never dropped for room.
        let first = conns[0].as_ref().unwrap();
        assert!(first.admit_member().await);
        set_idle(&door, first);
        // Its stranger's slot is free again; another takes it.
        conns.push(Some(door.clone().admit().await.unwrap()));
        let newcomer = tokio::spawn(door.clone().admit());
        // No stranger is idle: the newcomer waits.
        tokio::task::yield_now().await;
        assert!(!newcomer.is_finished());
        // Two go idle; the older one (5) is dropped for the newcomer.
        for i in [7, 5] {
            set_idle(&door, conns[i].as_ref().unwrap());
        }
        conns[5].as_ref().unwrap().mark.dropped.cancelled().await;
        assert!(!conns[7].as_ref().unwrap().mark.dropped.is_cancelled());
        assert!(!conns[0].as_ref().unwrap().mark.dropped.is_cancelled());
        let admitted = newcomer.await.unwrap().unwrap();
        assert_eq!(admitted.id, MAX_STRANGERS as u64 + 1);
        // A dropped stranger cannot become a member afterwards.
        set_idle(&door, conns[7].as_ref().unwrap());
        let another = tokio::spawn(door.clone().admit());
        conns[7].as_ref().unwrap().mark.dropped.cancelled().await;
        assert!(!conns[7].as_ref().unwrap().admit_member().await);
        let another = another.await.unwrap();
        assert!(another.is_some());
        // Never more strangers than slots, however many were dropped.
        assert_eq!(door.strangers.available_permits(), 0);
        drop(conns);
        assert_eq!(door.strangers.available_permits(), MAX_STRANGERS - 2);
    }
}
