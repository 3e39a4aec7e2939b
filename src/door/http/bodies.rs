//! The memory request bodies share ([`Bodies`]): a `POST` takes its
//! share of one budget, across every client, before its body is read, and
//! holds it until the parsed message is dropped. Apart because it bounds
//! what all requests together hold, where each other check looks at one.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, StatusCode, header};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::{Body, answer};

/// The longest a request waits for its body's share of the body budget
/// before it is answered `503` with `Retry-After`.
pub(super) const BODY_WAIT: Duration = Duration::from_secs(30);

/// The memory budget request bodies share. A `POST` takes its declared
/// length from the budget before its body is read (all of it at once, so
/// two half-read bodies can never wait on each other), or the longest
/// body allowed when it declares none and the rest back once it is read.
/// The share rides in the request's extensions, which rmcp keeps with the
/// parsed message, so it is held until the message is dropped: the
/// body's bytes, rmcp's copy and the parsed message are all counted. A
/// request whose share is not free within [`BODY_WAIT`] is answered `503`
/// with `Retry-After`; meanwhile its body waits unread in the socket.
pub(super) struct Bodies {
    pub(super) budget: Arc<Semaphore>,
    pub(super) max_body: usize,
    /// How long a request waits for its share: [`BODY_WAIT`].
    pub(super) wait: Duration,
}

/// A request body's share of the budget, held as long as the request is.
#[derive(Clone)]
struct BodyShare(#[allow(dead_code, reason = "held for its drop")] Arc<OwnedSemaphorePermit>);

impl Bodies {
    pub(super) async fn read<B>(&self, request: Request<B>) -> Result<Request<Full<Bytes>>, Response<Body>>
    where
        B: hyper::body::Body<Data = Bytes>,
        B::Error: std::fmt::Display,
    {
        let too_large = || {
            let mut response = Response::new(
                Full::new(Bytes::from(format!(
                    "Payload Too Large: request body exceeds {} bytes",
                    self.max_body
                )))
                .boxed_unsync(),
            );
            *response.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
            response
        };
        let declared = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        let reserve = match declared {
            Some(n) if n > self.max_body as u64 => return Err(too_large()),
            Some(n) => n as usize,
            None => self.max_body,
        };
        let wanted = u32::try_from(reserve).map_err(|_| too_large())?;
        let mut share = match tokio::time::timeout(self.wait, self.budget.clone().acquire_many_owned(wanted)).await {
            Ok(Ok(share)) => share,
            _ => {
                let mut response = answer(
                    StatusCode::SERVICE_UNAVAILABLE,
                    r#"{"error":"busy: the memory for request bodies is in use, try again shortly"}"#.to_owned(),
                );
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
                return Err(response);
            }
        };
        let (parts, body) = request.into_parts();
        let mut body = std::pin::pin!(body);
        let mut collected = bytes::BytesMut::with_capacity(declared.map_or(0, |_| reserve));
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| {
                let mut response =
                    Response::new(Full::new(Bytes::from(format!("Bad Request: reading the body: {e}"))).boxed_unsync());
                *response.status_mut() = StatusCode::BAD_REQUEST;
                response
            })?;
            if let Ok(data) = frame.into_data() {
                if data.len() > reserve - collected.len() {
                    return Err(too_large());
                }
                collected.extend_from_slice(&data);
            }
        }
        // A body without a declared length gives back what it did not use.
        drop(share.split(reserve - collected.len()));
        let mut request = Request::from_parts(parts, Full::new(collected.freeze()));
        request.extensions_mut().insert(BodyShare(Arc::new(share)));
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bodies(budget: usize, max_body: usize) -> Bodies {
        Bodies {
            budget: Arc::new(Semaphore::new(budget)),
            max_body,
            wait: Duration::from_millis(20),
        }
    }

    /// A body that arrives three bytes a frame.
    struct Pieces(std::collections::VecDeque<Bytes>);

    impl hyper::body::Body for Pieces {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Self::Error>>> {
            std::task::Poll::Ready(self.0.pop_front().map(|data| Ok(hyper::body::Frame::data(data))))
        }
    }

    fn post(body: &'static [u8], declared: bool) -> Request<Pieces> {
        let mut request = Request::new(Pieces(body.chunks(3).map(Bytes::from_static).collect()));
        if declared {
            request
                .headers_mut()
                .insert(header::CONTENT_LENGTH, body.len().to_string().parse().unwrap());
        }
        request
    }

    /// A body's share is its length, declared or not, held as long as the
    /// request is; one over the longest size is refused before any wait;
    /// one whose share is not free in time is told to come back.
    #[tokio::test]
    async fn bodies_share_the_budget() {
        let bodies = bodies(100, 40);
        for declared in [true, false] {
            let read = bodies.read(post(b"0123456789", declared)).await.unwrap();
            assert_eq!(bodies.budget.available_permits(), 90, "declared: {declared}");
            assert!(read.extensions().get::<BodyShare>().is_some());
            let (_, body) = read.into_parts();
            assert_eq!(body.collect().await.unwrap().to_bytes(), &b"0123456789"[..]);
            assert_eq!(bodies.budget.available_permits(), 100, "declared: {declared}");
        }

        let over: &[u8] = &[b' '; 41];
        for declared in [true, false] {
            let refused = bodies.read(post(over, declared)).await.unwrap_err();
            assert_eq!(refused.status(), StatusCode::PAYLOAD_TOO_LARGE, "declared: {declared}");
            assert_eq!(bodies.budget.available_permits(), 100, "declared: {declared}");
        }

        let held = bodies.budget.clone().acquire_many_owned(95).await.unwrap();
        let busy = bodies.read(post(b"0123456789", true)).await.unwrap_err();
        assert_eq!(busy.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(busy.headers().get(header::RETRY_AFTER).unwrap(), "1");
        // A small one still fits beside what is held.
        assert!(bodies.read(post(b"01234", true)).await.is_ok());
        drop(held);
        assert_eq!(bodies.budget.available_permits(), 100);
    }
}
