//! The `RateLimit-Policy` and `RateLimit` fields read back by the grammar the IETF draft
//! (draft-ietf-httpapi-ratelimit-headers-10) defines them in: structured-field lists (RFC 9651)
//! whose members are items, the policy's name as a String with Integer parameters (`q` and
//! `w`; `r` and `t`). A structured-field parser (`sfv`) reads them, not a comparison with the
//! strings this crate writes, so a field a client's parser would refuse fails here.

use core::time::Duration;
use std::sync::Arc;

use fixed_window::http::{AllRequests, HttpRateLimitLayer, MAX_SECONDS, RateLimitFields};
use fixed_window::{KeyedRateLimiter, RateLimiter};
use http::{HeaderMap, HeaderValue, Request, Response};
use proptest::prelude::*;
use sfv::{BareItem, List, ListEntry, Parser};
use tower::{ServiceBuilder, ServiceExt};

/// One member of a field: the policy's name and its Integer parameters, in order.
#[derive(Debug, PartialEq, Eq)]
struct Member {
    name: String,
    params: Vec<(String, i64)>,
}

/// `value` parsed as the draft's list of policy items; an error names what the grammar refused.
fn members(value: &str) -> Result<Vec<Member>, String> {
    let list: List = Parser::new(value)
        .parse()
        .map_err(|err| format!("{value:?} is no structured-field list: {err}"))?;
    list.into_iter()
        .map(|entry| {
            let ListEntry::Item(item) = entry else {
                return Err(format!("{value:?}: an inner list, not an item"));
            };
            let BareItem::String(name) = &item.bare_item else {
                return Err(format!("{value:?}: the policy's name is not a String"));
            };
            let params = item
                .params
                .iter()
                .map(|(key, bare)| match bare {
                    BareItem::Integer(integer) => {
                        Ok((key.as_str().to_owned(), i64::from(*integer)))
                    }
                    _ => Err(format!(
                        "{value:?}: parameter {} is not an Integer",
                        key.as_str()
                    )),
                })
                .collect::<Result<_, _>>()?;
            Ok(Member {
                name: name.as_str().to_owned(),
                params,
            })
        })
        .collect()
}

fn text(value: &HeaderValue) -> &str {
    value.to_str().expect("a field of visible ASCII")
}

/// Every value of field `name`, combined into one as RFC 9110 §5.3 says a recipient may.
fn combined(headers: &HeaderMap, name: &str) -> String {
    headers
        .get_all(name)
        .iter()
        .map(text)
        .collect::<Vec<_>>()
        .join(", ")
}

fn member(name: &str, params: &[(&str, i64)]) -> Member {
    Member {
        name: name.to_owned(),
        params: params
            .iter()
            .map(|(key, value)| ((*key).to_owned(), *value))
            .collect(),
    }
}

fn seconds(expected: u64) -> i64 {
    i64::try_from(expected.min(MAX_SECONDS)).expect("at most 15 digits")
}

fn seconds_up(duration: Duration) -> u64 {
    duration.as_secs() + u64::from(duration.subsec_nanos() > 0)
}

#[test]
fn a_policy_and_its_state_are_one_item_each() {
    let fields = RateLimitFields::new("api", 100, Duration::from_secs(60));
    assert_eq!(
        members(text(&fields.policy())),
        Ok(vec![member("api", &[("q", 100), ("w", 60)])])
    );
    assert_eq!(
        members(text(&fields.rate_limit(42, Duration::from_millis(12_300)))),
        Ok(vec![member("api", &[("r", 42), ("t", 13)])])
    );
}

#[test]
fn quotes_and_backslashes_in_a_name_come_back_as_written() {
    let fields = RateLimitFields::new("a \"quoted\" \\ name", 1, Duration::from_secs(1));
    let parsed = members(text(&fields.policy())).expect("a valid list");
    assert_eq!(parsed[0].name, "a \"quoted\" \\ name");
}

#[test]
fn a_name_outside_printable_ascii_still_makes_a_valid_field() {
    let fields = RateLimitFields::new("naïve\n", 1, Duration::from_secs(1));
    let parsed = members(text(&fields.policy())).expect("a valid list");
    assert_eq!(parsed[0].name, "na?ve?");
}

#[test]
fn stacked_layers_each_add_a_member_of_one_list() {
    let global = Arc::new(RateLimiter::of("global", 1_000, Duration::from_secs(1)).expect("valid"));
    let per_key = Arc::new(
        KeyedRateLimiter::<String>::of("per-key", 2, Duration::from_secs(60)).expect("valid"),
    );
    let key = fixed_window::http::FromFn::new(|_: &Request<String>| Some(String::from("k")));
    let service = ServiceBuilder::new()
        .layer(HttpRateLimitLayer::new(global, AllRequests))
        .layer(HttpRateLimitLayer::new(per_key, key))
        .service_fn(|_: Request<String>| async {
            Ok::<_, std::convert::Infallible>(Response::new(String::new()))
        });
    let response = futures::executor::block_on(service.oneshot(Request::new(String::new())))
        .expect("infallible");
    let policies =
        members(&combined(response.headers(), "ratelimit-policy")).expect("a valid list");
    let mut names: Vec<&str> = policies.iter().map(|policy| policy.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["global", "per-key"]);
    let states = members(&combined(response.headers(), "ratelimit")).expect("a valid list");
    assert_eq!(states.len(), 2);
    for state in states {
        let keys: Vec<&str> = state.params.iter().map(|(key, _)| key.as_str()).collect();
        assert_eq!(keys, ["r", "t"], "{state:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any name, limit, period and reset: the fields parse, and say what was configured
    /// (seconds rounded up, at most 15 digits).
    #[test]
    fn any_configuration_makes_fields_the_grammar_accepts(
        name in "[ -~]{0,24}",
        limit in any::<u32>(),
        period in (any::<u64>(), 0..1_000_000_000u32).prop_map(|(secs, nanos)| Duration::new(secs, nanos)),
        remaining in any::<u32>(),
        reset in any::<u64>().prop_map(Duration::from_nanos),
    ) {
        let name: &'static str = Box::leak(name.into_boxed_str());
        let fields = RateLimitFields::new(name, limit, period);
        let policy = members(text(&fields.policy()));
        prop_assert_eq!(policy, Ok(vec![member(name, &[("q", i64::from(limit)), ("w", seconds(seconds_up(period)))])]));
        let state = members(text(&fields.rate_limit(remaining, reset)));
        prop_assert_eq!(state, Ok(vec![member(name, &[("r", i64::from(remaining)), ("t", seconds(seconds_up(reset)))])]));
    }
}
