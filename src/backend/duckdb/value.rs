//! DuckDB values → JSON, and DuckDB type names. Pure.
//!
//! A value arrives as the `duckdb` crate's owned [`DuckValue`] (nested lists,
//! structs, maps and unions already converted), and is read with the column's
//! [`DuckType`] as DuckDB declared it: the crate's values pass through Arrow,
//! which loses what the type still says (a `TIMESTAMP WITH TIME ZONE` is a
//! plain timestamp there, a `UHUGEINT` inside a list a signed one).
//!
//! - `BOOLEAN` → bool; integers → numbers; `HUGEINT`/`UHUGEINT` → a number
//!   within ±2^53, else a string of the exact digits;
//! - `DECIMAL` → its exact digits, scale kept (`12.30`): a number up to 15
//!   significant digits, else a string;
//! - `FLOAT`/`DOUBLE` → numbers, `NaN`/`Infinity`/`-Infinity` as strings;
//! - `DATE`, `TIME`, `TIMESTAMP` (any unit) as PostgreSQL writes them
//!   (`2024-01-02 03:04:05.5`, `+00` for `WITH TIME ZONE`, ` BC` before year 1,
//!   `infinity`); `INTERVAL` in DuckDB's text (`1 year 2 months 3 days 04:05:06`);
//! - `BLOB` → `\x` hex; `UUID`, `ENUM`, `VARCHAR` → text;
//! - `LIST`/`ARRAY` → arrays, `STRUCT` → objects, `MAP` → an object when its
//!   keys are text, else an array of `{"key", "value"}`; `UNION` → its value.

use duckdb::types::{TimeUnit, Value as DuckValue};
use serde_json::{Map, Number, Value};

use crate::backend::embedded::hex;

/// A column's type as DuckDB declared it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DuckType {
    Boolean,
    TinyInt,
    SmallInt,
    Integer,
    BigInt,
    UTinyInt,
    USmallInt,
    UInteger,
    UBigInt,
    HugeInt,
    UHugeInt,
    Float,
    Double,
    Decimal {
        width: u8,
        scale: u8,
    },
    Date,
    Time,
    TimeNs,
    TimeTz,
    Timestamp(TimeUnit),
    TimestampTz,
    Interval,
    Varchar,
    Blob,
    Uuid,
    Bit,
    Bignum,
    /// The labels, for the type's name when it has no alias.
    Enum(Vec<String>),
    List(Box<DuckType>),
    Array(Box<DuckType>, u64),
    Struct(Vec<(String, DuckType)>),
    Map(Box<DuckType>, Box<DuckType>),
    Union(Vec<(String, DuckType)>),
    /// The type of a bare `NULL`.
    Null,
    /// Not known until the statement runs: its parameters decide it.
    Unknown,
    /// Anything else, by DuckDB's name for it.
    Other(String),
    /// A user-defined type name (`CREATE TYPE mood AS ENUM ...`) over its
    /// definition.
    Alias(String, Box<DuckType>),
}

