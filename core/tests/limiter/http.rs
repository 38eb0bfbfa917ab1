//! The HTTP layer over real TCP: an axum server on a loopback port, a real HTTP client, and
//! the limiter on a manual clock, so every header is exact.

use core::time::Duration;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use axum::routing::get;
use fixed_window::http::{AllRequests, Header, HttpRateLimitLayer, PeerIp};
use fixed_window::{KeyedRateLimiter, ManualClock, RateLimiter};
use reqwest::{Client, Response, StatusCode};

/// Serves `app` on a free loopback port until the test's runtime ends; its address.
async fn serve(app: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .expect("a free loopback port");
    let address = listener.local_addr().expect("the bound address");
    tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
        .expect("the server runs");
    });
    address
}

fn app() -> Router {
    Router::new().route("/", get(|| async { "ok" }))
}

fn client_from(local: Ipv4Addr) -> Client {
    Client::builder()
        .local_address(IpAddr::V4(local))
        .timeout(Duration::from_secs(10))
        .build()
        .expect("a client")
}

async fn get_from(client: &Client, address: SocketAddr) -> Response {
    client
        .get(format!("http://{address}/"))
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

#[tokio::test]
async fn permits_carry_the_ratelimit_fields_then_a_rejection_is_a_429_with_retry_after() {
    let clock = ManualClock::new();
    let limiter = Arc::new(
        RateLimiter::builder("api", 3, Duration::from_secs(10))
            .expect("a valid configuration")
            .clock(clock.clone())
            .build(),
    );
    let address = serve(app().layer(HttpRateLimitLayer::new(limiter, AllRequests))).await;
    let client = client_from(Ipv4Addr::LOCALHOST);

    for remaining in [2, 1, 0] {
        let response = get_from(&client, address).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            header(&response, "ratelimit-policy"),
            Some("\"api\";q=3;w=10")
        );
        let expected = format!("\"api\";r={remaining};t=10");
        assert_eq!(header(&response, "ratelimit"), Some(expected.as_str()));
        assert_eq!(header(&response, "retry-after"), None);
        assert_eq!(response.text().await.expect("a body"), "ok");
    }

    clock.advance(Duration::from_millis(2_500));
    let rejected = get_from(&client, address).await;
    assert_eq!(rejected.status(), StatusCode::TOO_MANY_REQUESTS);
    // 7.5 s to the next window, rounded up.
    assert_eq!(header(&rejected, "retry-after"), Some("8"));
    assert_eq!(
        header(&rejected, "ratelimit-policy"),
        Some("\"api\";q=3;w=10")
    );
    assert_eq!(header(&rejected, "ratelimit"), Some("\"api\";r=0;t=8"));
    assert!(
        rejected
            .text()
            .await
            .expect("a body")
            .contains("retry after 8 s")
    );

    clock.advance(Duration::from_millis(7_500));
    let next_window = get_from(&client, address).await;
    assert_eq!(next_window.status(), StatusCode::OK);
    assert_eq!(header(&next_window, "ratelimit"), Some("\"api\";r=2;t=10"));
}

#[tokio::test]
async fn the_reset_shrinks_as_the_window_runs() {
    let clock = ManualClock::new();
    let limiter = Arc::new(
        RateLimiter::builder("shrinking", 100, Duration::from_secs(60))
            .expect("a valid configuration")
            .clock(clock.clone())
            .build(),
    );
    let address = serve(app().layer(HttpRateLimitLayer::new(limiter, AllRequests))).await;
    let client = client_from(Ipv4Addr::LOCALHOST);

    let mut resets = Vec::new();
    for _ in 0..4 {
        let response = get_from(&client, address).await;
        let field = header(&response, "ratelimit").expect("a RateLimit field");
        let reset: u64 = field
            .rsplit("t=")
            .next()
            .and_then(|t| t.parse().ok())
            .expect("a reset in whole seconds");
        resets.push(reset);
        clock.advance(Duration::from_millis(14_500));
    }
    // At 0, 14.5, 29 and 43.5 s of a 60 s window: 60, 45.5, 31 and 16.5 s left, rounded up.
    assert_eq!(resets, [60, 46, 31, 17]);
}

