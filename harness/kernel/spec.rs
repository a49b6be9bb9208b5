//! The `name:key=value,...` form the kernels outside the ladder take wherever a spec is accepted (`stream`,
//! `skinny`); the ladder's own switches are declared in switches.rs.

use crate::error::{config_err, Error, Result};

/// The key=value pairs of `spec` where it names `kernel` (the bare name: none); None where it names something else.
pub fn switches<'a>(spec: &'a str, kernel: &str) -> Option<Result<Vec<(&'a str, &'a str)>>> {
    let (head, changes) = spec.split_once(':').unwrap_or((spec, ""));
    if !head.trim().eq_ignore_ascii_case(kernel) {
        return None;
    }
    Some(
        changes
            .split(',')
            .filter(|change| !change.trim().is_empty())
            .map(|change| {
                change
                    .split_once('=')
                    .map(|(key, value)| (key.trim(), value.trim()))
                    .ok_or_else(|| {
                        Error::Config(format!("`{change}` in `{spec}` is not key=value"))
                    })
            })
            .collect(),
    )
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
