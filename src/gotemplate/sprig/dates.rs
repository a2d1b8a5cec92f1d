//! Sprig's dates: Go's `time.Time` ([`GoTime`]), written by a Go layout
//! (`date`, `dateInZone`, `htmlDate`), read by one (`toDate`), moved by a
//! Go duration (`dateModify`), and durations written as Go writes them
//! (`duration`, `durationRound`).
//!
//! The machine's zone ("Local") is UTC here, and so is any named zone but
//! UTC (Go would read it from the zone database); an offset read from the
//! text (`+02:00`) is kept, as Go keeps it.

use std::fmt;
use std::rc::Rc;

use super::super::funcs::{arg, arity, string};
use super::super::value::Value;
use super::reflect::go_type;
use super::{Result, head, part, tail};
use crate::gotemplate::Func;

pub const FUNCS: &[(&str, Func)] = &[
    ("date", date),
    ("dateInZone", date_in_zone),
    ("date_in_zone", date_in_zone),
    ("htmlDate", html_date),
    ("htmlDateInZone", html_date_in_zone),
    ("dateModify", date_modify),
    ("date_modify", date_modify),
    ("mustDateModify", must_date_modify),
    ("must_date_modify", must_date_modify),
    ("toDate", to_date),
    ("mustToDate", must_to_date),
    ("unixEpoch", unix_epoch),
    ("duration", duration),
    ("durationRound", duration_round),
];

/// A Go `time.Time`: an instant, and the zone it is shown in.
#[derive(Debug, Clone, PartialEq)]
pub struct GoTime {
    /// Seconds since 1970-01-01 UTC.
    pub unix: i64,
    pub nanos: u32,
    /// The zone's offset from UTC, in seconds.
    pub offset: i32,
    /// The zone's name ("UTC"); empty for an offset read from text.
    pub zone: Rc<str>,
}

const NANOS_PER_SECOND: i128 = 1_000_000_000;

impl GoTime {
    /// Go's zero time, 0001-01-01 00:00:00 UTC.
    pub fn zero() -> GoTime {
        GoTime {
            unix: days_from_civil(1, 1, 1) * 86400,
            nanos: 0,
            offset: 0,
            zone: Rc::from("UTC"),
        }
    }

    fn utc(unix: i64, nanos: u32) -> GoTime {
        GoTime {
            unix,
            nanos,
            offset: 0,
            zone: Rc::from("UTC"),
        }
    }

    /// The time now (for Sprig's functions given no time).
    fn now() -> GoTime {
        let since = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        GoTime::utc(since.as_secs() as i64, since.subsec_nanos())
    }

    /// This instant shown in UTC.
    fn in_utc(&self) -> GoTime {
        GoTime::utc(self.unix, self.nanos)
    }

    /// This instant moved by `nanos` nanoseconds.
    fn plus(&self, nanos: i64) -> GoTime {
        let total =
            i128::from(self.unix) * NANOS_PER_SECOND + i128::from(self.nanos) + i128::from(nanos);
        GoTime {
            unix: total.div_euclid(NANOS_PER_SECOND) as i64,
            nanos: total.rem_euclid(NANOS_PER_SECOND) as u32,
            offset: self.offset,
            zone: self.zone.clone(),
        }
    }

