//! A loopback TCP proxy between the limiters and the server that injects network faults on a
//! seeded schedule: it delays what it forwards, loses replies (the request ran; the caller never
//! hears), loses requests on a connection it keeps open (the request never ran; the caller
//! times out), and resets connections.
//!
//! It listens on 127.0.0.1 only and forwards each accepted connection to the server's port on
//! 127.0.0.1. Bytes are forwarded chunk by chunk as they are read, each direction in order
//! (FIFO per connection): a delayed chunk holds back the ones behind it. Each connection draws
//! its faults from its own `ChaCha` generator, seeded from the proxy's seed and the connection's
//! number, so a seed fixes the schedule of decisions; which bytes a chunk holds depends on
//! timing, so a run is not replayed bit for bit. A lost reply never leaves the stream out of
//! step: the connection is closed after it (at once, or after a stall longer than the
//! clients' timeout), as a real lost reply ends in a broken connection or a timeout.

use core::time::Duration;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;
use tokio::sync::watch;

/// How often each fault strikes, per chunk forwarded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Faults {
    /// A chunk (either way) is held back by up to `delay_max`.
    pub delay: f64,
    /// The longest short delay.
    pub delay_max: Duration,
    /// A request is held back by `long_delay_by`, past the clients' timeout: the caller gives
    /// up, and the script runs later.
    pub long_delay: f64,
    /// How long a long delay holds a request.
    pub long_delay_by: Duration,
    /// A reply is dropped and the connection closed at once.
    pub lose_reply: f64,
    /// A reply is dropped and the connection held, silent, for `stall`, then closed: the caller
    /// times out.
    pub stall_reply: f64,
    /// How long a stalled connection is held.
    pub stall: Duration,
    /// A request is dropped and the connection reset instead of forwarding it.
    pub reset: f64,
    /// A request is dropped and the connection kept open, silent, for `stall`, then closed:
    /// the server never runs it, and the caller times out.
    pub swallow_request: f64,
}

impl Faults {
    /// No fault: every byte forwarded at once.
    pub const NONE: Faults = Faults {
        delay: 0.0,
        delay_max: Duration::ZERO,
        long_delay: 0.0,
        long_delay_by: Duration::ZERO,
        lose_reply: 0.0,
        stall_reply: 0.0,
        stall: Duration::ZERO,
        reset: 0.0,
        swallow_request: 0.0,
    };
}

/// What the proxy did, counted.
#[derive(Debug, Default)]
pub struct Counts {
    /// Connections accepted.
    pub connections: AtomicU64,
    /// Chunks forwarded.
    pub forwarded: AtomicU64,
    /// Chunks delayed briefly.
    pub delayed: AtomicU64,
    /// Requests delayed past the clients' timeout.
    pub delayed_past_timeout: AtomicU64,
    /// Replies dropped, the connection closed at once.
    pub replies_lost: AtomicU64,
    /// Replies dropped, the connection stalled then closed.
    pub replies_stalled: AtomicU64,
    /// Connections reset instead of forwarding a request.
    pub resets: AtomicU64,
    /// Requests dropped on a connection kept open.
    pub requests_swallowed: AtomicU64,
    /// Connections closed all at once (a failover, a restart).
    pub severed: AtomicU64,
}

/// A snapshot of [`Counts`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Injected {
    pub connections: u64,
    pub forwarded: u64,
    pub delayed: u64,
    pub delayed_past_timeout: u64,
    pub replies_lost: u64,
    pub replies_stalled: u64,
    pub resets: u64,
    pub requests_swallowed: u64,
    pub severed: u64,
}

impl Injected {
    /// Faults of any kind.
    pub fn faults(&self) -> u64 {
        self.delayed
            + self.delayed_past_timeout
            + self.replies_lost
            + self.replies_stalled
            + self.resets
            + self.requests_swallowed
            + self.severed
    }
}

struct Shared {
    seed: u64,
    upstream: AtomicU16,
    faults: Mutex<Faults>,
    counts: Counts,
    /// Bumped to close every open connection.
    sever: watch::Sender<u64>,
}

/// The proxy, running on a runtime of its own until dropped.
pub struct FaultProxy {
    port: u16,
    shared: Arc<Shared>,
    runtime: Option<Runtime>,
}

