//! A tiny HTTP server limited per client by the shared limiter: run several of them against one
//! Redis and they share one limit per client.
//!
//! ```sh
//! redis-server --port 6379 --save '' --appendonly no &
//! cargo run -p fixed-window-redis --example http_server -- --listen 127.0.0.1:8081 &
//! cargo run -p fixed-window-redis --example http_server -- --listen 127.0.0.1:8082 &
//! for port in 8081 8082 8081 8082 8081 8082; do curl -si -H 'x-client-id: alice' 127.0.0.1:$port/ | head -1; done
//! ```
//!
//! With the defaults (5 requests per 10 s per client) the first five answers are `200 OK`, the
//! sixth `429 Too Many Requests` with a `Retry-After` header, whichever process answers. The
//! client is the `x-client-id` header, or the peer's address without one.
//!
//! Flags: `--redis URL` (default `redis://127.0.0.1:6379/`), `--listen ADDR` (default
//! `127.0.0.1:8080`), `--limit N` (5), `--period-ms N` (10000), `--fail-open` (serve requests
//! uncounted while Redis is unreachable; by default they get `503 Service Unavailable`).
//!
//! It parses HTTP/1.1 request heads with `httparse` and answers one request per connection: a
//! demonstration of the limiter, not a web server.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use fixed_window::RateLimiterError;
use fixed_window_redis::{
    Config, FailPolicy, SharedError, SharedRateLimitLayer, SharedRateLimiter, SharedServiceError,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tower::{Layer, Service, ServiceExt};

/// The largest request head read.
const MAX_HEAD: usize = 8 * 1024;

/// What the service sees of a request.
struct Request {
    /// Who is limited: the `x-client-id` header, or the peer's IP address.
    client: String,
    path: String,
}

struct Options {
    redis: String,
    listen: String,
    limit: u32,
    period: Duration,
    fail_policy: FailPolicy,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        redis: "redis://127.0.0.1:6379/".into(),
        listen: "127.0.0.1:8080".into(),
        limit: 5,
        period: Duration::from_secs(10),
        fail_policy: FailPolicy::Closed,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--redis" => options.redis = value()?,
            "--listen" => options.listen = value()?,
            "--limit" => {
                options.limit = value()?.parse().map_err(|err| format!("--limit: {err}"))?;
            }
            "--period-ms" => {
                let millis = value()?
                    .parse()
                    .map_err(|err| format!("--period-ms: {err}"))?;
                options.period = Duration::from_millis(millis);
            }
            "--fail-open" => options.fail_policy = FailPolicy::Open,
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(options)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = options()?;
    let config = Config::of("http-example", options.limit, options.period)?
        .with_fail_policy(options.fail_policy);
    let limiter =
        SharedRateLimiter::connect(config, redis::Client::open(options.redis.as_str())?).await?;
    let listener = TcpListener::bind(&options.listen).await?;
    let here = listener.local_addr()?;
    eprintln!(
        "http_server: {here}, {} requests per {:?} per client, shared through {}",
        options.limit, options.period, options.redis
    );
    let layer = SharedRateLimitLayer::new(Arc::new(limiter), |request: &Request| {
        request.client.clone()
    });
    let service = layer.layer(tower::service_fn(move |request: Request| async move {
        Ok::<_, std::convert::Infallible>(format!(
            "hello {} from {here}, you asked for {}\n",
            request.client, request.path
        ))
    }));
    loop {
        let (stream, peer) = listener.accept().await?;
        let service = service.clone();
        tokio::spawn(async move {
            if let Err(err) = serve(stream, peer, service).await {
                eprintln!("http_server: {peer}: {err}");
            }
        });
    }
}

async fn serve<S>(mut stream: TcpStream, peer: SocketAddr, service: S) -> std::io::Result<()>
where
    S: Service<Request, Response = String, Error = SharedServiceError<std::convert::Infallible>>,
{
    let Some(request) = read_request(&mut stream, peer).await? else {
        return respond(&mut stream, "400 Bad Request", &[], "bad request\n").await;
    };
    match service.oneshot(request).await {
        Ok(body) => respond(&mut stream, "200 OK", &[], &body).await,
        Err(SharedServiceError::RateLimited(err)) => {
            let (status, retry_after) = status_of(&err);
            let headers: Vec<(&str, String)> = retry_after
                .map(|secs| ("Retry-After", secs.to_string()))
                .into_iter()
                .collect();
            respond(&mut stream, status, &headers, &format!("{err}\n")).await
        }
        Err(SharedServiceError::Service(never)) => match never {},
    }
}

/// The status for a request without a permit, and the `Retry-After` seconds for a rejection
/// (rounded up, so a client that obeys never comes back before the window opens).
fn status_of(err: &SharedError) -> (&'static str, Option<u64>) {
    match err {
        SharedError::Limited(RateLimiterError::Rejected { retry_after, .. }) => {
            let secs = retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0);
            ("429 Too Many Requests", Some(secs.max(1)))
        }
        SharedError::Unavailable { .. } => ("503 Service Unavailable", None),
        SharedError::InvalidKey { .. } => ("400 Bad Request", None),
        _ => ("500 Internal Server Error", None),
    }
}

async fn read_request(
    stream: &mut TcpStream,
    peer: SocketAddr,
) -> std::io::Result<Option<Request>> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0_u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if head.len() > MAX_HEAD {
            return Ok(None);
        }
        let read = stream.read(&mut buf).await?;
        if read == 0 {
            return Ok(None);
        }
        head.extend_from_slice(&buf[..read]);
    }
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut parsed = httparse::Request::new(&mut headers);
    if !matches!(parsed.parse(&head), Ok(httparse::Status::Complete(_))) {
        return Ok(None);
    }
    let client = parsed
        .headers
        .iter()
        .find(|header| header.name.eq_ignore_ascii_case("x-client-id"))
        .map_or_else(
            || peer.ip().to_string(),
            |header| String::from_utf8_lossy(header.value).into_owned(),
        );
    Ok(Some(Request {
        client,
        path: parsed.path.unwrap_or("/").to_owned(),
    }))
}

async fn respond(
    stream: &mut TcpStream,
    status: &str,
    headers: &[(&str, String)],
    body: &str,
) -> std::io::Result<()> {
    let mut response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        response.push_str(name);
        response.push_str(": ");
        response.push_str(value);
        response.push_str("\r\n");
    }
    response.push_str("\r\n");
    response.push_str(body);
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}