    /// The wall clock in its zone.
    fn civil(&self) -> Civil {
        let local = self.unix + i64::from(self.offset);
        let days = local.div_euclid(86400);
        let seconds = local.rem_euclid(86400);
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: seconds / 3600,
            minute: seconds / 60 % 60,
            second: seconds % 60,
            nanos: self.nanos,
            weekday: (days + 4).rem_euclid(7),
            yday: days - days_from_civil(year, 1, 1) + 1,
        }
    }

    /// The time in Go's layout `layout`.
    pub fn format(&self, layout: &str) -> String {
        let c = self.civil();
        let mut out = String::new();
        let mut rest = layout;
        while !rest.is_empty() {
            let (prefix, chunk, after) = next_chunk(rest);
            out.push_str(prefix);
            rest = after;
            let Some(chunk) = chunk else { break };
            self.write_chunk(&mut out, &c, chunk);
        }
        out
    }

    fn write_chunk(&self, out: &mut String, c: &Civil, chunk: Chunk) {
        use Chunk::*;
        let pad = |n: i64, width: usize| {
            if n < 0 {
                format!("-{:0width$}", -n)
            } else {
                format!("{n:0width$}")
            }
        };
        match chunk {
            Year => out.push_str(&pad(c.year.rem_euclid(100), 2)),
            LongYear => out.push_str(&pad(c.year, 4)),
            Month => out.push_str(head(month_name(c.month), 3)),
            LongMonth => out.push_str(month_name(c.month)),
            NumMonth => out.push_str(&c.month.to_string()),
            ZeroMonth => out.push_str(&pad(c.month, 2)),
            WeekDay => out.push_str(head(day_name(c.weekday), 3)),
            LongWeekDay => out.push_str(day_name(c.weekday)),
            Day => out.push_str(&c.day.to_string()),
            UnderDay => out.push_str(&format!("{:>2}", c.day)),
            ZeroDay => out.push_str(&pad(c.day, 2)),
            UnderYearDay => out.push_str(&format!("{:>3}", c.yday)),
            ZeroYearDay => out.push_str(&pad(c.yday, 3)),
            Hour => out.push_str(&pad(c.hour, 2)),
            Hour12 | ZeroHour12 => {
                let h = match c.hour % 12 {
                    0 => 12,
                    h => h,
                };
                out.push_str(&if chunk == Hour12 {
                    h.to_string()
                } else {
                    pad(h, 2)
                });
            }
            Minute => out.push_str(&c.minute.to_string()),
            ZeroMinute => out.push_str(&pad(c.minute, 2)),
            Second => out.push_str(&c.second.to_string()),
            ZeroSecond => out.push_str(&pad(c.second, 2)),
            Pm => out.push_str(if c.hour >= 12 { "PM" } else { "AM" }),
            LowerPm => out.push_str(if c.hour >= 12 { "pm" } else { "am" }),
            Zone(style) => {
                if style.iso && self.offset == 0 {
                    out.push('Z');
                    return;
                }
                let total = self.offset;
                let sign = if total < 0 { '-' } else { '+' };
                let abs = total.unsigned_abs();
                out.push(sign);
                out.push_str(&format!("{:02}", abs / 3600));
                if style.minutes {
                    if style.colon {
                        out.push(':');
                    }
                    out.push_str(&format!("{:02}", abs / 60 % 60));
                }
                if style.seconds {
                    if style.colon {
                        out.push(':');
                    }
                    out.push_str(&format!("{:02}", abs % 60));
                }
            }
            ZoneName => {
                if self.zone.is_empty() {
                    let minutes = self.offset / 60;
                    let sign = if minutes < 0 { '-' } else { '+' };
                    let abs = minutes.unsigned_abs();
                    out.push_str(&format!("{sign}{:02}{:02}", abs / 60, abs % 60));
                } else {
                    out.push_str(&self.zone);
                }
            }
            Fraction {
                separator,
                digits,
                trim,
            } => {
                let all = format!("{:09}", c.nanos);
                let mut kept = head(&all, digits.min(9));
                if trim {
                    kept = kept.trim_end_matches('0');
                    if kept.is_empty() {
                        return;
                    }
                }
                out.push(separator);
                out.push_str(kept);
            }
        }
    }

    /// A method without arguments, called as a field (`.Year`, `.Unix`).
    pub fn method(&self, name: &str) -> Option<Value> {
        let c = self.civil();
        Some(match name {
            "Year" => Value::Int(c.year),
            "Month" => Value::str(month_name(c.month)),
            "Day" => Value::Int(c.day),
            "Hour" => Value::Int(c.hour),
            "Minute" => Value::Int(c.minute),
            "Second" => Value::Int(c.second),
            "Nanosecond" => Value::Int(i64::from(c.nanos)),
            "YearDay" => Value::Int(c.yday),
            "Weekday" => Value::str(day_name(c.weekday)),
            "Unix" => Value::Int64(self.unix),
            "UTC" => Value::Time(Rc::new(self.in_utc())),
            "String" => Value::str(self.to_string()),
            "IsZero" => Value::Bool(
                *self == GoTime::zero() || (self.unix == GoTime::zero().unix && self.nanos == 0),
            ),
            _ => return None,
        })
    }

    /// As Go's `MarshalJSON` writes it: RFC 3339 with nanoseconds.
    pub fn rfc3339(&self) -> String {
        self.format("2006-01-02T15:04:05.999999999Z07:00")
    }
}

impl fmt::Display for GoTime {
    /// Go's `Time.String`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.format("2006-01-02 15:04:05.999999999 -0700 MST"))
    }
}

struct Civil {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    nanos: u32,
    weekday: i64,
    yday: i64,
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

fn month_name(month: i64) -> &'static str {
    usize::try_from(month - 1)
        .ok()
        .and_then(|i| MONTHS.get(i))
        .copied()
        .unwrap_or("%!Month")
}

