//! Whole numbers written as floats (`696.0`). JSON Schema's `integer` admits them and some
//! clients' JSON encoders write them, so integer fields of requests take them; a fraction, a
//! value out of the field's range or anything but a number is still refused.

use serde::de::Error;
use serde::{Deserialize, Deserializer};
use serde_json::Number;

/// For `Option<integer>` fields (with `#[serde(default)]`): absent or `null` is `None`.
pub fn option<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<i64> + TryFrom<u64>,
{
    Option::<Number>::deserialize(deserializer)?
        .map(|n| whole(&n))
        .transpose()
}

/// For required integer fields.
pub fn required<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<i64> + TryFrom<u64>,
{
    whole(&Number::deserialize(deserializer)?)
}

/// The largest float every integer up to which is exact (2^53).
const EXACT: f64 = 9_007_199_254_740_992.0;

fn whole<T, E>(n: &Number) -> Result<T, E>
where
    T: TryFrom<i64> + TryFrom<u64>,
    E: Error,
{
    let out_of_range = || E::custom(format!("invalid value: {n} is out of range"));
    if let Some(u) = n.as_u64() {
        return T::try_from(u).map_err(|_| out_of_range());
    }
    if let Some(i) = n.as_i64() {
        return T::try_from(i).map_err(|_| out_of_range());
    }
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() <= EXACT => {
            T::try_from(f as i64).map_err(|_| out_of_range())
        }
        _ => Err(E::custom(format!(
            "invalid value: {n}, expected a whole number"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    struct Fields {
        #[serde(default, deserialize_with = "super::option")]
        lease: Option<u64>,
        #[serde(deserialize_with = "super::required")]
        seq: i64,
    }

    fn parse(json: &str) -> Result<Fields, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn integers_and_whole_floats_are_taken() {
        let f = parse(r#"{"lease": 696.0, "seq": -3.0}"#).unwrap();
        assert_eq!((f.lease, f.seq), (Some(696), -3));
        let f = parse(r#"{"lease": null, "seq": 7}"#).unwrap();
        assert_eq!((f.lease, f.seq), (None, 7));
        assert_eq!(parse(r#"{"seq": 1e3}"#).unwrap().seq, 1000);
    }

    #[test]
    fn fractions_out_of_range_values_and_strings_are_refused() {
        assert!(parse(r#"{"seq": 1.5}"#)
            .unwrap_err()
            .contains("whole number"));
        assert!(parse(r#"{"lease": -1, "seq": 0}"#)
            .unwrap_err()
            .contains("out of range"));
        assert!(parse(r#"{"seq": 1e300}"#)
            .unwrap_err()
            .contains("whole number"));
        assert!(parse(r#"{"seq": "7"}"#).is_err());
    }
}
