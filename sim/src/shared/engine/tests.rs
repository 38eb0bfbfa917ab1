//! The engine against Redis's scripting rules: commands, replies, globals and the budget.

use super::*;

fn run(
    text: &str,
    keyspace: &mut Keyspace,
    now_us: u64,
    keys: &[&str],
    args: &[&str],
) -> (Reply, Option<String>) {
    let sha = sha1_hex(text);
    with_engine(|engine| {
        engine.compile(&sha, text).expect("compiles");
        engine.run(
            &sha,
            keyspace,
            now_us,
            0,
            keys.iter().copied(),
            args.iter().copied(),
        )
    })
}

#[test]
fn time_reads_the_servers_clock_in_seconds_and_microseconds() {
    let mut keys = Keyspace::default();
    let (reply, _) = run("return redis.call('TIME')", &mut keys, 12_345_678, &[], &[]);
    assert_eq!(
        reply,
        Reply::Array(vec![Reply::Bulk("12".into()), Reply::Bulk("345678".into())])
    );
}

#[test]
fn set_with_nx_and_px_and_get_follow_redis() {
    let mut keys = Keyspace::default();
    let script = "local a = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', 5)
                  local b = redis.call('SET', KEYS[1], 'other', 'NX')
                  return { a.ok, tostring(b), redis.call('GET', KEYS[1]) }";
    let (reply, _) = run(script, &mut keys, 1_000, &["k"], &["v"]);
    assert_eq!(
        reply,
        Reply::Array(vec![
            Reply::Bulk("OK".into()),
            Reply::Bulk("false".into()),
            Reply::Bulk("v".into())
        ])
    );
    // Set at millisecond 1 for 5 ms: alive through millisecond 6.
    let get = "return redis.call('GET', KEYS[1])";
    assert_eq!(
        run(get, &mut keys, 6_999, &["k"], &[]).0,
        Reply::Bulk("v".into())
    );
    assert_eq!(run(get, &mut keys, 7_000, &["k"], &[]).0, Reply::Nil);
}

#[test]
fn set_with_keepttl_keeps_the_keys_expiry_and_refuses_px_beside_it() {
    let mut keys = Keyspace::default();
    let script = "redis.call('SET', KEYS[1], 'a', 'PX', 5)
                  redis.call('SET', KEYS[1], 'b', 'KEEPTTL')
                  redis.call('SET', KEYS[2], 'c', 'KEEPTTL')
                  return 1";
    run(script, &mut keys, 1_000, &["k", "fresh"], &[]);
    // Set at millisecond 1 for 5 ms, kept by the second write; a key that did not exist
    // gets no expiry from KEEPTTL.
    assert_eq!(
        keys.live(0),
        [("fresh".into(), None), ("k".into(), Some(6))]
    );
    let (reply, what) = run(
        "return redis.call('SET', KEYS[1], 'v', 'KEEPTTL', 'PX', 5)",
        &mut keys,
        0,
        &["k"],
        &[],
    );
    assert!(
        matches!(&reply, Reply::Error(m) if m.contains("syntax error")),
        "{reply:?}"
    );
    assert_eq!(what, None);
}

#[test]
fn number_arguments_become_the_text_redis_prints() {
    let mut keys = Keyspace::default();
    let script = "redis.call('SET', KEYS[1], 0.1)
                  redis.call('SET', KEYS[2], 12345678)
                  redis.call('SET', KEYS[3], -0.0)
                  return { redis.call('GET', KEYS[1]), redis.call('GET', KEYS[2]),
                           redis.call('GET', KEYS[3]) }";
    let (reply, _) = run(script, &mut keys, 0, &["a", "b", "c"], &[]);
    assert_eq!(
        reply,
        Reply::Array(vec![
            Reply::Bulk("0.10000000000000001".into()),
            Reply::Bulk("12345678".into()),
            Reply::Bulk("-0".into()),
        ])
    );
}