fn day_name(weekday: i64) -> &'static str {
    usize::try_from(weekday)
        .ok()
        .and_then(|i| DAYS.get(i))
        .copied()
        .unwrap_or("%!Weekday")
}

/// How many ASCII digits `s` has from byte `from` on.
fn digits_at(s: &str, from: usize) -> usize {
    tail(s, from).bytes().take_while(u8::is_ascii_digit).count()
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date `days` after 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
struct ZoneStyle {
    iso: bool,
    minutes: bool,
    seconds: bool,
    colon: bool,
}

/// One element of a Go layout.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Chunk {
    Year,
    LongYear,
    Month,
    LongMonth,
    NumMonth,
    ZeroMonth,
    WeekDay,
    LongWeekDay,
    Day,
    UnderDay,
    ZeroDay,
    UnderYearDay,
    ZeroYearDay,
    Hour,
    Hour12,
    ZeroHour12,
    Minute,
    ZeroMinute,
    Second,
    ZeroSecond,
    Pm,
    LowerPm,
    Zone(ZoneStyle),
    ZoneName,
    Fraction {
        separator: char,
        digits: usize,
        trim: bool,
    },
}

/// The text before the layout's next element, the element, and the rest.
fn next_chunk(layout: &str) -> (&str, Option<Chunk>, &str) {
    use Chunk::*;
    let b = layout.as_bytes();
    let at = |i: usize, s: &str| layout.get(i..).is_some_and(|r| r.starts_with(s));
    for i in 0..b.len() {
        let byte_at = |j: usize| b.get(j).copied().unwrap_or(0);
        let found: Option<(Chunk, usize)> = match byte_at(i) {
            b'J' if at(i, "January") => Some((LongMonth, 7)),
            b'J' if at(i, "Jan") => Some((Month, 3)),
            b'M' if at(i, "Monday") => Some((LongWeekDay, 6)),
            b'M' if at(i, "Mon") => Some((WeekDay, 3)),
            b'M' if at(i, "MST") => Some((ZoneName, 3)),
            b'0' if b.get(i + 1).is_some_and(|c| (b'1'..=b'6').contains(c)) => {
                let kinds = [ZeroMonth, ZeroDay, ZeroHour12, ZeroMinute, ZeroSecond, Year];
                kinds
                    .get(usize::from(byte_at(i + 1).wrapping_sub(b'1')))
                    .map(|&kind| (kind, 2))
            }
            b'0' if at(i, "002") => Some((ZeroYearDay, 3)),
            b'1' if at(i, "15") => Some((Hour, 2)),
            b'1' => Some((NumMonth, 1)),
            b'2' if at(i, "2006") => Some((LongYear, 4)),
            b'2' => Some((Day, 1)),
            b'_' if at(i, "_2") => {
                if at(i, "_2006") {
                    return (head(layout, i + 1), Some(LongYear), tail(layout, i + 5));
                }
                Some((UnderDay, 2))
            }
            b'_' if at(i, "__2") => Some((UnderYearDay, 3)),
            b'3' => Some((Hour12, 1)),
            b'4' => Some((Minute, 1)),
            b'5' => Some((Second, 1)),
            b'P' if at(i, "PM") => Some((Pm, 2)),
            b'p' if at(i, "pm") => Some((LowerPm, 2)),
            c @ (b'-' | b'Z') => {
                let iso = c == b'Z';
                let style = |minutes, seconds, colon| {
                    Zone(ZoneStyle {
                        iso,
                        minutes,
                        seconds,
                        colon,
                    })
                };
                let p = if iso { "Z" } else { "-" };
                if at(i, &format!("{p}070000")) {
                    Some((style(true, true, false), 7))
                } else if at(i, &format!("{p}07:00:00")) {
                    Some((style(true, true, true), 9))
                } else if at(i, &format!("{p}0700")) {
                    Some((style(true, false, false), 5))
                } else if at(i, &format!("{p}07:00")) {
                    Some((style(true, false, true), 6))
                } else if at(i, &format!("{p}07")) {
                    Some((style(false, false, false), 3))
                } else {
                    None
                }
            }
            c @ (b'.' | b',') if matches!(b.get(i + 1), Some(b'0' | b'9')) => {
                let digit = byte_at(i + 1);
                let mut j = i + 1;
                while j < b.len() && byte_at(j) == digit {
                    j += 1;
                }
                if b.get(j).is_some_and(u8::is_ascii_digit) {
                    None
                } else {
                    Some((
                        Fraction {
                            separator: char::from(c),
                            digits: j - (i + 1),
                            trim: digit == b'9',
                        },
                        j - i,
                    ))
                }
            }
            _ => None,
        };
        if let Some((chunk, len)) = found {
            return (head(layout, i), Some(chunk), tail(layout, i + len));
        }
    }
    (layout, None, "")
}

