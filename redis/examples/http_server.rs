//! An axum service limited per client by the shared limiter: run several of them against one
//! Redis and they share one limit per client.
//!
//! ```sh
//! redis-server --port 6379 --save '' --appendonly no &
//! cargo run -p fixed-window-redis --example http_server -- --listen 127.0.0.1:8081 &
//! cargo run -p fixed-window-redis --example http_server -- --listen 127.0.0.1:8082 &
//! for port in 8081 8082 8081 8082 8081 8082; do curl -si 127.0.0.1:$port/ | grep -iE '^(HTTP|retry-after|ratelimit)'; done
//! ```
//!
//! With the defaults (5 requests per 10 s per client) the first five answers are `200 OK` with
//! `RateLimit: "http-example";r=4;t=10` counting down, whichever process answers; the sixth is
//! `429 Too Many Requests` with `Retry-After`. If Redis is down when it starts, or goes down
//! while it runs, requests get `503 Service Unavailable` (or, with `--fail-open`, go through
//! uncounted) until it is back; the service starts and stays up either way.
//! Ctrl-C (or SIGTERM) stops it gracefully: requests in flight are answered first.
//!
//! Logs go to stderr through `tracing`, coloured only on a terminal: a line when the limiter
//! loses its Redis server and one when the server counts again; `RUST_LOG=debug` shows every
//! decision.

use std::io::IsTerminal as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::routing::get;
use clap::Parser;
use fixed_window::RateLimiterEvent;
use fixed_window_redis::http::{Header, HttpRateLimitLayer, KeyExtractor, PeerIp};
use fixed_window_redis::{Config, FailPolicy, SharedEvent, SharedRateLimiter, redis};
use tracing::{debug, info, warn};

/// An HTTP service whose clients share one limit across every process on the same Redis.
#[derive(Debug, Parser)]
struct Flags {
    /// The Redis server (`redis://`, or `rediss://` for TLS when built with `--features tls`;
    /// user and password in the URL).
    #[arg(long, default_value = "redis://127.0.0.1:6379/")]
    redis: String,
    /// The address to serve on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Requests per client per period.
    #[arg(long, default_value_t = 5)]
    limit: u32,
    /// The window's length, e.g. `10s` or `500ms`.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    period: Duration,
    /// How long an excess request may wait for the next window (`0s`: answer 429 at once).
    #[arg(long, default_value = "0s", value_parser = humantime::parse_duration)]
    max_wait: Duration,
    /// Limit by this header's value (an API key, a user) instead of the peer's address.
    #[arg(long)]
    key_header: Option<String>,
    /// Serve requests uncounted while Redis is unreachable, instead of answering 503.
    #[arg(long)]
    fail_open: bool,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        // Colour only on a terminal: a log file or a collector gets plain text.
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let flags = Flags::parse();
    let fail_policy = if flags.fail_open {
        FailPolicy::Open
    } else {
        FailPolicy::Closed
    };
    let config = Config::of("http-example", flags.limit, flags.period)?
        .with_max_wait(flags.max_wait)
        .with_fail_policy(fail_policy);
    let client = redis::Client::open(flags.redis.as_str())?;
    // Started, not connected: it serves while Redis is down (503, or uncounted with
    // --fail-open) and registers in the background, instead of failing to start.
    // One line when the server is lost and one when it counts again, not one per request.
    let lost = AtomicBool::new(false);
    let limiter =
        SharedRateLimiter::start(config, client).with_listener(move |key, event| match event {
            SharedEvent::Unavailable { cause, .. } => {
                if lost.swap(true, Ordering::Relaxed) {
                    debug!(key, %cause, "redis unavailable");
                } else {
                    warn!(%cause, ?fail_policy, "lost the redis server: the fail policy decides until it answers");
                }
            }
            SharedEvent::EvictionRisk { risk, .. } => warn!(
                policy = risk.policy(),
                configuration = risk.configuration(),
                "redis may evict the limiter's keys when its memory is full"
            ),
            // Only the server grants a counted permit (a local rejection needs no server).
            SharedEvent::Limiter(decided @ RateLimiterEvent::Permitted { .. }) => {
                if lost.swap(false, Ordering::Relaxed) {
                    info!("the redis server answers again: counting");
                }
                debug!(key, event = ?decided, "decided");
            }
            event => debug!(key, ?event, "decided"),
        });
    let limiter = Arc::new(limiter);
    let app = match &flags.key_header {
        Some(name) => app(limiter, Header::new(name)?),
        None => app(limiter, PeerIp),
    };

    let listener = tokio::net::TcpListener::bind(flags.listen).await?;
    info!(address = %listener.local_addr()?, limit = flags.limit, period = ?flags.period, "serving");
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown())
    .await?;
    info!("stopped");
    Ok(())
}

/// The service: one route, behind the shared limit per key `key` reads.
fn app<X>(limiter: Arc<SharedRateLimiter>, key: X) -> Router
where
    X: KeyExtractor<Body>,
    X::Key: std::fmt::Display,
{
    Router::new()
        .route("/", get(|| async { "hello\n" }))
        .layer(HttpRateLimitLayer::new(limiter, key))
}

/// Resolves on Ctrl-C or, on Unix, SIGTERM (what a service manager or an orchestrator sends).
async fn shutdown() {
    let interrupt = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            warn!(%error, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                warn!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
    info!("shutting down");
}