impl DuckType {
    /// The name DuckDB gives the type: `INTEGER`, `DECIMAL(18,3)`,
    /// `VARCHAR[]`, `INTEGER[3]`, `STRUCT(a INTEGER, b VARCHAR)`,
    /// `MAP(VARCHAR, INTEGER)`, `TIMESTAMP WITH TIME ZONE`, ...
    pub fn name(&self) -> String {
        match self {
            DuckType::Boolean => "BOOLEAN".into(),
            DuckType::TinyInt => "TINYINT".into(),
            DuckType::SmallInt => "SMALLINT".into(),
            DuckType::Integer => "INTEGER".into(),
            DuckType::BigInt => "BIGINT".into(),
            DuckType::UTinyInt => "UTINYINT".into(),
            DuckType::USmallInt => "USMALLINT".into(),
            DuckType::UInteger => "UINTEGER".into(),
            DuckType::UBigInt => "UBIGINT".into(),
            DuckType::HugeInt => "HUGEINT".into(),
            DuckType::UHugeInt => "UHUGEINT".into(),
            DuckType::Float => "FLOAT".into(),
            DuckType::Double => "DOUBLE".into(),
            DuckType::Decimal { width, scale } => format!("DECIMAL({width},{scale})"),
            DuckType::Date => "DATE".into(),
            DuckType::Time => "TIME".into(),
            DuckType::TimeNs => "TIME_NS".into(),
            DuckType::TimeTz => "TIME WITH TIME ZONE".into(),
            DuckType::Timestamp(TimeUnit::Second) => "TIMESTAMP_S".into(),
            DuckType::Timestamp(TimeUnit::Millisecond) => "TIMESTAMP_MS".into(),
            DuckType::Timestamp(TimeUnit::Microsecond) => "TIMESTAMP".into(),
            DuckType::Timestamp(TimeUnit::Nanosecond) => "TIMESTAMP_NS".into(),
            DuckType::TimestampTz => "TIMESTAMP WITH TIME ZONE".into(),
            DuckType::Interval => "INTERVAL".into(),
            DuckType::Varchar => "VARCHAR".into(),
            DuckType::Blob => "BLOB".into(),
            DuckType::Uuid => "UUID".into(),
            DuckType::Bit => "BIT".into(),
            DuckType::Bignum => "BIGNUM".into(),
            DuckType::Enum(labels) if labels.is_empty() => "ENUM".into(),
            DuckType::Enum(labels) => {
                let labels: Vec<String> = labels.iter().map(|l| format!("'{}'", l.replace('\'', "''"))).collect();
                format!("ENUM({})", labels.join(", "))
            }
            DuckType::List(child) => format!("{}[]", child.name()),
            DuckType::Array(child, size) => format!("{}[{size}]", child.name()),
            DuckType::Struct(fields) => format!("STRUCT({})", fields_list(fields)),
            DuckType::Union(members) => format!("UNION({})", fields_list(members)),
            DuckType::Map(key, value) => format!("MAP({}, {})", key.name(), value.name()),
            DuckType::Null => "NULL".into(),
            DuckType::Unknown => "UNKNOWN".into(),
            DuckType::Other(name) => name.clone(),
            DuckType::Alias(name, _) => name.clone(),
        }
    }

    /// Whether the `duckdb` crate can read values of this type: its Arrow
    /// reader has no case for some (`TIME_NS`, a bare `NULL`), and loses
    /// what others hold (the offset of a `TIME WITH TIME ZONE`, the digits of
    /// a `BIGNUM`). Such columns are read as DuckDB's text instead.
    pub fn readable(&self) -> bool {
        match self {
            DuckType::TimeNs | DuckType::TimeTz | DuckType::Bignum | DuckType::Null | DuckType::Other(_) => false,
            DuckType::List(child) | DuckType::Array(child, _) => child.readable(),
            DuckType::Map(key, value) => key.readable() && value.readable(),
            DuckType::Struct(fields) | DuckType::Union(fields) => fields.iter().all(|(_, t)| t.readable()),
            DuckType::Alias(_, inner) => inner.readable(),
            _ => true,
        }
    }

    /// The type under any alias.
    fn base(&self) -> &DuckType {
        match self {
            DuckType::Alias(_, inner) => inner.base(),
            other => other,
        }
    }
}