/// Go's message for text that does not fit the layout.
fn cannot_parse(value: &str, layout: &str, value_elem: &str, layout_elem: &str) -> String {
    format!("parsing time {value:?} as {layout:?}: cannot parse {value_elem:?} as {layout_elem:?}")
}

/// Up to `max` leading digits (exactly `max` when `fixed`), as a number.
fn leading_number(s: &str, min: usize, max: usize) -> Option<(i64, &str)> {
    let count = s.bytes().take(max).take_while(u8::is_ascii_digit).count();
    if count < min {
        return None;
    }
    Some((head(s, count).parse().ok()?, tail(s, count)))
}

fn name_at<'a>(s: &'a str, names: &[&str], short: bool) -> Option<(i64, &'a str)> {
    for (i, name) in names.iter().enumerate() {
        let name = if short { head(name, 3) } else { name };
        if s.get(..name.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(name))
        {
            return Some((i as i64, tail(s, name.len())));
        }
    }
    None
}

/// `value` read by Go's layout `layout` (in UTC where it names no zone),
/// or Go's message.
pub fn parse_time(layout: &str, value: &str) -> std::result::Result<GoTime, String> {
    use Chunk::*;
    // As Go: a layout without a year reads year 0 (January, the first).
    let (mut year, mut month, mut day) = (0i64, 1i64, 1i64);
    let (mut hour, mut minute, mut second, mut nanos) = (0i64, 0i64, 0i64, 0u32);
    let mut pm: Option<bool> = None;
    let mut offset: Option<i32> = None;
    let mut zone_name: Option<String> = None;
    let mut utc = false;
    let (mut rest_layout, mut rest) = (layout, value);
    let fail = |elem: &str, layout_elem: &str| cannot_parse(value, layout, elem, layout_elem);
    loop {
        let (prefix, chunk, after) = next_chunk(rest_layout);
        let chunk_text = part(rest_layout, prefix.len(), rest_layout.len() - after.len());
        rest = rest
            .strip_prefix(prefix)
            .ok_or_else(|| fail(rest, prefix))?;
        let Some(chunk) = chunk else {
            if !rest.is_empty() {
                return Err(format!("parsing time {value:?}: extra text: {rest:?}"));
            }
            break;
        };
        rest_layout = after;
        let bad = || fail(rest, chunk_text);
        let range = |what: &str| format!("parsing time {value:?}: {what} out of range");
        match chunk {
            Year => {
                let (n, r) = leading_number(rest, 2, 2).ok_or_else(bad)?;
                year = if n >= 69 { n + 1900 } else { n + 2000 };
                rest = r;
            }
            LongYear => {
                let (n, r) = leading_number(rest, 4, 4).ok_or_else(bad)?;
                year = n;
                rest = r;
            }
            Month | LongMonth => {
                let (n, r) = name_at(rest, &MONTHS, chunk == Month).ok_or_else(bad)?;
                month = n + 1;
                rest = r;
            }
            NumMonth | ZeroMonth => {
                let min = if chunk == ZeroMonth { 2 } else { 1 };
                let (n, r) = leading_number(rest, min, 2).ok_or_else(bad)?;
                if !(1..=12).contains(&n) {
                    return Err(range("month"));
                }
                month = n;
                rest = r;
            }
            WeekDay | LongWeekDay => {
                let (_, r) = name_at(rest, &DAYS, chunk == WeekDay).ok_or_else(bad)?;
                rest = r;
            }
            Day | UnderDay | ZeroDay => {
                if chunk == UnderDay {
                    rest = rest.strip_prefix(' ').unwrap_or(rest);
                }
                let min = if chunk == ZeroDay { 2 } else { 1 };
                let (n, r) = leading_number(rest, min, 2).ok_or_else(bad)?;
                day = n;
                rest = r;
            }
            UnderYearDay | ZeroYearDay => {
                let (_, r) = leading_number(rest.trim_start_matches(' '), 3, 3).ok_or_else(bad)?;
                rest = r;
            }
            Hour | Hour12 | ZeroHour12 => {
                let min = if chunk == Hour12 { 1 } else { 2 };
                let top = if chunk == Hour { 23 } else { 12 };
                let (n, r) = number_to(rest, min, top).ok_or_else(bad)?;
                (hour, rest) = (n.ok_or_else(|| range("hour"))?, r);
            }
            Minute | ZeroMinute => {
                let min = if chunk == ZeroMinute { 2 } else { 1 };
                let (n, r) = number_to(rest, min, 59).ok_or_else(bad)?;
                (minute, rest) = (n.ok_or_else(|| range("minute"))?, r);
            }
            Second | ZeroSecond => {
                let min = if chunk == ZeroSecond { 2 } else { 1 };
                let (n, r) = number_to(rest, min, 59).ok_or_else(bad)?;
                (second, rest) = (n.ok_or_else(|| range("second"))?, r);
                // A fraction the layout does not name is read too.
                let next_is_fraction =
                    matches!(next_chunk(rest_layout), ("", Some(Fraction { .. }), _));
                if let Some((n, r)) = fraction(rest).filter(|_| !next_is_fraction) {
                    (nanos, rest) = (n, r);
                }
            }
            Pm | LowerPm => {
                let (am, pm_text) = match chunk == Pm {
                    true => ("AM", "PM"),
                    false => ("am", "pm"),
                };
                pm = Some(rest.starts_with(pm_text));
                if !rest.starts_with(pm_text) && !rest.starts_with(am) {
                    return Err(bad());
                }
                rest = tail(rest, 2);
            }
            Zone(style) => {
                if style.iso && rest.starts_with('Z') {
                    rest = tail(rest, 1);
                    utc = true;
                    continue;
                }
                let (seconds, r) = zone_offset(rest, style).ok_or_else(bad)?;
                offset = Some(seconds.ok_or_else(|| range("time zone offset"))?);
                rest = r;
            }
            ZoneName => {
                let (name, r) = zone_name_at(rest).ok_or_else(bad)?;
                match name {
                    "UTC" => utc = true,
                    name => zone_name = Some(name.to_string()),
                }
                rest = r;
            }
            Fraction { digits, trim, .. } => {
                let b = rest.as_bytes();
                if trim {
                    if let Some((n, r)) = fraction(rest) {
                        (nanos, rest) = (n, r);
                    }
                } else {
                    let ok = b.len() > digits
                        && matches!(b.first(), Some(b'.' | b','))
                        && digits_at(rest, 1) >= digits;
                    if !ok {
                        return Err(bad());
                    }
                    nanos = fraction_nanos(part(rest, 1, 1 + digits));
                    rest = tail(rest, 1 + digits);
                }
            }
        }
    }
    match pm {
        Some(true) if hour < 12 => hour += 12,
        Some(false) if hour == 12 => hour = 0,
        _ => {}
    }
    if day < 1 || day > days_in_month(year, month) {
        return Err(format!("parsing time {value:?}: day out of range"));
    }
    let wall = days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
    Ok(time_at(wall, nanos, utc, offset, zone_name))
}

