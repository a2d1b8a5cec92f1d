//! Sprig's numbers: conversions (`int`, `int64`, `float64`, `atoi`,
//! `toDecimal`), integer arithmetic (answering Go's `int64`, wrapping on
//! overflow as Go does), float arithmetic done in decimal (`addf 0.1 0.2`
//! is 0.3), and rounding.

use super::super::funcs::{arg, arity, int, string};
use super::super::value::Value;
use super::{Result, to_float64, to_int64};
use crate::gotemplate::Func;

pub const FUNCS: &[(&str, Func)] = &[
    ("atoi", atoi),
    ("int", to_int),
    ("int64", to_int64_func),
    ("float64", to_float),
    ("toDecimal", to_decimal),
    ("add1", add1),
    ("add", add),
    ("sub", sub),
    ("div", div),
    ("mod", modulo),
    ("mul", mul),
    ("add1f", add1f),
    ("addf", addf),
    ("subf", subf),
    ("divf", divf),
    ("mulf", mulf),
    ("biggest", max),
    ("max", max),
    ("min", min),
    ("maxf", maxf),
    ("minf", minf),
    ("ceil", ceil),
    ("floor", floor),
    ("round", round),
];

/// Go's `strconv.Atoi`: decimal digits after an optional sign; anything
/// else is 0 (Sprig drops the error).
fn atoi(args: &[Value]) -> Result {
    arity(args, 1)?;
    let s = string(args, 0)?;
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    let ok = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    Ok(Value::Int(if ok { s.parse().unwrap_or(0) } else { 0 }))
}

fn to_int(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::Int(to_int64(arg(args, 0))))
}

fn to_int64_func(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::Int64(to_int64(arg(args, 0))))
}

fn to_float(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::Float(to_float64(arg(args, 0))))
}

/// The value's text read as an octal number (0 when it is not one).
fn to_decimal(args: &[Value]) -> Result {
    arity(args, 1)?;
    let text = arg(args, 0).print();
    let digits = text.strip_prefix(['+', '-']).unwrap_or(&text);
    let octal = !digits.is_empty() && digits.bytes().all(|b| (b'0'..=b'7').contains(&b));
    let value = if octal {
        i64::from_str_radix(&text, 8).unwrap_or(0)
    } else {
        0
    };
    Ok(Value::Int64(value))
}

fn add1(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::Int64(to_int64(arg(args, 0)).wrapping_add(1)))
}

fn add(args: &[Value]) -> Result {
    Ok(Value::Int64(
        args.iter()
            .fold(0i64, |sum, v| sum.wrapping_add(to_int64(v))),
    ))
}

fn sub(args: &[Value]) -> Result {
    arity(args, 2)?;
    Ok(Value::Int64(
        to_int64(arg(args, 0)).wrapping_sub(to_int64(arg(args, 1))),
    ))
}

const DIVIDE_BY_ZERO: &str = "runtime error: integer divide by zero";

fn div(args: &[Value]) -> Result {
    arity(args, 2)?;
    let (a, b) = (to_int64(arg(args, 0)), to_int64(arg(args, 1)));
    if b == 0 {
        return Err(DIVIDE_BY_ZERO.to_string());
    }
    Ok(Value::Int64(a.wrapping_div(b)))
}

fn modulo(args: &[Value]) -> Result {
    arity(args, 2)?;
    let (a, b) = (to_int64(arg(args, 0)), to_int64(arg(args, 1)));
    if b == 0 {
        return Err(DIVIDE_BY_ZERO.to_string());
    }
    Ok(Value::Int64(a.wrapping_rem(b)))
}

fn mul(args: &[Value]) -> Result {
    let Some((first, rest)) = args.split_first() else {
        return arity(args, 1).map(|()| Value::Nil);
    };
    Ok(Value::Int64(
        rest.iter().fold(to_int64(first), |product, v| {
            product.wrapping_mul(to_int64(v))
        }),
    ))
}

/// An exact decimal: `digits × 10^exponent`.
#[derive(Clone, Copy, Debug)]
struct Decimal {
    digits: i128,
    exponent: i32,
}

/// Places Sprig's decimal library keeps of a quotient.
const DIVISION_PLACES: i32 = 16;

