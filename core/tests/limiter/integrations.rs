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

#[cfg(feature = "tokio")]
mod tokio_blocking {
    use core::time::Duration;

    use fixed_window::{Clock, Interrupt, TokioClock};

    use crate::support::bounded;

    #[test]
    fn a_blocking_sleep_on_the_tokio_clock_waits_on_the_interrupt_handle() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let clock = runtime.block_on(async { TokioClock::new() });
        let interrupt = Interrupt::new();
        assert_eq!(clock.sleep(Duration::from_millis(1), &interrupt), Ok(()));
        interrupt.interrupt();
        let slept = bounded("an interrupted hour-long sleep", move || {
            clock.sleep(Duration::from_secs(3_600), &interrupt)
        });
        assert!(slept.is_err());
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

    /// A service that is never ready.
    #[derive(Clone)]
    struct Busy;

    impl tower::Service<()> for Busy {
        type Response = ();
        type Error = std::io::Error;
        type Future = core::future::Ready<Result<(), std::io::Error>>;

        fn poll_ready(
            &mut self,
            _: &mut core::task::Context<'_>,
        ) -> core::task::Poll<Result<(), Self::Error>> {
            core::task::Poll::Pending
        }

        fn call(&mut self, (): ()) -> Self::Future {
            core::future::ready(Ok(()))
        }
    }

    #[test]
    fn readiness_is_the_inner_services() {
        let limiter = Arc::new(RateLimiter::of("svc", 1, Duration::from_secs(1)).unwrap());
        let mut service = RateLimitLayer::new(limiter).layer(Busy);
        let mut cx = core::task::Context::from_waker(futures::task::noop_waker_ref());
        assert!(service.poll_ready(&mut cx).is_pending());
    }

    #[test]
    fn a_service_error_exposes_its_source() {
        use std::error::Error as _;

        let inner = std::io::Error::other("disk full");
        let err: ServiceError<std::io::Error> = ServiceError::Service(inner);
        assert_eq!(err.source().unwrap().to_string(), "disk full");
        assert_eq!(err.to_string(), "disk full");
        let limited: ServiceError<std::io::Error> =
            ServiceError::RateLimited(fixed_window::RateLimiterError::Interrupted { name: "svc" });
        assert!(
            limited
                .source()
                .unwrap()
                .to_string()
                .contains("interrupted")
        );
    }

    #[test]
    fn layers_and_services_print_their_limiter() {
        let limiter = Arc::new(RateLimiter::of("printed", 1, Duration::from_secs(1)).unwrap());
        let layer = RateLimitLayer::new(limiter);
        assert!(format!("{layer:?}").contains("printed"));
        assert!(format!("{:?}", layer.clone().layer(Busy)).contains("printed"));
    }
}

#[cfg(feature = "tower")]
mod keyed_tower_layer {
    use core::time::Duration;
    use std::net::{IpAddr, Ipv4Addr};
    use std::sync::Arc;

    use fixed_window::{KeyedRateLimitLayer, KeyedRateLimiter, KeyedServiceError, ManualClock};
    use tower::{Service, ServiceBuilder, ServiceExt};

    struct Request {
        client: IpAddr,
        path: &'static str,
    }

    #[test]
    fn each_client_gets_its_own_limit_in_a_tower_stack() {
        let clock = ManualClock::new();
        let per_client = Arc::new(
            KeyedRateLimiter::of("per-client", 2, Duration::from_secs(1))
                .unwrap()
                .with_clock(clock.clone()),
        );
        let mut service = ServiceBuilder::new()
            .layer(KeyedRateLimitLayer::new(per_client, |request: &Request| {
                request.client
            }))
            .service_fn(|request: Request| async move { Ok::<_, std::io::Error>(request.path) });
        let alice = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
        let bob = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));
        futures::executor::block_on(async {
            for _ in 0..2 {
                let request = Request {
                    client: alice,
                    path: "/a",
                };
                assert_eq!(
                    service.ready().await.unwrap().call(request).await.unwrap(),
                    "/a"
                );
            }
            let request = Request {
                client: alice,
                path: "/a",
            };
            match service.ready().await.unwrap().call(request).await {
                Err(KeyedServiceError::RateLimited(err)) => {
                    assert_eq!(*err.key(), alice);
                    assert_eq!(err.retry_after(), Some(Duration::from_secs(1)));
                }
                other => panic!("expected alice to be limited, got {other:?}"),
            }
            let request = Request {
                client: bob,
                path: "/b",
            };
            assert_eq!(
                service.ready().await.unwrap().call(request).await.unwrap(),
                "/b"
            );
            clock.advance(Duration::from_secs(1));
            let request = Request {
                client: alice,
                path: "/a",
            };
            assert_eq!(
                service.ready().await.unwrap().call(request).await.unwrap(),
                "/a"
            );
        });
    }
}
