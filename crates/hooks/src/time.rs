//! RFC 3339 timestamps in UTC with a fixed width, so that they sort as text.

use std::time::{SystemTime, UNIX_EPOCH};

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

/// A bound given by a user (`2026-11-30T02:47:15Z`, `2026-11-30`) in the stored format, so that comparing text
/// compares times: a missing fraction becomes `.000`.
pub(crate) fn normalize_bound(bound: &str) -> String {
    match bound.strip_suffix('Z') {
        Some(head) if head.len() == 19 => format!("{head}.000Z"),
        _ => bound.to_owned(),
    }
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
            normalize_bound("2026-11-30T02:47:15Z"),
            "2026-11-30T02:47:15.000Z"
        );
        assert!(normalize_bound("2026-11-30T02:47:15Z").as_str() <= "2026-11-30T02:47:15.001Z");
        assert_eq!(normalize_bound("2026-11-30"), "2026-11-30");
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
