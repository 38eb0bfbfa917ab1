//! The shared limiter behind core's HTTP layer, over real TCP with a real client: exact fields
//! on the server's clock (the time key), 503 without the server under fail-closed (also for a
//! service started before its server, which then counts once the server is up), and two
//! server processes on one Redis sharing the limit (this test binary runs itself again as each
//! server process, told by an environment variable).

use core::time::Duration;
use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, SocketAddr};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc;

use axum::Router;
use axum::routing::get;
use fixed_window_redis::http::{Header, HttpRateLimitLayer};
use fixed_window_redis::{Config, FailPolicy, SharedRateLimiter, redis};
use fixed_window_redis_test::{RedisServer, ServerOptions};
use reqwest::{Client, Response, StatusCode};

use crate::support::{HOUR, TestResult, on_time_key, raw, server, set_time};

/// Set in a child: the Redis URL it serves from.
const CHILD: &str = "FIXED_WINDOW_HTTP_CHILD";
/// The longest the parent waits for a child to start serving.
const DEADLINE: Duration = Duration::from_secs(60);
/// Where every test's server time starts, in microseconds.
const START: u64 = 1_000_000_000;

/// Serves `limiter` behind the layer on a free loopback port, keyed by `x-client`; its
/// address.
async fn serve(limiter: SharedRateLimiter) -> Result<SocketAddr, std::io::Error> {
    let app = Router::new()
        .route("/", get(|| async { "ok" }))
        .layer(HttpRateLimitLayer::new(
            Arc::new(limiter),
            Header::new("x-client").expect("a name"),
        ));
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    let address = listener.local_addr()?;
    tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
    });
    Ok(address)
}

fn client() -> Client {
    Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .expect("a client")
}

async fn get_as(address: SocketAddr, client_key: &str) -> Response {
    client()
        .get(format!("http://{address}/"))
        .header("x-client", client_key)
        .send()
        .await
        .expect("the server answers")
}