impl FaultProxy {
    /// Starts a proxy on a free loopback port, forwarding to `upstream` (a port on 127.0.0.1)
    /// with no faults until [`set_faults`](FaultProxy::set_faults).
    pub fn start(upstream: u16, seed: u64) -> io::Result<FaultProxy> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("fault-proxy")
            .enable_all()
            .build()?;
        let listener = runtime.block_on(TcpListener::bind(SocketAddr::from((
            Ipv4Addr::LOCALHOST,
            0,
        ))))?;
        let port = listener.local_addr()?.port();
        let shared = Arc::new(Shared {
            seed,
            upstream: AtomicU16::new(upstream),
            faults: Mutex::new(Faults::NONE),
            counts: Counts::default(),
            sever: watch::channel(0).0,
        });
        runtime.spawn(accept(listener, Arc::clone(&shared)));
        Ok(FaultProxy {
            port,
            shared,
            runtime: Some(runtime),
        })
    }

    /// The URL clients connect to.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// A redis-rs client for the proxy.
    pub fn client(&self) -> redis::RedisResult<redis::Client> {
        redis::Client::open(self.url())
    }

    /// The faults injected from now on.
    pub fn set_faults(&self, faults: Faults) {
        *self
            .shared
            .faults
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = faults;
    }

    /// Forwards new connections to `upstream` from now on (a failover).
    pub fn set_upstream(&self, upstream: u16) {
        self.shared.upstream.store(upstream, Ordering::SeqCst);
    }

    /// Closes every open connection (their callers see the connection lost).
    pub fn sever(&self) {
        self.shared.sever.send_modify(|generation| *generation += 1);
    }

    /// What the proxy has done so far.
    pub fn injected(&self) -> Injected {
        let c = &self.shared.counts;
        let load = |counter: &AtomicU64| counter.load(Ordering::SeqCst);
        Injected {
            connections: load(&c.connections),
            forwarded: load(&c.forwarded),
            delayed: load(&c.delayed),
            delayed_past_timeout: load(&c.delayed_past_timeout),
            replies_lost: load(&c.replies_lost),
            replies_stalled: load(&c.replies_stalled),
            resets: load(&c.resets),
            requests_swallowed: load(&c.requests_swallowed),
            severed: load(&c.severed),
        }
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

async fn accept(listener: TcpListener, shared: Arc<Shared>) {
    let mut number: u64 = 0;
    loop {
        let Ok((client, _)) = listener.accept().await else {
            continue;
        };
        number += 1;
        shared.counts.connections.fetch_add(1, Ordering::SeqCst);
        let rng =
            ChaCha8Rng::seed_from_u64(shared.seed ^ number.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        tokio::spawn(connection(client, Arc::clone(&shared), rng));
    }
}

async fn connection(client: TcpStream, shared: Arc<Shared>, mut rng: ChaCha8Rng) {
    let mut severed = shared.sever.subscribe();
    let upstream = shared.upstream.load(Ordering::SeqCst);
    let Ok(server) = TcpStream::connect((Ipv4Addr::LOCALHOST, upstream)).await else {
        // The server is down (a restart): the client sees its connection closed.
        return;
    };
    // Closing sends a reset rather than a FIN, as a connection cut by the network does.
    let _ = client.set_zero_linger();
    let _ = server.set_zero_linger();
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    let requests_rng = ChaCha8Rng::seed_from_u64(rng.random());
    let requests = pump(
        Direction::Requests,
        client_read,
        server_write,
        Arc::clone(&shared),
        requests_rng,
    );
    let replies = pump(
        Direction::Replies,
        server_read,
        client_write,
        Arc::clone(&shared),
        rng,
    );
    // Biased, the sever first: a sever closes the server behind it too (a failover stops the
    // old primary), and the connection counts as severed whichever it noticed first.
    tokio::select! {
        biased;
        _ = severed.changed() => {
            shared.counts.severed.fetch_add(1, Ordering::SeqCst);
        }
        () = requests => {}
        () = replies => {}
    }
    // Dropping both pumps drops all four halves: both sockets close.
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Requests,
    Replies,
}

/// Forwards one direction of a connection until a side closes or a fault cuts it; either way
/// the connection then closes.
async fn pump(
    direction: Direction,
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    shared: Arc<Shared>,
    mut rng: ChaCha8Rng,
) {
    let mut buffer = vec![0_u8; 16 * 1024];
    loop {
        let read = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        let faults = *shared.faults.lock().unwrap_or_else(PoisonError::into_inner);
        let counts = &shared.counts;
        let draw: f64 = rng.random();
        let mut threshold = 0.0;
        let mut strikes = |p: f64| {
            threshold += p;
            draw < threshold
        };
        match direction {
            Direction::Requests if strikes(faults.reset) => {
                counts.resets.fetch_add(1, Ordering::SeqCst);
                return;
            }
            Direction::Requests if strikes(faults.swallow_request) => {
                // Nothing after it is forwarded either, so that replies never fall out of
                // step with requests; the connection closes once its callers have timed out.
                counts.requests_swallowed.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(faults.stall).await;
                return;
            }
            Direction::Requests if strikes(faults.long_delay) => {
                counts.delayed_past_timeout.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(faults.long_delay_by).await;
            }
            Direction::Replies if strikes(faults.lose_reply) => {
                counts.replies_lost.fetch_add(1, Ordering::SeqCst);
                return;
            }
            Direction::Replies if strikes(faults.stall_reply) => {
                counts.replies_stalled.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(faults.stall).await;
                return;
            }
            _ if strikes(faults.delay) => {
                counts.delayed.fetch_add(1, Ordering::SeqCst);
                let max = u64::try_from(faults.delay_max.as_micros()).unwrap_or(u64::MAX);
                tokio::time::sleep(Duration::from_micros(rng.random_range(0..=max))).await;
            }
            _ => {}
        }
        if to.write_all(&buffer[..read]).await.is_err() {
            return;
        }
        counts.forwarded.fetch_add(1, Ordering::SeqCst);
    }
}
