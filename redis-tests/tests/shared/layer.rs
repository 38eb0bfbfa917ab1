//! The tower layer: each request limited by the key extracted from it, across replicas.

use std::sync::Arc;

use fixed_window_redis::{
    Config, SharedError, SharedRateLimitLayer, SharedRateLimiter, SharedServiceError,
};
use tower::{Layer, Service, ServiceExt};

use crate::support::{HOUR, TestResult, server};

/// A request: the client's id (as a header would carry it) and a body.
#[derive(Debug)]
struct Request {
    client: &'static str,
    body: u32,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_share_a_limit_per_extracted_key_across_replicas() -> TestResult {
    let server = server()?;
    let config = Config::of("http", 2, HOUR)?;
    let mut replicas = Vec::new();
    for _ in 0..2 {
        let limiter = Arc::new(SharedRateLimiter::connect(config.clone(), server.client()?).await?);
        let layer =
            SharedRateLimitLayer::new(limiter, |request: &Request| request.client.to_owned());
        replicas.push(
            layer.layer(tower::service_fn(|request: Request| async move {
                Ok::<_, std::io::Error>(request.body)
            })),
        );
    }
    let mut passed = Vec::new();
    let mut limited = Vec::new();
    for body in 0..6 {
        let replica = &mut replicas[usize::try_from(body)? % 2];
        let request = Request {
            client: "alice",
            body,
        };
        match replica.ready().await?.call(request).await {
            Ok(body) => passed.push(body),
            Err(SharedServiceError::RateLimited(err @ SharedError::Limited(_))) => {
                assert!(err.retry_after().is_some_and(|wait| wait <= HOUR));
                limited.push(body);
            }
            Err(other) => return Err(other.into()),
        }
    }
    assert_eq!((passed, limited), (vec![0, 1], vec![2, 3, 4, 5]));
    let bob = Request {
        client: "bob",
        body: 9,
    };
    assert_eq!(replicas[0].ready().await?.call(bob).await?, 9);
    // A request whose key cannot name a counter never reaches the service.
    let nobody = Request {
        client: "",
        body: 10,
    };
    assert!(matches!(
        replicas[1].ready().await?.call(nobody).await,
        Err(SharedServiceError::RateLimited(
            SharedError::InvalidKey { .. }
        ))
    ));
    Ok(())
}