#[tokio::test]
async fn each_peer_address_has_its_own_limit() {
    let limiter = Arc::new(
        KeyedRateLimiter::<IpAddr, _>::builder("per-client", 1, Duration::from_secs(60))
            .expect("a valid configuration")
            .clock(ManualClock::new())
            .build(),
    );
    let address = serve(app().layer(HttpRateLimitLayer::new(limiter, PeerIp))).await;
    // Two clients on two loopback addresses: two keys.
    let first = client_from(Ipv4Addr::LOCALHOST);
    let second = client_from(Ipv4Addr::new(127, 0, 0, 2));

    assert_eq!(get_from(&first, address).await.status(), StatusCode::OK);
    assert_eq!(
        get_from(&first, address).await.status(),
        StatusCode::TOO_MANY_REQUESTS
    );
    let other = get_from(&second, address).await;
    assert_eq!(other.status(), StatusCode::OK);
    assert_eq!(header(&other, "ratelimit"), Some("\"per-client\";r=0;t=60"));
}

#[tokio::test]
async fn a_request_without_its_key_header_is_a_400_and_never_counted() {
    let limiter = Arc::new(
        KeyedRateLimiter::<String, _>::builder("per-key", 1, Duration::from_secs(60))
            .expect("a valid configuration")
            .clock(ManualClock::new())
            .build(),
    );
    let layer = HttpRateLimitLayer::new(
        Arc::clone(&limiter),
        Header::new("x-api-key").expect("a header name"),
    );
    let address = serve(app().layer(layer)).await;
    let client = client_from(Ipv4Addr::LOCALHOST);

    let anonymous = get_from(&client, address).await;
    assert_eq!(anonymous.status(), StatusCode::BAD_REQUEST);
    assert_eq!(
        anonymous.text().await.expect("a body"),
        "the request has no x-api-key header\n"
    );
    assert_eq!(limiter.len(), 0);

    let keyed = client
        .get(format!("http://{address}/"))
        .header("x-api-key", "k-7")
        .send()
        .await
        .expect("the server answers");
    assert_eq!(keyed.status(), StatusCode::OK);
    assert_eq!(limiter.len(), 1);
}

#[tokio::test]
async fn the_fields_report_each_keys_own_limit_as_it_changes() {
    let paid = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
    let limiter = Arc::new(
        KeyedRateLimiter::<IpAddr, _>::builder("per-client", 1, Duration::from_secs(60))
            .and_then(|builder| builder.key_limit(paid, 3))
            .expect("a valid configuration")
            .clock(ManualClock::new())
            .build(),
    );
    let layer = HttpRateLimitLayer::new(Arc::clone(&limiter), PeerIp);
    let address = serve(app().layer(layer)).await;
    let free = client_from(Ipv4Addr::LOCALHOST);
    let paying = client_from(Ipv4Addr::new(127, 0, 0, 2));

    let response = get_from(&paying, address).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        header(&response, "ratelimit-policy"),
        Some("\"per-client\";q=3;w=60")
    );
    assert_eq!(
        header(&response, "ratelimit"),
        Some("\"per-client\";r=2;t=60")
    );
    let response = get_from(&free, address).await;
    assert_eq!(
        header(&response, "ratelimit-policy"),
        Some("\"per-client\";q=1;w=60")
    );
    assert_eq!(
        header(&response, "ratelimit"),
        Some("\"per-client\";r=0;t=60")
    );

    // Lowered to one in the same window, the paying key's one permit fills it: a 429 that
    // reports the new limit.
    limiter
        .set_key_limit(paid, 1)
        .expect("a limit the words hold");
    let response = get_from(&paying, address).await;
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        header(&response, "ratelimit-policy"),
        Some("\"per-client\";q=1;w=60")
    );
    assert_eq!(
        header(&response, "ratelimit"),
        Some("\"per-client\";r=0;t=60")
    );
}

