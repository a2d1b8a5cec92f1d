//! Kubernetes resource quantities (`500m`, `1Gi`, `2e3`), exact, with the
//! canonical form the apiserver prints in its messages (`Quantity.String()`).

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value;

/// The suffix family a quantity was written in; it decides how it prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `Ki`, `Mi`, … (powers of 1024).
    BinarySI,
    /// `m`, `k`, `M`, … or no suffix.
    DecimalSI,
    /// `1e3`, `5E-3`.
    DecimalExponent,
}

/// An amount in billionths (the finest precision the apiserver keeps:
/// finer amounts are rounded up), and its format.
#[derive(Debug, Clone, Copy)]
pub struct Quantity {
    nanos: i128,
    pub format: Format,
}

const NANO: i128 = 1_000_000_000;
/// Above this many units, the apiserver compares whole units, not thousandths.
const MAX_MILLI_VALUE: i128 = (i64::MAX / 1000) as i128;
/// Largest magnitude kept (well inside i128, far beyond any real quantity).
const MAX_NANOS: i128 = 10i128.pow(36);

impl Quantity {
    pub fn zero() -> Self {
        Quantity {
            nanos: 0,
            format: Format::DecimalSI,
        }
    }

    /// Parse a quantity the way the apiserver does; `None` when it is not one.
    pub fn parse(text: &str) -> Option<Quantity> {
        let text = text.trim();
        if text.is_empty() {
            return None;
        }
        let (negative, rest) = match (text.strip_prefix('-'), text.strip_prefix('+')) {
            (Some(rest), _) => (true, rest),
            (None, Some(rest)) => (false, rest),
            (None, None) => (false, text),
        };
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, suffix) = rest.split_at(number_end);
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
            return None;
        }
        let (format, base, exponent) = match suffix {
            "Ki" => (Format::BinarySI, 1024, 1),
            "Mi" => (Format::BinarySI, 1024, 2),
            "Gi" => (Format::BinarySI, 1024, 3),
            "Ti" => (Format::BinarySI, 1024, 4),
            "Pi" => (Format::BinarySI, 1024, 5),
            "Ei" => (Format::BinarySI, 1024, 6),
            "n" => (Format::DecimalSI, 10, -9),
            "u" => (Format::DecimalSI, 10, -6),
            "m" => (Format::DecimalSI, 10, -3),
            "" => (Format::DecimalSI, 10, 0),
            "k" => (Format::DecimalSI, 10, 3),
            "M" => (Format::DecimalSI, 10, 6),
            "G" => (Format::DecimalSI, 10, 9),
            "T" => (Format::DecimalSI, 10, 12),
            "P" => (Format::DecimalSI, 10, 15),
            "E" => (Format::DecimalSI, 10, 18),
            _ => {
                let exponent = suffix.strip_prefix(['e', 'E'])?;
                let exponent: i32 = exponent.parse().ok()?;
                (Format::DecimalExponent, 10, exponent)
            }
        };
        // digits × 10^-fraction_len × base^exponent, in billionths, rounded up.
        // The digits of both parts as one number, at most 30 of them after
        // the leading zeros (parsed often: without a string made for it).
        let mut mantissa: i128 = 0;
        let significant = whole
            .bytes()
            .chain(fraction.bytes())
            .skip_while(|&b| b == b'0');
        for (count, digit) in significant.enumerate() {
            if count >= 30 {
                return None;
            }
            mantissa = mantissa * 10 + i128::from(digit - b'0');
        }
        let mut numerator = mantissa.checked_mul(NANO)?;
        let mut denominator: i128 = 10i128.checked_pow(u32::try_from(fraction.len()).ok()?)?;
        if base == 1024 {
            numerator = numerator.checked_mul(1024i128.checked_pow(exponent as u32)?)?;
        } else if exponent >= 0 {
            numerator = numerator.checked_mul(10i128.checked_pow(exponent as u32)?)?;
        } else {
            denominator = denominator.checked_mul(10i128.checked_pow(exponent.unsigned_abs())?)?;
        }
        // Most quantities fit 64 bits, whose division is several times cheaper.
        let mut nanos = match (u64::try_from(numerator), u64::try_from(denominator)) {
            (Ok(n), Ok(d)) => i128::from(n / d + u64::from(n % d != 0)),
            _ => numerator / denominator + i128::from(numerator % denominator != 0),
        };
        if nanos > MAX_NANOS {
            return None;
        }
        if negative {
            nanos = -nanos;
        }
        Some(Quantity { nanos, format })
    }

    /// A quantity from a YAML value: a string, or a number (`memory: 1024`).
    pub fn from_value(value: &Value) -> Option<Quantity> {
        match value {
            // Parsed each time: keeping the last texts parsed saved nothing
            // measurable (a run read up to 3% fewer instructions without).
            Value::String(s) => Quantity::parse(s),
            Value::Number(n) => Quantity::parse(&n.to_string()),
            _ => None,
        }
    }

    pub fn is_zero(&self) -> bool {
        self.nanos == 0
    }

    /// The sum, in the format of `self` (as `Quantity.Add` keeps it).
    pub fn add(&self, other: &Quantity) -> Quantity {
        Quantity {
            nanos: self
                .nanos
                .saturating_add(other.nanos)
                .clamp(-MAX_NANOS, MAX_NANOS),
            format: self.format,
        }
    }

    /// `self × numerator ÷ denominator`, rounded up, in the format of `self`.
    pub fn scaled(&self, numerator: i128, denominator: i128) -> Quantity {
        let product = self.nanos.saturating_mul(numerator);
        Quantity {
            nanos: ceil_div(product, denominator.max(1)).clamp(-MAX_NANOS, MAX_NANOS),
            format: self.format,
        }
    }

    /// Whole units, rounded up (`Value()`).
    pub fn value(&self) -> i128 {
        ceil_div(self.nanos, NANO)
    }

    /// Thousandths, rounded up (`MilliValue()`).
    pub fn milli_value(&self) -> i128 {
        ceil_div(self.nanos, 1_000_000)
    }

    /// What LimitRanger compares: thousandths, unless an operand is too large
    /// for them, then whole units.
    pub fn compare_for_limits(&self, other: &Quantity) -> Ordering {
        if self.value() > MAX_MILLI_VALUE || other.value() > MAX_MILLI_VALUE {
            self.value().cmp(&other.value())
        } else {
            self.milli_value().cmp(&other.milli_value())
        }
    }

    /// `true` when the quantity fits whole units and thousandths as the
    /// apiserver's ratio check wants (see [`Quantity::compare_for_limits`]).
    pub fn fits_milli(&self) -> bool {
        self.value() <= MAX_MILLI_VALUE
    }
}