fn fields_list(fields: &[(String, DuckType)]) -> String {
    fields
        .iter()
        .map(|(name, ty)| format!("{} {}", crate::identifier::as_needed(name), ty.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A type nothing is known about: values convert by what they are.
pub(super) static UNKNOWN: DuckType = DuckType::Other(String::new());

/// The largest integer a JSON number carries exactly in every client (2^53).
const EXACT: i128 = 1 << 53;

/// Digits beyond this many make a decimal a string: doubles keep 15.
const DECIMAL_DIGITS: usize = 15;

/// DuckDB's infinite dates and timestamps.
const DATE_INFINITY: i32 = i32::MAX;
const TIMESTAMP_INFINITY: i64 = i64::MAX;

/// One value as JSON, read as `ty`.
pub fn to_json(value: DuckValue, ty: &DuckType) -> Value {
    let ty = ty.base();
    match value {
        DuckValue::Null => Value::Null,
        DuckValue::Boolean(b) => Value::Bool(b),
        DuckValue::TinyInt(i) => Value::from(i),
        DuckValue::SmallInt(i) => Value::from(i),
        DuckValue::Int(i) => Value::from(i),
        DuckValue::BigInt(i) => Value::from(i),
        DuckValue::UTinyInt(i) => Value::from(i),
        DuckValue::USmallInt(i) => Value::from(i),
        DuckValue::UInt(i) => Value::from(i),
        DuckValue::UBigInt(i) => Value::from(i),
        // Arrow carries UHUGEINT and DECIMAL(38,0) in the same 128 bits as
        // HUGEINT; the declared type says which it is.
        DuckValue::HugeInt(i) => match ty {
            DuckType::UHugeInt => unsigned_huge(i as u128),
            DuckType::Decimal { scale, .. } => decimal(i, *scale),
            _ => huge(i),
        },
        DuckValue::UHugeInt(u) => unsigned_huge(u),
        DuckValue::Float(f) => float(f64::from(f), format!("{f:?}")),
        DuckValue::Double(f) => float(f, format!("{f:?}")),
        DuckValue::Decimal(d) => decimal(d.value(), d.scale()),
        DuckValue::Timestamp(unit, t) => {
            let mut text = timestamp(unit, t);
            if matches!(ty, DuckType::TimestampTz) && !text.ends_with("infinity") {
                // Without ICU DuckDB's session time zone is UTC; say so, as
                // PostgreSQL does in UTC.
                match text.strip_suffix(" BC") {
                    Some(ad) => text = format!("{ad}+00 BC"),
                    None => text.push_str("+00"),
                }
            }
            Value::String(text)
        }
        DuckValue::Date32(days) => Value::String(date(days)),
        DuckValue::Time64(unit, t) => {
            let mut text = time_of_day(unit.to_micros(t), nanos_of(unit, t));
            if matches!(ty, DuckType::TimeTz) {
                text.push_str("+00");
            }
            Value::String(text)
        }
        DuckValue::Interval { months, days, nanos } => Value::String(interval(months, days, nanos / 1000)),
        DuckValue::Text(text) => Value::String(text),
        DuckValue::Enum(label) => Value::String(label),
        DuckValue::Blob(bytes) | DuckValue::Geometry(bytes) => match ty {
            DuckType::Bit => Value::String(bits(&bytes)),
            _ => Value::String(hex(&bytes)),
        },
        DuckValue::List(items) | DuckValue::Array(items) => {
            let child = match ty {
                DuckType::List(child) | DuckType::Array(child, _) => child.as_ref(),
                _ => &UNKNOWN,
            };
            Value::Array(items.into_iter().map(|v| to_json(v, child)).collect())
        }
        DuckValue::Struct(fields) => {
            let types = match ty {
                DuckType::Struct(types) => types.as_slice(),
                _ => &[],
            };
            let mut object = Map::new();
            for (i, (name, value)) in fields.iter().enumerate() {
                let field_type = types
                    .get(i)
                    .filter(|(n, _)| n == name)
                    .or_else(|| types.iter().find(|(n, _)| n == name))
                    .map_or(&UNKNOWN, |(_, t)| t);
                object.insert(name.clone(), to_json(value.clone(), field_type));
            }
            Value::Object(object)
        }
        DuckValue::Map(entries) => {
            let (key_type, value_type) = match ty {
                DuckType::Map(k, v) => (k.as_ref(), v.as_ref()),
                _ => (&UNKNOWN, &UNKNOWN),
            };
            let pairs: Vec<(Value, Value)> = entries
                .iter()
                .map(|(k, v)| (to_json(k.clone(), key_type), to_json(v.clone(), value_type)))
                .collect();
            if pairs.iter().all(|(k, _)| k.is_string()) {
                let mut object = Map::new();
                for (k, v) in pairs {
                    if let Value::String(k) = k {
                        object.insert(k, v);
                    }
                }
                Value::Object(object)
            } else {
                Value::Array(
                    pairs
                        .into_iter()
                        .map(|(k, v)| {
                            let mut entry = Map::new();
                            entry.insert("key".to_owned(), k);
                            entry.insert("value".to_owned(), v);
                            Value::Object(entry)
                        })
                        .collect(),
                )
            }
        }
        DuckValue::Union(inner) => {
            // The member's type is not known from the value alone; its value
            // converts the same way under any member type but a timestamp's.
            let member = match ty {
                DuckType::Union(members) => members.iter().map(|(_, t)| t).find(|t| compatible(&inner, t)),
                _ => None,
            };
            to_json(*inner, member.unwrap_or(&UNKNOWN))
        }
        // The crate's enum is non-exhaustive: a value it adds later comes out
        // as its debug text rather than failing the whole result.
        #[allow(unreachable_patterns)]
        other => Value::String(format!("{other:?}")),
    }
}

/// Whether `value` could be of union member type `ty`.
fn compatible(value: &DuckValue, ty: &DuckType) -> bool {
    matches!(
        (value, ty.base()),
        (DuckValue::Timestamp(..), DuckType::Timestamp(_) | DuckType::TimestampTz)
            | (
                DuckValue::Time64(..),
                DuckType::Time | DuckType::TimeNs | DuckType::TimeTz
            )
            | (
                DuckValue::HugeInt(_),
                DuckType::HugeInt | DuckType::UHugeInt | DuckType::Decimal { .. }
            )
            | (DuckValue::List(_), DuckType::List(_))
            | (DuckValue::Array(_), DuckType::Array(..))
            | (DuckValue::Struct(_), DuckType::Struct(_))
            | (DuckValue::Map(_), DuckType::Map(..))
    )
}

fn huge(i: i128) -> Value {
    if (-EXACT..=EXACT).contains(&i) {
        Value::from(i as i64)
    } else {
        Value::String(i.to_string())
    }
}

fn unsigned_huge(u: u128) -> Value {
    if u <= EXACT as u128 {
        Value::from(u as u64)
    } else {
        Value::String(u.to_string())
    }
}

/// A scaled integer's exact digits, scale kept: a JSON number when a double
/// holds it exactly in every client, else a string.
fn decimal(value: i128, scale: u8) -> Value {
    let digits = value.unsigned_abs().to_string();
    let scale = usize::from(scale);
    let magnitude = if scale == 0 {
        digits.clone()
    } else if digits.len() <= scale {
        format!("0.{}{digits}", "0".repeat(scale - digits.len()))
    } else {
        format!(
            "{}.{}",
            &digits[..digits.len() - scale],
            &digits[digits.len() - scale..]
        )
    };
    let text = if value < 0 { format!("-{magnitude}") } else { magnitude };
    let significant = digits.trim_start_matches('0').len();
    if significant <= DECIMAL_DIGITS {
        number(&text).unwrap_or(Value::String(text))
    } else {
        Value::String(text)
    }
}

/// A JSON number with exactly these digits (serde_json keeps them).
fn number(text: &str) -> Option<Value> {
    serde_json::from_str::<Number>(text).ok().map(Value::Number)
}

fn float(f: f64, shortest: String) -> Value {
    if f.is_nan() {
        Value::String("NaN".to_owned())
    } else if f.is_infinite() {
        Value::String(if f > 0.0 { "Infinity" } else { "-Infinity" }.to_owned())
    } else {
        number(&shortest).unwrap_or(Value::Null)
    }
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian
/// (Howard Hinnant's `civil_from_days`).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `YYYY-MM-DD`, or `YYYY-MM-DD BC` before year 1 (PostgreSQL's form).
fn date(days: i32) -> String {
    match days {
        DATE_INFINITY => "infinity".to_owned(),
        d if d == -DATE_INFINITY => "-infinity".to_owned(),
        d => {
            let (year, month, day) = civil(i64::from(d));
            if year <= 0 {
                format!("{:04}-{month:02}-{day:02} BC", 1 - year)
            } else {
                format!("{year:04}-{month:02}-{day:02}")
            }
        }
    }
}

/// The sub-microsecond nanoseconds a value in `unit` carries.
fn nanos_of(unit: TimeUnit, t: i64) -> u32 {
    match unit {
        TimeUnit::Nanosecond => t.rem_euclid(1000) as u32,
        _ => 0,
    }
}

/// `HH:MM:SS[.fraction]`, the fraction without trailing zeros.
fn time_of_day(micros: i64, extra_nanos: u32) -> String {
    let seconds = micros.div_euclid(1_000_000);
    let fraction = micros.rem_euclid(1_000_000) as u32 * 1000 + extra_nanos;
    let mut text = format!("{:02}:{:02}:{:02}", seconds / 3600, seconds / 60 % 60, seconds % 60);
    if fraction != 0 {
        let digits = format!("{fraction:09}");
        text.push('.');
        text.push_str(digits.trim_end_matches('0'));
    }
    text
}

fn timestamp(unit: TimeUnit, t: i64) -> String {
    if t == TIMESTAMP_INFINITY {
        return "infinity".to_owned();
    }
    if t == -TIMESTAMP_INFINITY {
        return "-infinity".to_owned();
    }
    let micros = match unit {
        TimeUnit::Second => i128::from(t) * 1_000_000,
        TimeUnit::Millisecond => i128::from(t) * 1000,
        TimeUnit::Microsecond => i128::from(t),
        TimeUnit::Nanosecond => i128::from(t).div_euclid(1000),
    };
    let days = micros.div_euclid(86_400_000_000) as i64;
    let of_day = micros.rem_euclid(86_400_000_000) as i64;
    let (year, month, day) = civil(days);
    let clock = time_of_day(of_day, nanos_of(unit, t));
    if year <= 0 {
        format!("{:04}-{month:02}-{day:02} {clock} BC", 1 - year)
    } else {
        format!("{year:04}-{month:02}-{day:02} {clock}")
    }
}

/// DuckDB's text for an interval: `1 year 2 months 3 days 04:05:06.789`.
fn interval(months: i32, days: i32, micros: i64) -> String {
    let mut parts: Vec<String> = Vec::new();
    let unit = |n: i64, name: &str| {
        let plural = if n == 1 || n == -1 { "" } else { "s" };
        format!("{n} {name}{plural}")
    };
    if months != 0 {
        let (years, rest) = (months / 12, months % 12);
        if years != 0 {
            parts.push(unit(i64::from(years), "year"));
        }
        if rest != 0 {
            parts.push(unit(i64::from(rest), "month"));
        }
    }
    if days != 0 {
        parts.push(unit(i64::from(days), "day"));
    }
    if micros != 0 {
        let sign = if micros < 0 { "-" } else { "" };
        let magnitude = micros.unsigned_abs();
        let seconds = magnitude / 1_000_000;
        let fraction = magnitude % 1_000_000;
        let mut clock = format!(
            "{sign}{:02}:{:02}:{:02}",
            seconds / 3600,
            seconds / 60 % 60,
            seconds % 60
        );
        if fraction != 0 {
            clock.push('.');
            clock.push_str(format!("{fraction:06}").trim_end_matches('0'));
        }
        parts.push(clock);
    }
    if parts.is_empty() {
        "00:00:00".to_owned()
    } else {
        parts.join(" ")
    }
}

/// A `BIT` string as DuckDB stores it: a first byte counting the padding
/// bits of the second, then the bits, most significant first.
fn bits(bytes: &[u8]) -> String {
    let Some((&padding, rest)) = bytes.split_first() else {
        return String::new();
    };
    let all: String = rest.iter().map(|b| format!("{b:08b}")).collect();
    all.get(usize::from(padding)..).unwrap_or_default().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use duckdb::types::{Decimal, OrderedMap};
    use serde_json::json;

    fn dec(width: u8, scale: u8, value: i128) -> DuckValue {
        DuckValue::Decimal(Decimal::new(width, scale, value).unwrap())
    }

    #[test]
    fn scalars() {
        let ts = DuckType::Timestamp(TimeUnit::Microsecond);
        let cases: Vec<(DuckValue, DuckType, &str)> = vec![
            (DuckValue::Null, DuckType::Integer, "null"),
            (DuckValue::Boolean(true), DuckType::Boolean, "true"),
            (DuckValue::TinyInt(-128), DuckType::TinyInt, "-128"),
            (DuckValue::BigInt(i64::MIN), DuckType::BigInt, "-9223372036854775808"),
            (DuckValue::UBigInt(u64::MAX), DuckType::UBigInt, "18446744073709551615"),
            (
                DuckValue::HugeInt(9_007_199_254_740_992),
                DuckType::HugeInt,
                "9007199254740992",
            ),
            (
                DuckValue::HugeInt(-9_007_199_254_740_992),
                DuckType::HugeInt,
                "-9007199254740992",
            ),
            (
                DuckValue::HugeInt(9_007_199_254_740_993),
                DuckType::HugeInt,
                "\"9007199254740993\"",
            ),
            (
                DuckValue::HugeInt(i128::MIN),
                DuckType::HugeInt,
                "\"-170141183460469231731687303715884105728\"",
            ),
            (
                DuckValue::HugeInt(-1),
                DuckType::UHugeInt,
                "\"340282366920938463463374607431768211455\"",
            ),
            (
                DuckValue::UHugeInt(u128::MAX),
                DuckType::UHugeInt,
                "\"340282366920938463463374607431768211455\"",
            ),
            (DuckValue::UHugeInt(7), DuckType::UHugeInt, "7"),
            (
                DuckValue::HugeInt(12345),
                DuckType::Decimal { width: 38, scale: 0 },
                "12345",
            ),
            (dec(4, 2, 1230), DuckType::Decimal { width: 4, scale: 2 }, "12.30"),
            (dec(18, 3, -5), DuckType::Decimal { width: 18, scale: 3 }, "-0.005"),
            (
                dec(15, 0, 999_999_999_999_999),
                DuckType::Decimal { width: 15, scale: 0 },
                "999999999999999",
            ),
            (
                dec(18, 2, 1_234_567_890_123_456),
                DuckType::Decimal { width: 18, scale: 2 },
                "\"12345678901234.56\"",
            ),
            (
                dec(38, 10, 123),
                DuckType::Decimal { width: 38, scale: 10 },
                "0.0000000123",
            ),
            (DuckValue::Float(1.1), DuckType::Float, "1.1"),
            (DuckValue::Double(0.1), DuckType::Double, "0.1"),
            (DuckValue::Double(2.0), DuckType::Double, "2.0"),
            (DuckValue::Double(f64::NAN), DuckType::Double, "\"NaN\""),
            (DuckValue::Float(f32::INFINITY), DuckType::Float, "\"Infinity\""),
            (DuckValue::Double(f64::NEG_INFINITY), DuckType::Double, "\"-Infinity\""),
            (DuckValue::Date32(19_724), DuckType::Date, "\"2024-01-02\""),
            (DuckValue::Date32(0), DuckType::Date, "\"1970-01-01\""),
            (DuckValue::Date32(-719_163), DuckType::Date, "\"0001-12-31 BC\""),
            (DuckValue::Date32(i32::MAX), DuckType::Date, "\"infinity\""),
            (DuckValue::Date32(-i32::MAX), DuckType::Date, "\"-infinity\""),
            (
                DuckValue::Time64(TimeUnit::Microsecond, 14_706_000_000),
                DuckType::Time,
                "\"04:05:06\"",
            ),
            (
                DuckValue::Time64(TimeUnit::Microsecond, 14_706_500_000),
                DuckType::Time,
                "\"04:05:06.5\"",
            ),
            (
                DuckValue::Time64(TimeUnit::Microsecond, 14_706_000_001),
                DuckType::TimeTz,
                "\"04:05:06.000001+00\"",
            ),
            (
                DuckValue::Timestamp(TimeUnit::Microsecond, 1_704_164_645_500_000),
                ts.clone(),
                "\"2024-01-02 03:04:05.5\"",
            ),
            (
                DuckValue::Timestamp(TimeUnit::Microsecond, 1_704_164_645_000_000),
                DuckType::TimestampTz,
                "\"2024-01-02 03:04:05+00\"",
            ),
            (
                DuckValue::Timestamp(TimeUnit::Second, 1_704_164_645),
                DuckType::Timestamp(TimeUnit::Second),
                "\"2024-01-02 03:04:05\"",
            ),
            (
                DuckValue::Timestamp(TimeUnit::Millisecond, -1),
                DuckType::Timestamp(TimeUnit::Millisecond),
                "\"1969-12-31 23:59:59.999\"",
            ),
            (
                DuckValue::Timestamp(TimeUnit::Nanosecond, 1_704_164_645_123_456_789),
                DuckType::Timestamp(TimeUnit::Nanosecond),
                "\"2024-01-02 03:04:05.123456789\"",
            ),
            (
                DuckValue::Timestamp(TimeUnit::Microsecond, i64::MAX),
                ts.clone(),
                "\"infinity\"",
            ),
            (
                DuckValue::Timestamp(TimeUnit::Microsecond, -i64::MAX),
                DuckType::TimestampTz,
                "\"-infinity\"",
            ),
            (
                DuckValue::Timestamp(TimeUnit::Microsecond, -62_135_683_200_000_000),
                ts,
                "\"0001-12-31 00:00:00 BC\"",
            ),
            (
                DuckValue::Interval {
                    months: 14,
                    days: 3,
                    nanos: 14_706_789_000_000,
                },
                DuckType::Interval,
                "\"1 year 2 months 3 days 04:05:06.789\"",
            ),
            (
                DuckValue::Interval {
                    months: -1,
                    days: 0,
                    nanos: 0,
                },
                DuckType::Interval,
                "\"-1 month\"",
            ),
            (
                DuckValue::Interval {
                    months: 0,
                    days: 1,
                    nanos: -3_600_000_000_000,
                },
                DuckType::Interval,
                "\"1 day -01:00:00\"",
            ),
            (
                DuckValue::Interval {
                    months: 0,
                    days: 0,
                    nanos: 0,
                },
                DuckType::Interval,
                "\"00:00:00\"",
            ),
            (DuckValue::Text("café".into()), DuckType::Varchar, "\"café\""),
            (
                DuckValue::Text("0f2c1a4e-2b3d-4c5e-8f60-718293a4b5c6".into()),
                DuckType::Uuid,
                "\"0f2c1a4e-2b3d-4c5e-8f60-718293a4b5c6\"",
            ),
            (
                DuckValue::Enum("happy".into()),
                DuckType::Enum(vec!["happy".into()]),
                "\"happy\"",
            ),
            (DuckValue::Blob(vec![0, 1, 0xab]), DuckType::Blob, "\"\\\\x0001ab\""),
            (DuckValue::Blob(vec![]), DuckType::Blob, "\"\\\\x\""),
            (DuckValue::Blob(vec![3, 0b0001_0110]), DuckType::Bit, "\"10110\""),
        ];
        for (value, ty, want) in cases {
            let shown = format!("{value:?} as {}", ty.name());
            assert_eq!(serde_json::to_string(&to_json(value, &ty)).unwrap(), want, "{shown}");
        }
    }

    #[test]
    fn nested() {
        let list = DuckType::List(Box::new(DuckType::UHugeInt));
        assert_eq!(
            to_json(DuckValue::List(vec![DuckValue::HugeInt(-1), DuckValue::Null]), &list),
            json!(["340282366920938463463374607431768211455", null])
        );
        let row = DuckType::Struct(vec![
            ("a".into(), DuckType::Integer),
            ("at".into(), DuckType::TimestampTz),
        ]);
        let value = DuckValue::Struct(OrderedMap::from(vec![
            ("a".to_owned(), DuckValue::Int(1)),
            ("at".to_owned(), DuckValue::Timestamp(TimeUnit::Microsecond, 0)),
        ]));
        assert_eq!(to_json(value, &row), json!({"a": 1, "at": "1970-01-01 00:00:00+00"}));
        let text_keys = DuckType::Map(Box::new(DuckType::Varchar), Box::new(DuckType::Integer));
        let value = DuckValue::Map(OrderedMap::from(vec![
            (DuckValue::Text("b".into()), DuckValue::Int(2)),
            (DuckValue::Text("a".into()), DuckValue::Int(1)),
        ]));
        assert_eq!(
            serde_json::to_string(&to_json(value, &text_keys)).unwrap(),
            r#"{"b":2,"a":1}"#,
            "keys keep DuckDB's order"
        );
        let int_keys = DuckType::Map(Box::new(DuckType::Integer), Box::new(DuckType::Varchar));
        let value = DuckValue::Map(OrderedMap::from(vec![(DuckValue::Int(1), DuckValue::Text("x".into()))]));
        assert_eq!(to_json(value, &int_keys), json!([{"key": 1, "value": "x"}]));
        let array = DuckType::Array(Box::new(DuckType::Double), 2);
        assert_eq!(
            to_json(
                DuckValue::Array(vec![DuckValue::Double(1.5), DuckValue::Double(2.0)]),
                &array
            ),
            json!([1.5, 2.0])
        );
        let union = DuckType::Union(vec![("n".into(), DuckType::Integer), ("s".into(), DuckType::Varchar)]);
        assert_eq!(
            to_json(DuckValue::Union(Box::new(DuckValue::Text("x".into()))), &union),
            json!("x")
        );
    }

    #[test]
    fn type_names() {
        let cases: Vec<(DuckType, &str)> = vec![
            (DuckType::Integer, "INTEGER"),
            (DuckType::Decimal { width: 18, scale: 3 }, "DECIMAL(18,3)"),
            (DuckType::List(Box::new(DuckType::Varchar)), "VARCHAR[]"),
            (DuckType::Array(Box::new(DuckType::Integer), 3), "INTEGER[3]"),
            (
                DuckType::Struct(vec![("a".into(), DuckType::Integer), ("B c".into(), DuckType::Varchar)]),
                "STRUCT(a INTEGER, \"B c\" VARCHAR)",
            ),
            (
                DuckType::Map(Box::new(DuckType::Varchar), Box::new(DuckType::Integer)),
                "MAP(VARCHAR, INTEGER)",
            ),
            (DuckType::TimestampTz, "TIMESTAMP WITH TIME ZONE"),
            (DuckType::Timestamp(TimeUnit::Nanosecond), "TIMESTAMP_NS"),
            (DuckType::Enum(vec!["a".into(), "it's".into()]), "ENUM('a', 'it''s')"),
            (DuckType::Alias("mood".into(), Box::new(DuckType::Enum(vec![]))), "mood"),
            (
                DuckType::List(Box::new(DuckType::Struct(vec![("k".into(), DuckType::UHugeInt)]))),
                "STRUCT(k UHUGEINT)[]",
            ),
        ];
        for (ty, want) in cases {
            assert_eq!(ty.name(), want);
        }
        assert!(DuckType::List(Box::new(DuckType::Integer)).readable());
        assert!(!DuckType::List(Box::new(DuckType::TimeTz)).readable());
        assert!(!DuckType::Struct(vec![("n".into(), DuckType::Null)]).readable());
    }

    #[test]
    fn civil_dates() {
        for (days, want) in [
            (0, (1970, 1, 1)),
            (59, (1970, 3, 1)),
            (11_016, (2000, 2, 29)),
            (-1, (1969, 12, 31)),
            (-719_162, (1, 1, 1)),
            (2_932_896, (9999, 12, 31)),
        ] {
            assert_eq!(civil(days), want, "{days}");
        }
    }
}
