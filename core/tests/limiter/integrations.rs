//! The optional integrations: tokio's clock and the tower middleware.

#[cfg(feature = "tokio")]
mod tokio_clock {
    use core::time::Duration;
    use std::sync::Arc;

    use fixed_window::{RateLimiter, TokioClock};

    #[test]
    fn waiters_under_paused_time_get_one_window_each_in_order() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        runtime.block_on(async {
            let limiter = Arc::new(
                RateLimiter::of("paused", 2, Duration::from_secs(60))
                    .unwrap()
                    .with_clock(TokioClock::new())
                    .with_max_wait(Duration::from_secs(120)),
            );
            let tasks: Vec<_> = (0..7)
                .map(|_| {
                    let limiter = Arc::clone(&limiter);
                    tokio::spawn(async move {
                        limiter
                            .acquire_async()
                            .await
                            .map(|permit| permit.at().as_nanos() / 60_000_000_000)
                    })
                })
                .collect();
            let mut windows = Vec::new();
            for task in tasks {
                windows.push(task.await.unwrap());
            }
            // Two per window for windows 0, 1 and 2; the seventh would need window 3, past its
            // two-minute deadline.
            let mut granted: Vec<u64> = windows
                .iter()
                .filter_map(|w| w.as_ref().ok().copied())
                .collect();
            granted.sort_unstable();
            assert_eq!(granted, [0, 0, 1, 1, 2, 2]);
            assert_eq!(windows.iter().filter(|w| w.is_err()).count(), 1);
        });
    }
}

#[cfg(feature = "tower")]
mod tower_layer {
    use core::time::Duration;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    use fixed_window::{ManualClock, RateLimitLayer, RateLimiter, ServiceError};
    use tower::{Layer, Service, ServiceExt};

    #[test]
    fn rejected_requests_never_reach_the_service_and_its_errors_pass_through() {
        let clock = ManualClock::new();
        let limiter = Arc::new(
            RateLimiter::of("svc", 2, Duration::from_secs(1))
                .unwrap()
                .with_clock(clock.clone()),
        );
        let reached = Arc::new(AtomicU32::new(0));
        let counter = Arc::clone(&reached);
        let inner = tower::service_fn(move |request: i32| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move {
                if request < 0 {
                    Err("negative")
                } else {
                    Ok(request * 2)
                }
            }
        });
        let mut service = RateLimitLayer::new(limiter).layer(inner);
        futures::executor::block_on(async {
            assert_eq!(service.ready().await.unwrap().call(4).await, Ok(8));
            assert_eq!(
                service.ready().await.unwrap().call(-1).await,
                Err(ServiceError::Service("negative"))
            );
            assert!(matches!(
                service.ready().await.unwrap().call(5).await,
                Err(ServiceError::RateLimited(_))
            ));
            clock.advance(Duration::from_secs(1));
            assert_eq!(service.ready().await.unwrap().call(6).await, Ok(12));
        });
        assert_eq!(reached.load(Ordering::SeqCst), 3);
    }
}