/// The time at `wall` seconds (and `nanos`) of the zone read: UTC, an
/// offset, or a zone's name (an offset only for `GMT±H`), else UTC.
fn time_at(
    wall: i64,
    nanos: u32,
    utc: bool,
    offset: Option<i32>,
    zone_name: Option<String>,
) -> GoTime {
    match (utc, offset, zone_name) {
        (true, _, _) => GoTime::utc(wall, nanos),
        (false, Some(0), _) => GoTime::utc(wall, nanos),
        (false, Some(offset), _) => GoTime {
            unix: wall - i64::from(offset),
            nanos,
            offset,
            zone: Rc::from(""),
        },
        (false, None, Some(name)) => {
            // Go takes the wall time as UTC's and then gives it the zone,
            // whose offset (that of `GMT±H` only) moves the clock, not
            // the instant.
            let offset = name
                .strip_prefix("GMT")
                .and_then(|n| n.parse::<i32>().ok())
                .map_or(0, |h| h * 3600);
            GoTime {
                unix: wall,
                nanos,
                offset,
                zone: Rc::from(name.as_str()),
            }
        }
        (false, None, None) => GoTime::utc(wall, nanos),
    }
}

/// A numeric zone offset at the start of `rest` (`+01`, `-0700`,
/// `+01:00:00`, as `style` writes it): the offset in seconds (`None` when
/// out of range) and what follows; `None` when there is none.
fn zone_offset(rest: &str, style: ZoneStyle) -> Option<(Option<i32>, &str)> {
    let sign = match rest.as_bytes().first() {
        Some(b'+') => 1,
        Some(b'-') => -1,
        _ => return None,
    };
    let mut r = tail(rest, 1);
    let part = |r: &mut &str, colon: bool| -> Option<i64> {
        if colon {
            *r = r.strip_prefix(':')?;
        }
        let (n, after) = leading_number(r, 2, 2)?;
        *r = after;
        Some(n)
    };
    let h = part(&mut r, false)?;
    let m = match style.minutes {
        true => part(&mut r, style.colon)?,
        false => 0,
    };
    let s = match style.seconds {
        true => part(&mut r, style.colon)?,
        false => 0,
    };
    let in_range = h <= 24 && m <= 59 && s <= 59;
    Some((in_range.then(|| sign * (h * 3600 + m * 60 + s) as i32), r))
}

