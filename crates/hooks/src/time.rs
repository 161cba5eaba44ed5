//! RFC 3339 timestamps in UTC with a fixed width, so that they sort as text.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::AuditError;

/// `time` as `YYYY-MM-DDTHH:MM:SS.mmmZ`. Times before 1970 (a clock set wrong) are written as the epoch rather
/// than failing, because a timestamp must never stop an audit row.
pub fn rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let millis = since.subsec_millis();
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Now, as [`rfc3339`].
pub(crate) fn now() -> String {
    rfc3339(SystemTime::now())
}

/// A time bound given by a user, in the stored format so that comparing text compares times: a date
/// (`2026-11-30`, the start of that day), or a UTC time with or without milliseconds (`2026-11-30T02:47:15Z`,
/// `2026-11-30T02:47:15.123Z`; a missing fraction becomes `.000`). Anything else is an
/// [`AuditError::Time`] naming it: a filter that cannot be read must not read as "nothing matched".
///
/// ```
/// assert_eq!(agent_hooks::time_bound("2026-11-30T02:47:15Z").unwrap(), "2026-11-30T02:47:15.000Z");
/// assert_eq!(agent_hooks::time_bound("2026-11-30").unwrap(), "2026-11-30");
/// assert!(agent_hooks::time_bound("yesterday").is_err());
/// ```
pub fn time_bound(text: &str) -> Result<String, AuditError> {
    let invalid = || AuditError::Time {
        value: text.to_owned(),
    };
    let (date, time) = match text.split_once('T') {
        Some((date, time)) => (date, Some(time)),
        None => (text, None),
    };
    if !valid_date(date) {
        return Err(invalid());
    }
    let Some(time) = time else {
        return Ok(text.to_owned());
    };
    let clock = time.strip_suffix('Z').ok_or_else(invalid)?;
    let (hms, millis) = match clock.split_once('.') {
        Some((hms, millis)) => (hms, Some(millis)),
        None => (clock, None),
    };
    let fields = numbers(hms, ':', &[2, 2, 2]).ok_or_else(invalid)?;
    let in_range =
        matches!(fields.as_slice(), [hour, minute, second] if *hour < 24 && *minute < 60 && *second < 61);
    if !in_range || millis.is_some_and(|m| numbers(m, '.', &[3]).is_none()) {
        return Err(invalid());
    }
    Ok(format!("{date}T{hms}.{}Z", millis.unwrap_or("000")))
}

/// Whether `date` is `YYYY-MM-DD` with a month and a day that exist in some year.
fn valid_date(date: &str) -> bool {
    matches!(numbers(date, '-', &[4, 2, 2]).as_deref(), Some([_, month, day]) if (1..=12).contains(month) && (1..=31).contains(day))
}

/// The numbers of `text` split at `separator`, each of exactly the digits `widths` gives; `None` otherwise.
fn numbers(text: &str, separator: char, widths: &[usize]) -> Option<Vec<u32>> {
    let parts: Vec<&str> = text.split(separator).collect();
    if parts.len() != widths.len() {
        return None;
    }
    parts
        .iter()
        .zip(widths)
        .map(|(part, width)| {
            (part.len() == *width && part.bytes().all(|b| b.is_ascii_digit()))
                .then(|| part.parse().ok())
                .flatten()
        })
        .collect()
}

/// The proleptic Gregorian date of a count of days since 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn known_instants() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = UNIX_EPOCH + Duration::from_millis(951_782_400_123); // 2000-02-29
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00.123Z");
        let late = UNIX_EPOCH + Duration::from_secs(1_796_006_835); // 2026-11-30T02:47:15Z
        assert_eq!(rfc3339(late), "2026-11-30T02:47:15.000Z");
        let end = UNIX_EPOCH + Duration::from_secs(4_102_444_799); // 2099-12-31T23:59:59Z
        assert_eq!(rfc3339(end), "2099-12-31T23:59:59.000Z");
    }

    #[test]
    fn bounds_compare_like_times() {
        assert_eq!(
            time_bound("2026-11-30T02:47:15Z").unwrap(),
            "2026-11-30T02:47:15.000Z"
        );
        assert!(time_bound("2026-11-30T02:47:15Z").unwrap().as_str() <= "2026-11-30T02:47:15.001Z");
        assert_eq!(time_bound("2026-11-30").unwrap(), "2026-11-30");
        assert_eq!(
            time_bound("2026-11-30T02:47:15.123Z").unwrap(),
            "2026-11-30T02:47:15.123Z"
        );
    }

    #[test]
    fn a_bound_that_is_no_time_is_an_error_naming_it() {
        for bad in [
            "garbage",
            "",
            "2026-13-01",
            "2026-11-32",
            "26-11-30",
            "2026-11-30T02:47:15",
            "2026-11-30T25:00:00Z",
            "2026-11-30T02:47Z",
            "2026-11-30T02:47:15.1Z",
            "2026-11-30T02:47:15+01:00",
            "2026-11-30 02:47:15Z",
            "1h",
        ] {
            let error = time_bound(bad).unwrap_err().to_string();
            assert!(error.contains(&format!("`{bad}`")), "{bad}: {error}");
        }
    }

    proptest::proptest! {
        #[test]
        fn text_order_is_time_order(a in 0u64..4_000_000_000_000, b in 0u64..4_000_000_000_000) {
            let ta = rfc3339(UNIX_EPOCH + Duration::from_millis(a));
            let tb = rfc3339(UNIX_EPOCH + Duration::from_millis(b));
            proptest::prop_assert_eq!(a.cmp(&b), ta.cmp(&tb));
        }
    }
}
