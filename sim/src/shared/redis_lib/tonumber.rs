//! A quicker `tonumber` than Lua's, with Lua's own results: the limiter's script reads every
//! number it is given through it.

use core::ffi::c_int;

use mlua::ffi;

use super::bytes;

/// `tonumber(s [, base])`, as Lua 5.1's own gives it, but reading a string of decimal (base
/// 10) or hexadecimal (base 16) digits short enough to be exact itself: Lua's reads every
/// decimal twice with C's `strtod`, which costs more than the rest of the limiter's script.
/// Anything else goes to Lua's `tonumber` (the closure's upvalue).
///
/// Lua calls it on a C function's stack (the `n` arguments at 1..=n, room for `LUA_MINSTACK`
/// (20) more values), with Lua's own `tonumber` as upvalue 1 (`install` put it there). Slot 1
/// is read as bytes only after `lua_type` says it is a string, and slot 2 only if `n` >= 2;
/// `lua_call` gets the `n` arguments below the function it calls. Nothing with a destructor
/// lives in this frame if Lua's `tonumber` raises an error.
pub(super) unsafe extern "C-unwind" fn tonumber(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: a C function's stack with Lua's `tonumber` as upvalue 1; slots read only as
    // their types allow, and nothing to drop if it raises (see above; the unwinding rule).
    unsafe {
        let n = ffi::lua_gettop(state);
        if ffi::lua_type(state, 1) == ffi::LUA_TSTRING {
            let base = match (n, ffi::lua_type(state, 2)) {
                (1, _) => Some(10),
                (_, ffi::LUA_TNUMBER) => match ffi::lua_tonumber(state, 2) {
                    10.0 => Some(10),
                    16.0 => Some(16),
                    _ => None,
                },
                _ => None,
            };
            if let Some(value) = base.and_then(|base| exact_digits(bytes(state, 1), base)) {
                ffi::lua_pushnumber(state, value);
                return 1;
            }
        }
        ffi::lua_pushvalue(state, ffi::lua_upvalueindex(1));
        ffi::lua_insert(state, 1);
        ffi::lua_call(state, n, 1);
        1
    }
}

/// The value of `digits` in `base` (10 or 16) if they are nothing but digits, at most 16 of
/// them, and the value is at most 2^53, where a double holds every integer exactly (as Lua's
/// `strtod` or `strtoul` would read it).
fn exact_digits(digits: &[u8], base: u32) -> Option<f64> {
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    let mut value: u64 = 0;
    for &digit in digits {
        value = value * u64::from(base) + u64::from(char::from(digit).to_digit(base)?);
    }
    // At most 2^53: exact.
    #[allow(clippy::cast_precision_loss)]
    (value <= 1 << 53).then_some(value as f64)
}

#[cfg(test)]
mod tests {
    use super::exact_digits;

    #[test]
    fn the_quick_tonumber_reads_what_luas_own_reads() {
        let lua = mlua::Lua::new();
        let original: mlua::Function = lua.globals().get("tonumber").expect("Lua's tonumber");
        let inputs = [
            "0",
            "7",
            "42",
            "0042",
            "999999999999999",
            "1698796800000000",
            "9007199254740992",
            "9007199254740993",
            "99999999999999999",
            "1000000",
            "ff",
            "FF",
            "1a2B",
            "20000000000000",
            "20000000000001",
            "fffffffffffff",
            "",
            " 1",
            "1 ",
            "-1",
            "+1",
            "1e5",
            "0x10",
            "1.5",
            "1_0",
            "inf",
            "nan",
            "12\u{0}3",
            "z",
        ];
        for text in inputs {
            for base in [10, 16] {
                let theirs: Option<f64> = original.call((text, base)).expect("tonumber");
                if let Some(ours) = exact_digits(text.as_bytes(), base) {
                    assert_eq!(Some(ours), theirs, "{text:?} in base {base}");
                }
            }
        }
        assert_eq!(
            exact_digits(b"1698796800000000", 10),
            Some(1_698_796_800_000_000.0)
        );
        assert_eq!(
            exact_digits(b"20000000000000", 16),
            Some(9_007_199_254_740_992.0)
        );
        // Past 2^53, or not digits: left to Lua's own.
        for (text, base) in [
            ("9007199254740993", 10),
            ("99999999999999999", 10),
            ("20000000000001", 16),
            (" 1", 10),
        ] {
            assert_eq!(exact_digits(text.as_bytes(), base), None, "{text}");
        }
        assert_eq!(exact_digits(b"1a", 10), None);
    }
}
