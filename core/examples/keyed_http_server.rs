//! An axum service limited in-process: a limit per client address, under a global limit for
//! the whole service, each answered the standard way.
//!
//! ```sh
//! cargo run -p fixed-window --features axum --example keyed_http_server -- --per-client 3 &
//! for i in 1 2 3 4; do curl -si 127.0.0.1:8080/ | grep -iE '^(HTTP|retry-after|ratelimit)'; done
//! ```
//!
//! Each `200 OK` carries both policies (`RateLimit-Policy: "global";q=…, "per-client";q=…`)
//! and their state; the fourth request from one address is `429 Too Many Requests` with
//! `Retry-After`. Ctrl-C (or SIGTERM) stops it gracefully: requests in flight are answered
//! first. Logs go to stderr through `tracing`, coloured only on a terminal; `RUST_LOG=debug`
//! logs every decision.

use std::io::IsTerminal as _;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use clap::Parser;
use fixed_window::http::{AllRequests, HttpRateLimitLayer, PeerIp};
use fixed_window::{KeyedRateLimiter, RateLimiter};
use tracing::{debug, info, warn};

/// An HTTP service with a per-client limit and a global one, both in this process.
#[derive(Debug, Parser)]
struct Flags {
    /// The address to serve on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Requests per client address per period.
    #[arg(long, default_value_t = 5)]
    per_client: u32,
    /// Requests for the whole service per period.
    #[arg(long, default_value_t = 1_000)]
    global: u32,
    /// The windows' length, e.g. `10s` or `500ms`.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    period: Duration,
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
    let per_client =
        KeyedRateLimiter::<IpAddr>::builder("per-client", flags.per_client, flags.period)?
            .listener(|client, event| debug!(%client, ?event, "per-client"))
            .build();
    let global = RateLimiter::builder("global", flags.global, flags.period)?
        .listener(|event| debug!(?event, "global"))
        .build();
    // The outer layer decides first: a client over its own limit does not use up the
    // global budget.
    let app = Router::new()
        .route("/", get(|| async { "hello\n" }))
        .layer(HttpRateLimitLayer::new(Arc::new(global), AllRequests))
        .layer(HttpRateLimitLayer::new(Arc::new(per_client), PeerIp));

    let listener = tokio::net::TcpListener::bind(flags.listen).await?;
    info!(address = %listener.local_addr()?, per_client = flags.per_client, global = flags.global, period = ?flags.period, "serving");
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown())
    .await?;
    info!("stopped");
    Ok(())
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
