//! What a README block runs against: the servers and the port the test gives it, in place of
//! the addresses the README writes (see `build.rs`), and the checks of a block that serves.

use std::cell::RefCell;
use std::fmt;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

use fixed_window_redis::redis;
use fixed_window_redis_test::{RedisCluster, RedisServer, ServerOptions};
use reqwest::StatusCode;
use sfv::{BareItem, List, ListEntry, Parser};

/// The addresses by which the READMEs mean "your Redis": replaced by the test's server. Any
/// other address (port 1, where nothing listens) is used as written.
const README_SERVERS: [&str; 2] = ["127.0.0.1:6379", "127.0.0.1:6380"];

/// The ACL user the README's TLS block connects as, as its `ACL SETUSER` line creates it.
const README_ACL: &str = "limiter on >secret resetkeys ~fixed-window:* resetchannels -@all \
                          +evalsha +script|load +time +get +set";

/// How long a served block may take to start listening.
const LISTEN_WITHIN: Duration = Duration::from_secs(20);

/// The most requests a served block's check sends before its limit must have answered 429.
const MAX_REQUESTS: i64 = 1_000;

/// One README block, as the build script found it.
#[derive(Debug)]
pub struct Block {
    /// The README it is in.
    pub readme: &'static str,
    /// The line of its opening fence.
    pub line: usize,
    /// Its text, as the README has it.
    pub text: &'static str,
}

impl fmt::Display for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} line {}", self.readme, self.line)
    }
}

/// The servers a block runs against, and the address a serving block listens on.
#[derive(Debug, Default)]
struct Environment {
    server: Mutex<Option<RedisServer>>,
    cluster: Mutex<Option<RedisCluster>>,
    listen: Option<SocketAddr>,
}

impl Environment {
    /// What `block` needs, read from the calls and addresses its text makes.
    fn for_block(block: &Block, listen: Option<SocketAddr>) -> Environment {
        let text = block.text;
        let mut environment = Environment {
            listen,
            ..Environment::default()
        };
        if text.contains("ClusterClient::new(") {
            let cluster =
                RedisCluster::start().unwrap_or_else(|err| panic!("{block}: a cluster: {err}"));
            environment.cluster = Mutex::new(Some(cluster));
        } else if README_SERVERS.iter().any(|address| text.contains(address)) {
            let options = if text.contains("rediss://") {
                ServerOptions::new()
                    .with_tls()
                    .with_password("admin")
                    .with_acl(README_ACL)
            } else if text.contains("allkeys-lru") {
                ServerOptions::new().with_maxmemory(100 << 20, "allkeys-lru")
            } else {
                ServerOptions::new()
            };
            let server = RedisServer::start_with(&options)
                .unwrap_or_else(|err| panic!("{block}: a server: {err}"));
            environment.server = Mutex::new(Some(server));
        }
        environment
    }