fn ceil_div(a: i128, b: i128) -> i128 {
    let q = a / b;
    if a % b != 0 && (a > 0) == (b > 0) {
        q + 1
    } else {
        q
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.nanos == other.nanos
    }
}

impl Eq for Quantity {}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> Ordering {
        self.nanos.cmp(&other.nanos)
    }
}

impl fmt::Display for Quantity {
    /// The canonical form: binary quantities of 1024 and more that are whole
    /// multiples print with the largest binary suffix that keeps them whole;
    /// everything else prints as a whole number with the largest decimal
    /// suffix (or `e` exponent) that keeps it whole.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.nanos == 0 {
            return f.write_str("0");
        }
        let mut format = self.format;
        if format == Format::BinarySI && (self.nanos.abs() < 1024 * NANO || self.nanos % NANO != 0)
        {
            format = Format::DecimalSI;
        }
        if format == Format::BinarySI {
            let mut units = self.nanos / NANO;
            let mut suffix = "";
            for larger in ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"] {
                if units % 1024 != 0 {
                    break;
                }
                units /= 1024;
                suffix = larger;
            }
            return write!(f, "{units}{suffix}");
        }
        // nanos = mantissa × 10^exponent with exponent a multiple of 3, as large as keeps it whole.
        let mut mantissa = self.nanos;
        let mut exponent = -9;
        while exponent < 18 && mantissa % 1000 == 0 {
            mantissa /= 1000;
            exponent += 3;
        }
        if format == Format::DecimalExponent {
            return if exponent == 0 {
                write!(f, "{mantissa}")
            } else {
                write!(f, "{mantissa}e{exponent}")
            };
        }
        let suffix = match exponent {
            -9 => "n",
            -6 => "u",
            -3 => "m",
            0 => "",
            3 => "k",
            6 => "M",
            9 => "G",
            12 => "T",
            15 => "P",
            _ => "E",
        };
        write!(f, "{mantissa}{suffix}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(text: &str) -> String {
        Quantity::parse(text).expect(text).to_string()
    }

    /// A text read again is the quantity it was the first time, whatever
    /// was read between, and one that is not a quantity stays none.
    #[test]
    fn quantities_read_again_are_what_they_were() {
        let texts: Vec<String> = (0..40)
            .map(|i| match i % 4 {
                0 => format!("{i}m"),
                1 => format!("{i}Mi"),
                2 => format!("{i}x"),
                _ => format!("{i}e3"),
            })
            .collect();
        for round in 0..3 {
            for text in texts.iter().chain(texts.iter().rev().take(8)) {
                let got = Quantity::from_value(&Value::String(text.clone()));
                let fresh = Quantity::parse(text);
                assert_eq!(
                    got.map(|q| (q.to_string(), q.format)),
                    fresh.map(|q| (q.to_string(), q.format)),
                    "{text} in round {round}"
                );
            }
        }
    }

    #[test]
    fn prints_the_canonical_form() {
        for (input, expected) in [
            ("1Gi", "1Gi"),
            ("1024Mi", "1Gi"),
            ("1536Mi", "1536Mi"),
            ("2048", "2048"),
            ("0.5", "500m"),
            ("1000m", "1"),
            ("1500m", "1500m"),
            ("2000", "2k"),
            ("100m", "100m"),
            ("0.5Gi", "512Mi"),
            ("512Ki", "512Ki"),
            ("1000Ki", "1000Ki"),
            ("1023", "1023"),
            ("0.1Ki", "102400m"),
            ("1e3", "1e3"),
            ("1500e-3", "1500e-3"),
            ("0", "0"),
            ("0Mi", "0"),
            ("-2Gi", "-2Gi"),
            ("10M", "10M"),
            ("1.5G", "1500M"),
        ] {
            assert_eq!(canonical(input), expected, "{input}");
        }
    }

    #[test]
    fn compares_exactly_and_rejects_non_quantities() {
        let q = |s: &str| Quantity::parse(s).expect(s);
        assert!(q("1Gi") > q("1G"));
        assert_eq!(q("1000m"), q("1"));
        assert_eq!(q("0.1").milli_value(), 100);
        assert_eq!(q("1n").milli_value(), 1);
        assert_eq!(q("1.5").value(), 2);
        assert_eq!(q("100Mi").add(&q("28Mi")).to_string(), "128Mi");
        assert_eq!(q("1").add(&q("500m")).to_string(), "1500m");
        assert_eq!(q("0001.50"), q("1.5"));
        // A fraction of a nano rounds up, in 64 bits and past them.
        assert_eq!(q("1.5n"), q("2n"));
        assert_eq!(q("0.0000000001"), q("1n"));
        assert_eq!(q("9E"), q("9000P"));
        assert_eq!(q("1.0000000001E"), q("1000000000100000000"));
        assert_eq!(q("10000000000.0000000001"), q("10000000000000000001n"));
        assert_eq!(q(&format!("{}1", "0".repeat(40))), q("1"));
        assert!(Quantity::parse(&format!("0.{}", "1".repeat(31))).is_none());
        for bad in ["", "lots", "1.2.3", "1Gb", "e3", "1e", "--1", "."] {
            assert!(Quantity::parse(bad).is_none(), "{bad}");
        }
        assert_eq!(
            Quantity::from_value(&serde_json::json!(1024)).map(|q| q.to_string()),
            Some("1024".into())
        );
    }
}