impl Decimal {
    /// The shortest decimal that reads back as `f` (what the decimal
    /// library makes of a float); refused for NaN and infinities.
    fn from_float(f: f64) -> std::result::Result<Decimal, String> {
        if !f.is_finite() {
            return Err(format!(
                "Cannot create a Decimal from {}",
                super::super::value::format_float_g(f)
            ));
        }
        let text = format!("{f:e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        let exponent: i32 = exponent.parse().unwrap_or(0);
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits: i128 = format!("{whole}{fraction}").parse().unwrap_or(0);
        Ok(Decimal {
            digits,
            exponent: exponent - fraction.len() as i32,
        }
        .trimmed())
    }

    /// Trailing zeros of the digits moved into the exponent.
    fn trimmed(mut self) -> Decimal {
        if self.digits == 0 {
            return Decimal {
                digits: 0,
                exponent: 0,
            };
        }
        while self.digits % 10 == 0 {
            self.digits /= 10;
            self.exponent += 1;
        }
        self
    }

    /// The nearest float (the decimal read as Go reads decimal text).
    fn to_float(self) -> f64 {
        format!("{}e{}", self.digits, self.exponent)
            .parse()
            .unwrap_or(f64::NAN)
    }

    /// Both at the lower exponent, if the digits fit.
    fn aligned(self, other: Decimal) -> Option<(i128, i128, i32)> {
        let exponent = self.exponent.min(other.exponent);
        let scale = |d: Decimal| {
            10i128
                .checked_pow(u32::try_from(d.exponent - exponent).ok()?)
                .and_then(|p| d.digits.checked_mul(p))
        };
        Some((scale(self)?, scale(other)?, exponent))
    }

    fn add(self, other: Decimal) -> Option<Decimal> {
        let (a, b, exponent) = self.aligned(other)?;
        Some(
            Decimal {
                digits: a.checked_add(b)?,
                exponent,
            }
            .trimmed(),
        )
    }

    fn sub(self, other: Decimal) -> Option<Decimal> {
        self.add(Decimal {
            digits: -other.digits,
            exponent: other.exponent,
        })
    }

    fn mul(self, other: Decimal) -> Option<Decimal> {
        Some(
            Decimal {
                digits: self.digits.checked_mul(other.digits)?,
                exponent: self.exponent.checked_add(other.exponent)?,
            }
            .trimmed(),
        )
    }

    /// The quotient to 16 places, half away from zero.
    fn div(self, other: Decimal) -> Option<Decimal> {
        let shift = self.exponent - other.exponent + DIVISION_PLACES;
        let power = |n: i32| 10i128.checked_pow(u32::try_from(n).ok()?);
        let (mut numerator, mut denominator) = (self.digits, other.digits);
        if shift >= 0 {
            numerator = numerator.checked_mul(power(shift)?)?;
        } else {
            denominator = denominator.checked_mul(power(-shift)?)?;
        }
        let (quotient, remainder) = (numerator / denominator, numerator % denominator);
        let half_or_more = remainder.checked_abs()?.checked_mul(2)? >= denominator.checked_abs()?;
        let away = if (numerator < 0) != (denominator < 0) {
            -1
        } else {
            1
        };
        let digits = if half_or_more {
            quotient + away
        } else {
            quotient
        };
        Some(
            Decimal {
                digits,
                exponent: -DIVISION_PLACES,
            }
            .trimmed(),
        )
    }
}

/// A float operation over the arguments as Sprig does it: in decimal,
/// exactly (to 16 places for a quotient), then the nearest float. Where the
/// digits would not fit, the float operation.
fn decimal_fold(
    first: &Value,
    rest: &[Value],
    op: fn(Decimal, Decimal) -> Option<Decimal>,
    float_op: fn(f64, f64) -> f64,
    dividing: bool,
) -> Result {
    let mut exact = Some(Decimal::from_float(to_float64(first))?);
    let mut approximate = to_float64(first);
    for value in rest {
        let f = to_float64(value);
        let d = Decimal::from_float(f)?;
        if dividing && d.digits == 0 {
            return Err("decimal division by zero".to_string());
        }
        exact = exact.and_then(|e| op(e, d));
        approximate = match exact {
            Some(e) => e.to_float(),
            None => float_op(approximate, f),
        };
    }
    Ok(Value::Float(approximate + 0.0))
}

fn add1f(args: &[Value]) -> Result {
    arity(args, 1)?;
    decimal_fold(
        arg(args, 0),
        &[Value::Int(1)],
        Decimal::add,
        |a, b| a + b,
        false,
    )
}

fn addf(args: &[Value]) -> Result {
    decimal_fold(&Value::Float(0.0), args, Decimal::add, |a, b| a + b, false)
}

fn first_and_rest(args: &[Value]) -> std::result::Result<(&Value, &[Value]), String> {
    args.split_first()
        .ok_or_else(|| "wrong number of args: want at least 1 got 0".to_string())
}

fn subf(args: &[Value]) -> Result {
    let (first, rest) = first_and_rest(args)?;
    decimal_fold(first, rest, Decimal::sub, |a, b| a - b, false)
}

fn mulf(args: &[Value]) -> Result {
    let (first, rest) = first_and_rest(args)?;
    decimal_fold(first, rest, Decimal::mul, |a, b| a * b, false)
}

fn divf(args: &[Value]) -> Result {
    let (first, rest) = first_and_rest(args)?;
    decimal_fold(first, rest, Decimal::div, |a, b| a / b, true)
}

fn max(args: &[Value]) -> Result {
    let (first, rest) = first_and_rest(args)?;
    Ok(Value::Int64(
        rest.iter().map(to_int64).fold(to_int64(first), i64::max),
    ))
}

fn min(args: &[Value]) -> Result {
    let (first, rest) = first_and_rest(args)?;
    Ok(Value::Int64(
        rest.iter().map(to_int64).fold(to_int64(first), i64::min),
    ))
}

/// Go's `math.Max`: NaN wins, and +0 over -0.
fn go_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == 0.0 && b == 0.0 {
        if a.is_sign_positive() { a } else { b }
    } else if a > b {
        a
    } else {
        b
    }
}