    /// Stops its servers, which a served block's thread would otherwise keep.
    fn stop(&self) {
        drop(
            self.server
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        drop(
            self.cluster
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
    }
}

thread_local! {
    /// The environment of the block running on this thread.
    static ENVIRONMENT: RefCell<Option<Arc<Environment>>> = const { RefCell::new(None) };
}

fn environment() -> Arc<Environment> {
    ENVIRONMENT
        .with(|current| current.borrow().clone())
        .expect("a block runs in an environment")
}

/// In place of `redis::Client::open(url)`: the test's server for the README's addresses (as
/// the URL's user and password, over TLS if the server speaks it), `url` itself otherwise.
///
/// # Errors
///
/// redis-rs's, for a URL it cannot read.
pub fn client(url: &str) -> redis::RedisResult<redis::Client> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let (user, address) = match rest.split_once('@') {
        Some((user, address)) => (Some(user), address),
        None => (None, rest),
    };
    let address = address.trim_end_matches('/');
    if !README_SERVERS.contains(&address) {
        return redis::Client::open(url);
    }
    let environment = environment();
    let server = environment
        .server
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let server = server
        .as_ref()
        .expect("the block's text names a README server");
    match user.and_then(|user| user.split_once(':')) {
        Some((user, password)) => server.client_as(user, password),
        None => server.client(),
    }
}

/// In place of `redis::cluster::ClusterClient::new(nodes)`: the test's cluster.
///
/// # Errors
///
/// redis-rs's.
pub fn cluster_client<T>(_nodes: T) -> redis::RedisResult<redis::cluster::ClusterClient> {
    let environment = environment();
    let cluster = environment
        .cluster
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    cluster
        .as_ref()
        .expect("the block makes a cluster client")
        .client()
}

/// In place of `tokio::net::TcpListener::bind(address)`: the test's free port.
///
/// # Errors
///
/// If the port cannot be bound.
pub async fn bind(_address: &str) -> std::io::Result<tokio::net::TcpListener> {
    let listen = environment().listen.expect("a served block has an address");
    tokio::net::TcpListener::bind(listen).await
}

/// What a block's `main` returns: nothing, or a result that must be `Ok`.
pub trait Outcome {
    /// Panics, naming `block`, if it is an error.
    fn check(self, block: &Block);
}

impl Outcome for () {
    fn check(self, _block: &Block) {}
}

impl<E: fmt::Debug> Outcome for Result<(), E> {
    fn check(self, block: &Block) {
        if let Err(err) = self {
            panic!("{block} failed: {err:?}");
        }
    }
}

/// Runs `block` to its end on this thread, with the servers it needs.
pub fn run<T: Outcome>(block: &Block, main: fn() -> T) {
    let environment = Arc::new(Environment::for_block(block, None));
    ENVIRONMENT.with(|current| *current.borrow_mut() = Some(Arc::clone(&environment)));
    main().check(block);
    ENVIRONMENT.with(|current| current.borrow_mut().take());
    environment.stop();
}

/// Serves `block` on a free loopback port and checks its answers: 200s with the `RateLimit`
/// fields, as many as the policy's quota, then a 429 with `Retry-After` and both fields.
pub fn serve<E: fmt::Debug + 'static>(block: &'static Block, main: fn() -> Result<(), E>) {
    let port = RedisServer::free_port().expect("a free port");
    let listen = SocketAddr::from(([127, 0, 0, 1], port));
    let environment = Arc::new(Environment::for_block(block, Some(listen)));
    let (ended, end) = mpsc::channel();
    let served = Arc::clone(&environment);
    // The block serves until the process ends; its thread is never joined.
    std::thread::spawn(move || {
        ENVIRONMENT.with(|current| *current.borrow_mut() = Some(served));
        let outcome = main().map_err(|err| format!("{err:?}"));
        let _ = ended.send(outcome);
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let checked = runtime.block_on(check_served(block, listen, &end));
    environment.stop();
    if let Err(message) = checked {
        panic!("{block}: {message}");
    }
}

async fn check_served(
    block: &Block,
    listen: SocketAddr,
    end: &mpsc::Receiver<Result<(), String>>,
) -> Result<(), String> {
    let client = reqwest::Client::new();
    let url = format!("http://{listen}/");
    let started = Instant::now();
    let first = loop {
        if let Ok(outcome) = end.try_recv() {
            return Err(format!("stopped serving: {outcome:?}"));
        }
        match client.get(&url).send().await {
            Ok(response) => break response,
            Err(_) if started.elapsed() < LISTEN_WITHIN => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(err) => return Err(format!("not listening after {LISTEN_WITHIN:?}: {err}")),
        }
    };
    if first.status() != StatusCode::OK {
        return Err(format!("the first request: {}", first.status()));
    }
    let policy = item(&first, "ratelimit-policy")?;
    let quota = parameter(&policy, "q")?;
    let window = parameter(&policy, "w")?;
    let state = item(&first, "ratelimit")?;
    if parameter(&state, "r")? != quota - 1 {
        return Err(format!("the first request leaves {state:?} of {policy:?}"));
    }
    let mut permitted: i64 = 1;
    let limited = loop {
        let response = client
            .get(&url)
            .send()
            .await
            .map_err(|err| err.to_string())?;
        match response.status() {
            StatusCode::OK => permitted += 1,
            StatusCode::TOO_MANY_REQUESTS => break response,
            other => return Err(format!("request {}: {other}", permitted + 1)),
        }
        if permitted > MAX_REQUESTS {
            return Err(format!("no 429 after {MAX_REQUESTS} requests"));
        }
    };
    if permitted != quota {
        return Err(format!(
            "{permitted} requests permitted, the policy says q={quota}"
        ));
    }
    let retry_after: i64 = limited
        .headers()
        .get("retry-after")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse().ok())
        .ok_or("a 429 without a Retry-After of whole seconds")?;
    if !(1..=window).contains(&retry_after) {
        return Err(format!("Retry-After {retry_after}, the window {window} s"));
    }
    if item(&limited, "ratelimit-policy")? != policy {
        return Err("the 429's policy differs from the 200's".to_owned());
    }
    let exhausted = item(&limited, "ratelimit")?;
    if parameter(&exhausted, "r")? != 0 || !(1..=window).contains(&parameter(&exhausted, "t")?) {
        return Err(format!("the 429's RateLimit field: {exhausted:?}"));
    }
    eprintln!(
        "{block}: {permitted} permitted of q={quota}, then 429 with Retry-After {retry_after}"
    );
    Ok(())
}

/// The one member of field `name`, a policy's name with its Integer parameters, read by the
/// structured-field grammar (RFC 9651) the IETF draft defines the field in.
fn item(response: &reqwest::Response, name: &str) -> Result<(String, Vec<(String, i64)>), String> {
    let value = response
        .headers()
        .get(name)
        .ok_or(format!("no {name} field"))?
        .to_str()
        .map_err(|err| err.to_string())?;
    let list: List = Parser::new(value)
        .parse()
        .map_err(|err| format!("{name}: {value:?}: {err}"))?;
    let [ListEntry::Item(item)] = list.as_slice() else {
        return Err(format!("{name}: {value:?} is not one item"));
    };
    let BareItem::String(policy) = &item.bare_item else {
        return Err(format!(
            "{name}: {value:?} does not name its policy with a String"
        ));
    };
    let params = item
        .params
        .iter()
        .map(|(key, bare)| match bare {
            BareItem::Integer(integer) => Ok((key.as_str().to_owned(), i64::from(*integer))),
            _ => Err(format!(
                "{name}: {value:?}: {} is not an Integer",
                key.as_str()
            )),
        })
        .collect::<Result<_, _>>()?;
    Ok((policy.as_str().to_owned(), params))
}

fn parameter(item: &(String, Vec<(String, i64)>), key: &str) -> Result<i64, String> {
    item.1
        .iter()
        .find_map(|(name, value)| (name == key).then_some(*value))
        .ok_or(format!("{item:?} has no {key}"))
}