/// A number of `min` to two digits at the start of `rest` and what follows
/// it; the number is `None` when over `top`, and there is none when the
/// digits are not there.
fn number_to(rest: &str, min: usize, top: i64) -> Option<(Option<i64>, &str)> {
    let (n, after) = leading_number(rest, min, 2)?;
    Some(((n <= top).then_some(n), after))
}

/// A zone's name at the start of `rest`, as Go reads one, and what follows
/// it: `UTC`; `ChST` or `MeST`; `GMT` with an hour's offset or not
/// (`GMT+3`); a bare offset (`+03`); three upper case letters, or four or
/// five ending in `T` (`WITA` too).
fn zone_name_at(rest: &str) -> Option<(&str, &str)> {
    let b = rest.as_bytes();
    let length = if rest.starts_with("UTC") {
        3
    } else if b.len() < 3 {
        return None;
    } else if rest.starts_with("ChST") || rest.starts_with("MeST") {
        4
    } else if rest.starts_with("GMT") {
        3 + signed_hours_length(tail(rest, 3))
    } else if matches!(b.first(), Some(b'+' | b'-')) {
        Some(signed_hours_length(rest)).filter(|&n| n > 0)?
    } else {
        let upper = b
            .iter()
            .take(6)
            .take_while(|c| c.is_ascii_uppercase())
            .count();
        match upper {
            3 => 3,
            4 if b.get(3) == Some(&b'T') || rest.starts_with("WITA") => 4,
            5 if b.get(4) == Some(&b'T') => 5,
            _ => return None,
        }
    };
    Some((head(rest, length), tail(rest, length)))
}

/// The length of a signed number of hours (at most 23) at the start of
/// `text` (`+3`, `-11`); 0 when there is none.
fn signed_hours_length(text: &str) -> usize {
    if !matches!(text.as_bytes().first(), Some(b'+' | b'-')) {
        return 0;
    }
    let digits = digits_at(text, 1);
    match part(text, 1, 1 + digits).parse::<u64>() {
        Ok(hours) if hours <= 23 => 1 + digits,
        _ => 0,
    }
}

/// A fraction of a second at the start of `rest` (`.5`, `,250`, any number
/// of digits): its nanoseconds and what follows; `None` when there is none.
fn fraction(rest: &str) -> Option<(u32, &str)> {
    let b = rest.as_bytes();
    let starts = matches!(b.first(), Some(b'.' | b',')) && b.get(1).is_some_and(u8::is_ascii_digit);
    if !starts {
        return None;
    }
    let count = digits_at(rest, 1);
    Some((
        fraction_nanos(part(rest, 1, 1 + count)),
        tail(rest, 1 + count),
    ))
}

/// Nanoseconds of a fraction's digits (beyond nine ignored).
fn fraction_nanos(digits: &str) -> u32 {
    let nine: String = digits
        .chars()
        .chain(std::iter::repeat('0'))
        .take(9)
        .collect();
    nine.parse().unwrap_or(0)
}