fn header<'r>(response: &'r Response, name: &str) -> Option<&'r str> {
    response
        .headers()
        .get(name)
        .map(|value| value.to_str().expect("an ASCII header"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permits_count_down_then_a_429_carries_the_servers_retry_after() -> TestResult {
    let redis = server()?;
    let mut connection = raw(&redis)?;
    set_time(&mut connection, START)?;
    let limiter = SharedRateLimiter::connect(
        on_time_key("http-fields", 3, Duration::from_secs(10))?,
        redis.client()?,
    )
    .await?;
    let address = serve(limiter).await?;

    let first = get_as(address, "alice").await;
    assert_eq!(first.status(), StatusCode::OK);
    assert_eq!(
        header(&first, "ratelimit-policy"),
        Some("\"http-fields\";q=3;w=10")
    );
    assert_eq!(
        header(&first, "ratelimit"),
        Some("\"http-fields\";r=2;t=10")
    );

    // The reset shrinks as the window runs, on the server's clock.
    set_time(&mut connection, START + 2_500_000)?;
    let second = get_as(address, "alice").await;
    assert_eq!(
        header(&second, "ratelimit"),
        Some("\"http-fields\";r=1;t=8")
    );
    set_time(&mut connection, START + 6_200_000)?;
    let third = get_as(address, "alice").await;
    assert_eq!(header(&third, "ratelimit"), Some("\"http-fields\";r=0;t=4"));

    let rejected = get_as(address, "alice").await;
    assert_eq!(rejected.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(header(&rejected, "retry-after"), Some("4"));
    assert_eq!(
        header(&rejected, "ratelimit"),
        Some("\"http-fields\";r=0;t=4")
    );

    // Another client has its own window on the same grid.
    let other = get_as(address, "bob").await;
    assert_eq!(header(&other, "ratelimit"), Some("\"http-fields\";r=2;t=4"));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shadow_route_reports_the_servers_budget_and_counts_nothing() -> TestResult {
    let mut redis = server()?;
    let mut connection = raw(&redis)?;
    set_time(&mut connection, START)?;
    let config = on_time_key("http-shadow", 3, Duration::from_secs(10))?
        .with_timeout(Duration::from_millis(500))?;
    let limiter = Arc::new(SharedRateLimiter::connect(config, redis.client()?).await?);
    let key = || Header::new("x-client").expect("a name");
    // `/` is limited; `/status`, on the same limiter, only peeks.
    let app = Router::new()
        .route("/", get(|| async { "ok" }))
        .layer(HttpRateLimitLayer::new(Arc::clone(&limiter), key()))
        .merge(
            Router::new()
                .route("/status", get(|| async { "status" }))
                .layer(HttpRateLimitLayer::shadow(Arc::clone(&limiter), key())),
        );
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    let address = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });
    let status_as = |client_key: &'static str| {
        client()
            .get(format!("http://{address}/status"))
            .header("x-client", client_key)
            .send()
    };

    for _ in 0..3 {
        let peeked = status_as("alice").await?;
        assert_eq!(peeked.status(), StatusCode::OK);
        assert_eq!(
            header(&peeked, "ratelimit-policy"),
            Some("\"http-shadow\";q=3;w=10")
        );
        assert_eq!(
            header(&peeked, "ratelimit"),
            Some("\"http-shadow\";r=3;t=10")
        );
    }
    // The peeks took nothing and wrote nothing: no counter on the server yet.
    let counters: Vec<String> = redis::cmd("KEYS").arg("*alice*").query(&mut connection)?;
    assert_eq!(counters, Vec::<String>::new());
    let counted = get_as(address, "alice").await;
    assert_eq!(
        header(&counted, "ratelimit"),
        Some("\"http-shadow\";r=2;t=10")
    );
    // The status route reads the window on the server's clock.
    set_time(&mut connection, START + 2_500_000)?;
    let later = status_as("alice").await?;
    assert_eq!(header(&later, "ratelimit"), Some("\"http-shadow\";r=2;t=8"));

    // Without its server, a peek answers nothing: the policy alone, and the request served.
    redis.stop()?;
    let down = status_as("alice").await?;
    assert_eq!(down.status(), StatusCode::OK);
    assert_eq!(
        header(&down, "ratelimit-policy"),
        Some("\"http-shadow\";q=3;w=10")
    );
    assert_eq!(header(&down, "ratelimit"), None);
    assert_eq!(down.text().await?, "status");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fields_report_the_keys_own_limit() -> TestResult {
    let redis = server()?;
    let mut connection = raw(&redis)?;
    set_time(&mut connection, START)?;
    let config = on_time_key("http-own", 3, Duration::from_secs(10))?.key_limit("paid", 50)?;
    let limiter = SharedRateLimiter::connect(config, redis.client()?).await?;
    let address = serve(limiter).await?;

    let paid = get_as(address, "paid").await;
    assert_eq!(paid.status(), StatusCode::OK);
    assert_eq!(
        header(&paid, "ratelimit-policy"),
        Some("\"http-own\";q=50;w=10")
    );
    assert_eq!(header(&paid, "ratelimit"), Some("\"http-own\";r=49;t=10"));
    let free = get_as(address, "free").await;
    assert_eq!(
        header(&free, "ratelimit-policy"),
        Some("\"http-own\";q=3;w=10")
    );
    assert_eq!(header(&free, "ratelimit"), Some("\"http-own\";r=2;t=10"));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_its_server_a_fail_closed_limiter_answers_503_and_a_fail_open_one_serves()
-> TestResult {
    let mut redis = server()?;
    let closed = SharedRateLimiter::connect(
        Config::of("http-closed", 5, HOUR)?
            .with_timeout(Duration::from_millis(1_500))?
            .with_local_memory(0),
        redis.client()?,
    )
    .await?;
    let open = SharedRateLimiter::connect(
        Config::of("http-open", 5, HOUR)?
            .with_fail_policy(FailPolicy::Open)
            .with_local_memory(0),
        redis.client()?,
    )
    .await?;
    let closed = serve(closed).await?;
    let open = serve(open).await?;
    assert_eq!(get_as(closed, "alice").await.status(), StatusCode::OK);

    redis.stop()?;
    let unavailable = get_as(closed, "alice").await;
    assert_eq!(unavailable.status(), StatusCode::SERVICE_UNAVAILABLE);
    // The configured timeout, 1.5 s, rounded up.
    assert_eq!(header(&unavailable, "retry-after"), Some("2"));
    assert_eq!(header(&unavailable, "ratelimit"), None);

    let uncounted = get_as(open, "alice").await;
    assert_eq!(uncounted.status(), StatusCode::OK);
    assert_eq!(
        header(&uncounted, "ratelimit-policy"),
        Some("\"http-open\";q=5;w=3600")
    );
    // Nobody counted the permit: there is no remaining count to report.
    assert_eq!(header(&uncounted, "ratelimit"), None);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn started_before_its_server_a_service_answers_by_its_policy_then_counts() -> TestResult {
    let port = RedisServer::free_port()?;
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/"))?;
    let config = |name, policy| -> Result<Config, Box<dyn std::error::Error>> {
        Ok(Config::of(name, 5, HOUR)?
            .with_fail_policy(policy)
            .with_timeout(Duration::from_millis(1_500))?)
    };
    let closed = serve(SharedRateLimiter::start(
        config("http-start-closed", FailPolicy::Closed)?,
        client.clone(),
    ))
    .await?;
    let open = serve(SharedRateLimiter::start(
        config("http-start-open", FailPolicy::Open)?,
        client,
    ))
    .await?;

    let unavailable = get_as(closed, "alice").await;
    assert_eq!(unavailable.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(header(&unavailable, "retry-after"), Some("2"));
    let uncounted = get_as(open, "alice").await;
    assert_eq!(uncounted.status(), StatusCode::OK);
    assert_eq!(header(&uncounted, "ratelimit"), None);

    let _redis = RedisServer::start_with(&ServerOptions::new().with_port(port))?;
    // At most 200 requests 50 ms apart (10 s) until the server has counted one.
    let mut counted = None;
    for _ in 0..200 {
        let response = get_as(closed, "alice").await;
        if response.status() == StatusCode::OK {
            counted = header(&response, "ratelimit").map(str::to_owned);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(counted.as_deref(), Some("\"http-start-closed\";r=4;t=3600"));
    let counted = get_as(open, "alice").await;
    assert_eq!(
        header(&counted, "ratelimit"),
        Some("\"http-start-open\";r=4;t=3600")
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_the_server_cannot_store_is_a_400() -> TestResult {
    let redis = server()?;
    let limiter =
        SharedRateLimiter::connect(Config::of("http-keys", 5, HOUR)?, redis.client()?).await?;
    let address = serve(limiter).await?;
    let too_long = "k".repeat(fixed_window_redis::MAX_KEY_LEN + 1);
    let refused = get_as(address, &too_long).await;
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    Ok(())
}

/// Children that are killed when the test ends, however it ends.
struct Children(Vec<Child>);

impl Drop for Children {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn two_server_processes_on_one_redis_share_the_limit() -> TestResult {
    if let Ok(url) = std::env::var(CHILD) {
        return serve_as_child(&url);
    }
    let redis = server()?;
    set_time(&mut raw(&redis)?, START)?;
    let mut children = Children(Vec::new());
    let mut addresses = Vec::new();
    for _ in 0..2 {
        let mut child = Command::new(std::env::current_exe()?)
            .args([
                "http::two_server_processes_on_one_redis_share_the_limit",
                "--exact",
                "--test-threads=1",
                "--nocapture",
                "--quiet",
            ])
            .env(CHILD, redis.url())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdout = child.stdout.take().ok_or("no child stdout")?;
        children.0.push(child);
        addresses.push(announced_address(stdout)?);
    }

    let runtime = tokio::runtime::Runtime::new()?;
    let answers: Vec<(u16, Option<String>)> = runtime.block_on(async {
        let mut answers = Vec::new();
        for turn in 0..6 {
            let response = get_as(addresses[turn % 2], "alice").await;
            let field = header(&response, "ratelimit").map(str::to_owned);
            answers.push((response.status().as_u16(), field));
        }
        answers
    });
    let field = |r: u32| Some(format!("\"http-shared\";r={r};t=10"));
    assert_eq!(
        answers,
        [
            (200, field(3)),
            (200, field(2)),
            (200, field(1)),
            (200, field(0)),
            (429, field(0)),
            (429, field(0)),
        ]
    );
    Ok(())
}

/// Reads the child's `listening ADDRESS` line, or fails after [`DEADLINE`].
fn announced_address(stdout: std::process::ChildStdout) -> Result<SocketAddr, String> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(address) = line.strip_prefix("listening ") {
                let _ = sender.send(address.to_owned());
                return;
            }
        }
    });
    let address = receiver
        .recv_timeout(DEADLINE)
        .map_err(|_| "a child never announced its address".to_owned())?;
    address
        .parse()
        .map_err(|err| format!("a child announced {address:?}: {err}"))
}

/// A child: serves the shared limit of 4 per 10 s on the time key, prints its address, and
/// stops when the parent closes its standard input (or dies), or after [`DEADLINE`].
fn serve_as_child(url: &str) -> TestResult {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let client = fixed_window_redis::redis::Client::open(url)?;
        let config = on_time_key("http-shared", 4, Duration::from_secs(10))?;
        let limiter = SharedRateLimiter::connect(config, client).await?;
        let address = serve(limiter).await?;
        println!("listening {address}");
        let stdin_closed = tokio::task::spawn_blocking(|| {
            let mut sink = String::new();
            while std::io::stdin().read_line(&mut sink).is_ok_and(|n| n > 0) {}
        });
        let _ = tokio::time::timeout(DEADLINE, stdin_closed).await;
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}