fn go_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == 0.0 && b == 0.0 {
        if a.is_sign_negative() { a } else { b }
    } else if a < b {
        a
    } else {
        b
    }
}

fn maxf(args: &[Value]) -> Result {
    let (first, rest) = first_and_rest(args)?;
    Ok(Value::Float(
        rest.iter().map(to_float64).fold(to_float64(first), go_max),
    ))
}

fn minf(args: &[Value]) -> Result {
    let (first, rest) = first_and_rest(args)?;
    Ok(Value::Float(
        rest.iter().map(to_float64).fold(to_float64(first), go_min),
    ))
}

fn ceil(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::Float(to_float64(arg(args, 0)).ceil()))
}

fn floor(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::Float(to_float64(arg(args, 0)).floor()))
}

/// A float argument: a float, or an integer constant.
fn float_param(args: &[Value], i: usize) -> std::result::Result<f64, String> {
    match arg(args, i) {
        Value::Float(f) => Ok(*f),
        Value::Int(n) => Ok(*n as f64),
        other => Err(format!(
            "wrong type for value; expected float64; got {}",
            super::reflect::go_type(other)
        )),
    }
}

/// 10 to the power `n`, as Go's `math.Pow` makes it for an integer power.
fn pow10(n: i64) -> f64 {
    let magnitude = 10f64.powi(i32::try_from(n.unsigned_abs()).unwrap_or(i32::MAX));
    if n < 0 { 1.0 / magnitude } else { magnitude }
}

/// `round X PLACES [HALF]`: up when the fraction past `PLACES` is at
/// least `HALF` (0.5), down otherwise.
fn round(args: &[Value]) -> Result {
    if args.len() < 2 {
        return Err(format!(
            "wrong number of args: want at least 2 got {}",
            args.len()
        ));
    }
    let value = to_float64(arg(args, 0));
    let places = int(args, 1)?;
    let half = if args.len() > 2 {
        float_param(args, 2)?
    } else {
        0.5
    };
    let power = pow10(places);
    let scaled = power * value;
    let fraction = scaled.fract();
    let rounded = if fraction >= half {
        scaled.ceil()
    } else {
        scaled.floor()
    };
    Ok(Value::Float(rounded / power))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floats(f: Func, args: &[f64]) -> String {
        let args: Vec<Value> = args.iter().map(|&x| Value::Float(x)).collect();
        f(&args).unwrap().print()
    }

    #[test]
    fn float_arithmetic_is_decimal() {
        assert_eq!(floats(addf, &[0.1, 0.2]), "0.3");
        assert_eq!(floats(subf, &[1.0, 0.9]), "0.1");
        assert_eq!(floats(mulf, &[1.1, 3.0]), "3.3");
        assert_eq!(floats(divf, &[10.0, 3.0]), "3.3333333333333335");
        assert_eq!(floats(divf, &[2.0, 3.0]), "0.6666666666666667");
        assert_eq!(floats(divf, &[-2.0, 3.0]), "-0.6666666666666667");
        assert!(divf(&[Value::Float(1.0), Value::Float(0.0)]).is_err());
        assert_eq!(floats(addf, &[1e300, 1e-300]), "1e+300");
    }

    #[test]
    fn rounding_follows_sprig() {
        let r = |x: f64, p: i64| round(&[Value::Float(x), Value::Int(p)]).unwrap().print();
        assert_eq!(r(1.23456, 2), "1.23");
        assert_eq!(r(2.5, 0), "3");
        assert_eq!(r(-2.5, 0), "-3");
        assert_eq!(r(1234.5, -2), "1200");
    }
}