/// A Go duration (`1h30m`, `-1.5s`, `300ms`) in nanoseconds, or Go's
/// message.
pub fn parse_duration(text: &str) -> std::result::Result<i64, String> {
    let invalid = || format!("time: invalid duration {text:?}");
    let (negative, mut s) = match text.as_bytes().first() {
        Some(b'-') => (true, tail(text, 1)),
        Some(b'+') => (false, tail(text, 1)),
        _ => (false, text),
    };
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: u128 = 0;
    while !s.is_empty() {
        let whole_len = s.bytes().take_while(u8::is_ascii_digit).count();
        let whole: u128 = if whole_len > 0 {
            head(s, whole_len).parse().map_err(|_| invalid())?
        } else {
            0
        };
        s = tail(s, whole_len);
        let (mut fraction, mut scale) = (0u128, 1u128);
        let mut fraction_len = 0;
        if let Some(after) = s.strip_prefix('.') {
            fraction_len = after.bytes().take_while(u8::is_ascii_digit).count();
            for d in head(after, fraction_len).bytes().take(18) {
                fraction = fraction * 10 + u128::from(d - b'0');
                scale *= 10;
            }
            s = tail(after, fraction_len);
        }
        if whole_len == 0 && fraction_len == 0 {
            return Err(invalid());
        }
        let unit_len = s
            .char_indices()
            .find(|&(_, c)| c == '.' || c.is_ascii_digit())
            .map_or(s.len(), |(i, _)| i);
        let unit: u128 = match head(s, unit_len) {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "" => return Err(format!("time: missing unit in duration {text:?}")),
            other => return Err(format!("time: unknown unit {other:?} in duration {text:?}")),
        };
        s = tail(s, unit_len);
        total += whole * unit + fraction * unit / scale;
        if total > 1 << 63 {
            return Err(invalid());
        }
    }
    if negative {
        Ok((-(total as i128)) as i64)
    } else if total == 1 << 63 {
        Err(invalid())
    } else {
        Ok(total as i64)
    }
}

/// Go's `Duration.String`: `1h2m3.5s`, `1.5ms`, `0s`.
pub fn format_duration(nanos: i64) -> String {
    let mut u = nanos.unsigned_abs();
    let negative = nanos < 0;
    let fraction = |u: u64, precision: u32| -> (String, u64) {
        let scale = 10u64.pow(precision);
        let digits = format!("{:0width$}", u % scale, width = precision as usize);
        let digits = digits.trim_end_matches('0');
        let text = if digits.is_empty() {
            String::new()
        } else {
            format!(".{digits}")
        };
        (text, u / scale)
    };
    let text = if u < 1_000_000_000 {
        let (precision, unit) = match u {
            0 => return "0s".to_string(),
            1..=999 => (0, "ns"),
            1_000..=999_999 => (3, "µs"),
            _ => (6, "ms"),
        };
        let (frac, whole) = fraction(u, precision);
        format!("{whole}{frac}{unit}")
    } else {
        let (frac, whole) = fraction(u, 9);
        u = whole;
        let seconds = format!("{}{frac}s", u % 60);
        u /= 60;
        if u > 0 {
            let minutes = format!("{}m", u % 60);
            u /= 60;
            if u > 0 {
                format!("{u}h{minutes}{seconds}")
            } else {
                format!("{minutes}{seconds}")
            }
        } else {
            seconds
        }
    };
    if negative { format!("-{text}") } else { text }
}

/// A `time.Time` argument, or Go's message.
fn time_arg(args: &[Value], i: usize) -> std::result::Result<&GoTime, String> {
    match arg(args, i) {
        Value::Time(t) => Ok(t),
        Value::Nil => Err("invalid value; expected time.Time".to_string()),
        other => Err(format!(
            "wrong type for value; expected time.Time; got {}",
            go_type(other)
        )),
    }
}

/// The time Sprig's `date` functions take: a time, or Unix seconds as an
/// integer; anything else is now.
fn time_of(value: &Value) -> GoTime {
    match value {
        Value::Time(t) => (**t).clone(),
        Value::Int(s) | Value::Int64(s) => GoTime::utc(*s, 0),
        _ => GoTime::now(),
    }
}

/// The time shown in the zone named (all UTC here; see the module).
fn in_zone(time: &GoTime, _zone: &str) -> GoTime {
    time.in_utc()
}

fn date(args: &[Value]) -> Result {
    arity(args, 2)?;
    let layout = string(args, 0)?;
    Ok(Value::str(
        in_zone(&time_of(arg(args, 1)), "Local").format(layout),
    ))
}

fn date_in_zone(args: &[Value]) -> Result {
    arity(args, 3)?;
    let (layout, zone) = (string(args, 0)?, string(args, 2)?);
    Ok(Value::str(
        in_zone(&time_of(arg(args, 1)), zone).format(layout),
    ))
}

fn html_date(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::str(
        in_zone(&time_of(arg(args, 0)), "Local").format("2006-01-02"),
    ))
}

fn html_date_in_zone(args: &[Value]) -> Result {
    arity(args, 2)?;
    let zone = string(args, 1)?;
    Ok(Value::str(
        in_zone(&time_of(arg(args, 0)), zone).format("2006-01-02"),
    ))
}