#[tokio::test]
async fn a_shadow_route_reports_the_budget_counts_nothing_and_never_rejects() {
    let clock = ManualClock::new();
    let limiter = Arc::new(
        RateLimiter::builder("api", 3, Duration::from_secs(10))
            .expect("a valid configuration")
            .clock(clock.clone())
            .build(),
    );
    // `/` is limited; `/status`, on the same limiter, only peeks.
    let counting = app().layer(HttpRateLimitLayer::new(Arc::clone(&limiter), AllRequests));
    let status = Router::new()
        .route("/status", get(|| async { "status" }))
        .layer(HttpRateLimitLayer::shadow(
            Arc::clone(&limiter),
            AllRequests,
        ));
    let address = serve(counting.merge(status)).await;
    let client = client_from(Ipv4Addr::LOCALHOST);
    let status_of = || async {
        client
            .get(format!("http://{address}/status"))
            .send()
            .await
            .expect("the server answers")
    };

    for _ in 0..4 {
        let peeked = status_of().await;
        assert_eq!(peeked.status(), StatusCode::OK);
        assert_eq!(
            header(&peeked, "ratelimit-policy"),
            Some("\"api\";q=3;w=10")
        );
        assert_eq!(header(&peeked, "ratelimit"), Some("\"api\";r=3;t=10"));
    }
    // Four peeks took nothing: the first counted request leaves two.
    let counted = get_from(&client, address).await;
    assert_eq!(header(&counted, "ratelimit"), Some("\"api\";r=2;t=10"));
    assert_eq!(
        header(&status_of().await, "ratelimit"),
        Some("\"api\";r=2;t=10")
    );

    clock.advance(Duration::from_millis(2_500));
    for _ in 0..2 {
        get_from(&client, address).await;
    }
    assert_eq!(
        get_from(&client, address).await.status(),
        StatusCode::TOO_MANY_REQUESTS
    );
    // The window is full: the status route still serves, and says so.
    let full = status_of().await;
    assert_eq!(full.status(), StatusCode::OK);
    assert_eq!(header(&full, "ratelimit"), Some("\"api\";r=0;t=8"));
    assert_eq!(header(&full, "retry-after"), None);
    assert_eq!(full.text().await.expect("a body"), "status");
    assert_eq!(limiter.peek().remaining(), 0);
}

#[tokio::test]
async fn a_shadow_layer_peeks_at_each_keys_window() {
    let limiter = Arc::new(
        KeyedRateLimiter::<String, _>::builder("per-key", 2, Duration::from_secs(60))
            .expect("a valid configuration")
            .clock(ManualClock::new())
            .build(),
    );
    limiter.try_acquire(&"k-1".to_owned()).expect("a permit");
    let layer = HttpRateLimitLayer::shadow(
        Arc::clone(&limiter),
        Header::new("x-api-key").expect("a header name"),
    );
    let address = serve(app().layer(layer)).await;
    let client = client_from(Ipv4Addr::LOCALHOST);
    let as_key = |key: &'static str| {
        client
            .get(format!("http://{address}/"))
            .header("x-api-key", key)
            .send()
    };

    let spent = as_key("k-1").await.expect("the server answers");
    assert_eq!(header(&spent, "ratelimit"), Some("\"per-key\";r=1;t=60"));
    let fresh = as_key("k-2").await.expect("the server answers");
    assert_eq!(header(&fresh, "ratelimit"), Some("\"per-key\";r=2;t=60"));
    // A peek adds no key, and a request without its key goes on, unmarked.
    assert_eq!(limiter.len(), 1);
    let anonymous = get_from(&client, address).await;
    assert_eq!(anonymous.status(), StatusCode::OK);
    assert_eq!(header(&anonymous, "ratelimit-policy"), None);
}
