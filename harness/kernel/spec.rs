//! The `name:key=value,...` form of a spec: its changes, read one way for the ladder's rungs and the kernels
//! outside the ladder (`stream`, `skinny`); the ladder's own switches are declared in switches.rs.

use crate::error::{config_err, Error, Result};

/// The key=value pairs of `spec` where it names `kernel` (the bare name: none); None where it names something else.
pub fn switches<'a>(spec: &'a str, kernel: &str) -> Option<Result<Vec<(&'a str, &'a str)>>> {
    let head = spec.split_once(':').map_or(spec, |(head, _)| head);
    if !head.trim().eq_ignore_ascii_case(kernel) {
        return None;
    }
    Some(changes(spec))
}

/// The `key=value` changes after a spec's colon, in order (none without a colon). Nothing after the colon, or an
/// empty change between commas, is refused: `8:` and `8:stages=4,,pingpong=0` are typos, not requests.
pub fn changes(spec: &str) -> Result<Vec<(&str, &str)>> {
    match spec.split_once(':') {
        Some((_, list)) => changes_in(spec, list),
        None => Ok(Vec::new()),
    }
}

/// The `key=value` changes of `list`, the part of `spec` after the colon that starts them (`ext:NAME:list`), none
/// empty. A key given twice takes its last value: a spec extended with overrides (`auto`'s spec, then
/// `,stages=4`) is how the trials write their variants.
pub fn changes_in<'a>(spec: &str, list: &'a str) -> Result<Vec<(&'a str, &'a str)>> {
    if list.trim().is_empty() {
        return Err(Error::Config(format!(
            "`{spec}` has nothing after its colon: give key=value changes, or leave the colon out"
        )));
    }
    list.split(',')
        .map(|change| {
            if change.trim().is_empty() {
                return Err(Error::Config(format!(
                    "an empty change in `{spec}` (a doubled or trailing comma?)"
                )));
            }
            change
                .split_once('=')
                .map(|(key, value)| (key.trim(), value.trim()))
                .ok_or_else(|| Error::Config(format!("`{change}` in `{spec}` is not key=value")))
        })
        .collect()
}

/// A switch's value as a whole number.
pub fn whole(spec: &str, key: &str, value: &str) -> Result<u32> {
    value
        .parse::<u32>()
        .map_err(|_| Error::Config(format!("`{key}={value}` in `{spec}`: not a whole number")))
}

/// A switch's value as on (1) or off (0).
pub fn flag(spec: &str, key: &str, value: &str) -> Result<bool> {
    match value {
        "0" | "1" => Ok(value == "1"),
        _ => config_err(format!("`{key}={value}` in `{spec}`: 0 or 1")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_names_its_kernel_and_its_pairs() {
        assert_eq!(switches("stream", "stream").unwrap().unwrap(), vec![]);
        assert_eq!(
            switches("Stream: unroll = 2 ,hint=nc", "stream")
                .unwrap()
                .unwrap(),
            vec![("unroll", "2"), ("hint", "nc")]
        );
        assert!(switches("streamk", "stream").is_none());
        assert!(switches("stream:unroll", "stream")
            .unwrap()
            .unwrap_err()
            .to_string()
            .contains("not key=value"));
        assert_eq!(whole("s", "k", "12").unwrap(), 12);
        assert!(whole("s", "k", "-1").is_err());
        assert!(flag("s", "k", "1").unwrap());
        assert!(flag("s", "k", "yes").is_err());
    }
}