fn date_modify(args: &[Value]) -> Result {
    arity(args, 2)?;
    let (change, time) = (string(args, 0)?, time_arg(args, 1)?);
    Ok(Value::Time(Rc::new(match parse_duration(change) {
        Ok(nanos) => time.plus(nanos),
        Err(_) => time.clone(),
    })))
}

fn must_date_modify(args: &[Value]) -> Result {
    arity(args, 2)?;
    let (change, time) = (string(args, 0)?, time_arg(args, 1)?);
    Ok(Value::Time(Rc::new(time.plus(parse_duration(change)?))))
}

fn to_date(args: &[Value]) -> Result {
    arity(args, 2)?;
    let (layout, text) = (string(args, 0)?, string(args, 1)?);
    Ok(Value::Time(Rc::new(
        parse_time(layout, text).unwrap_or_else(|_| GoTime::zero()),
    )))
}

fn must_to_date(args: &[Value]) -> Result {
    arity(args, 2)?;
    let (layout, text) = (string(args, 0)?, string(args, 1)?);
    Ok(Value::Time(Rc::new(parse_time(layout, text)?)))
}

fn unix_epoch(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::str(time_arg(args, 0)?.unix.to_string()))
}

/// `duration SECONDS`: a string of digits or an int64; anything else is 0.
fn duration(args: &[Value]) -> Result {
    arity(args, 1)?;
    let seconds = match arg(args, 0) {
        Value::Str(s) => {
            let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                s.parse().unwrap_or(0)
            } else {
                0
            }
        }
        Value::Int64(n) => *n,
        _ => 0,
    };
    Ok(Value::str(format_duration(
        seconds.wrapping_mul(1_000_000_000),
    )))
}

/// `durationRound`: a duration in its largest whole unit (`2h`, `3mo`).
fn duration_round(args: &[Value]) -> Result {
    arity(args, 1)?;
    let nanos: i64 = match arg(args, 0) {
        Value::Str(s) => parse_duration(s).unwrap_or(0),
        Value::Int64(n) => *n,
        Value::Time(t) => {
            let now = GoTime::now();
            let since = i128::from(now.unix - t.unix) * NANOS_PER_SECOND + i128::from(now.nanos)
                - i128::from(t.nanos);
            since.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
        }
        _ => 0,
    };
    let u = nanos.unsigned_abs();
    const HOUR: u64 = 3_600_000_000_000;
    let units: [(u64, &str); 6] = [
        (HOUR * 24 * 365, "y"),
        (HOUR * 24 * 30, "mo"),
        (HOUR * 24, "d"),
        (HOUR, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
    ];
    for (size, name) in units {
        if u > size {
            return Ok(Value::str(format!("{}{name}", u / size)));
        }
    }
    Ok(Value::str("0s"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_print_and_parse_as_go() {
        let t = parse_time("2006-01-02T15:04:05Z07:00", "2021-03-04T05:06:07+02:00").unwrap();
        assert_eq!(t.to_string(), "2021-03-04 05:06:07 +0200 +0200");
        assert_eq!(t.in_utc().to_string(), "2021-03-04 03:06:07 +0000 UTC");
        let t = parse_time("2006-01-02 15:04:05.000", "2020-02-29 23:59:58.120").unwrap();
        assert_eq!(t.to_string(), "2020-02-29 23:59:58.12 +0000 UTC");
        assert_eq!(
            t.format("Mon Jan _2 3:04PM .000 ,999 002 06"),
            "Sat Feb 29 11:59PM .120 ,12 060 20"
        );
        assert!(parse_time("2006-01-02", "2021-02-30").is_err());
        assert!(parse_time("2006-01-02", "2021-1-03").is_err());
        assert_eq!(GoTime::zero().to_string(), "0001-01-01 00:00:00 +0000 UTC");
        assert_eq!(GoTime::utc(0, 0).rfc3339(), "1970-01-01T00:00:00Z");
    }

    #[test]
    fn durations_read_and_write_as_go() {
        assert_eq!(parse_duration("1h30m").unwrap(), 5_400_000_000_000);
        assert_eq!(parse_duration("-1.5s").unwrap(), -1_500_000_000);
        assert!(parse_duration("1").is_err());
        assert!(parse_duration(".s").is_err());
        assert_eq!(format_duration(5_400_000_000_000), "1h30m0s");
        assert_eq!(format_duration(1_500_000), "1.5ms");
        assert_eq!(format_duration(-61_000_000_000), "-1m1s");
        assert_eq!(format_duration(0), "0s");
        assert_eq!(format_duration(1_100), "1.1µs");
    }
}