#[test]
fn a_script_replacing_string_format_does_not_reach_the_commands() {
    // `redis.call` prints a number with Lua's own `string.format`, taken at install, in a
    // protected call: a script's replacement is neither called nor able to raise through
    // the command's frames.
    let mut keys = Keyspace::default();
    let script = "string.format = function() error('replaced') end
                  redis.call('SET', KEYS[1], 0.5)
                  return redis.call('GET', KEYS[1])";
    assert_eq!(
        run(script, &mut keys, 0, &["k"], &[]).0,
        Reply::Bulk("0.5".into())
    );
}

#[test]
fn numbers_are_truncated_and_tables_become_arrays_up_to_the_first_nil() {
    let mut keys = Keyspace::default();
    let (reply, _) = run(
        "return { 1, 2.9, -3.5, 'x', nil, 7 }",
        &mut keys,
        0,
        &[],
        &[],
    );
    assert_eq!(
        reply,
        Reply::Array(vec![
            Reply::Integer(1),
            Reply::Integer(2),
            Reply::Integer(-3),
            Reply::Bulk("x".into())
        ])
    );
    assert_eq!(
        run("return redis.error_reply('boom')", &mut keys, 0, &[], &[]).0,
        Reply::Error("boom".into())
    );
}

#[test]
fn commands_options_and_functions_not_modelled_are_refused_by_name() {
    let mut keys = Keyspace::default();
    for (script, refused) in [
        ("return redis.call('INCR', 'k')", "the command INCR"),
        (
            "return redis.call('set', 'k', 'v', 'EX', 1)",
            "SET option EX",
        ),
        ("return redis.pcall('GET', 'k')", "redis.pcall"),
        ("return redis.sha1hex('x')", "redis.sha1hex"),
    ] {
        let (reply, what) = run(script, &mut keys, 0, &[], &[]);
        assert_eq!(what.as_deref(), Some(refused), "{script}");
        assert!(
            matches!(&reply, Reply::Error(message) if message.contains("not modelled")),
            "{script}: {reply:?}"
        );
    }
    assert_eq!(keys.live(0), []);
}

#[test]
fn globals_are_guarded_and_runaway_scripts_stopped() {
    let mut keys = Keyspace::default();
    let (reply, _) = run("x = 1 return 1", &mut keys, 0, &[], &[]);
    assert!(
        matches!(&reply, Reply::Error(m) if m.contains("create global variable")),
        "{reply:?}"
    );
    let (reply, _) = run("return y", &mut keys, 0, &[], &[]);
    assert!(
        matches!(&reply, Reply::Error(m) if m.contains("nonexistent global")),
        "{reply:?}"
    );
    let (reply, _) = run("while true do end", &mut keys, 0, &[], &[]);
    assert!(
        matches!(&reply, Reply::Error(m) if m.contains("BUSY")),
        "{reply:?}"
    );
}

#[test]
fn tonumber_gives_luas_results_on_its_quick_path_and_off_it() {
    let mut keys = Keyspace::default();
    let script = "return { tonumber('12'), tonumber(' 12 '), tonumber('0x10'), tonumber('1e2'),
                           tonumber('ff', 16), tonumber('zz', 36), tonumber(7),
                           tonumber('x') == nil and 1 or 0 }";
    assert_eq!(
        run(script, &mut keys, 0, &[], &[]).0,
        Reply::Array(
            [12, 12, 16, 100, 255, 1295, 7, 1]
                .map(Reply::Integer)
                .to_vec()
        )
    );
}

#[test]
fn keys_and_argv_hold_only_this_calls_values() {
    let mut keys = Keyspace::default();
    let script = "return { #KEYS, #ARGV }";
    assert_eq!(
        run(
            script,
            &mut keys,
            0,
            &["a", "b", "c"],
            &["1", "2", "3", "4"]
        )
        .0,
        Reply::Array(vec![Reply::Integer(3), Reply::Integer(4)])
    );
    assert_eq!(
        run(script, &mut keys, 0, &["a"], &["1"]).0,
        Reply::Array(vec![Reply::Integer(1), Reply::Integer(1)])
    );
}
