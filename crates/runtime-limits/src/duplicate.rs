//! Duplicate-call detection: the same call made again and again is a loop, not progress.

use serde_json::Value;

use crate::config::LimitsConfig;

/// How a call compares with the calls just before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DuplicateCheck {
    /// Not the same as the previous call.
    Fresh,
    /// The `count`-th identical consecutive call, still under the limit: it runs.
    Repeated {
        /// How many identical calls in a row, this one included.
        count: u32,
    },
    /// The `count`-th identical consecutive call, at or over the limit: it gets an error result instead of running.
    Blocked {
        /// How many identical calls in a row, this one included.
        count: u32,
    },
}

/// Counts identical consecutive calls (same tool name, same canonical JSON arguments).
#[derive(Debug, Clone)]
pub struct DuplicateDetector {
    limit: u32,
    last: Option<(String, String)>,
    run: u32,
}

impl DuplicateDetector {
    /// A detector refusing the `config.duplicate_limit`-th identical consecutive call.
    pub fn new(config: &LimitsConfig) -> Self {
        Self {
            limit: config.duplicate_limit,
            last: None,
            run: 0,
        }
    }

    /// Records the call of `tool` with `args` (give the canonical tool name so that aliases compare equal).
    pub fn check(&mut self, tool: &str, args: &Value) -> DuplicateCheck {
        let key = (tool.to_owned(), canonical_json(args));
        if self.last.as_ref() == Some(&key) {
            self.run = self.run.saturating_add(1);
        } else {
            self.last = Some(key);
            self.run = 1;
        }
        match self.run {
            1 => DuplicateCheck::Fresh,
            count if count >= self.limit => DuplicateCheck::Blocked { count },
            count => DuplicateCheck::Repeated { count },
        }
    }
}

/// `value` as JSON text with object keys sorted at every level, so that key order never hides a repeat.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {
            out.push_str(&value.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn the_third_identical_call_is_blocked_and_so_are_later_ones() {
        let mut detector = DuplicateDetector::new(&LimitsConfig::default());
        let args = json!({"command": "ls", "timeout": 5});
        assert_eq!(detector.check("run_bash", &args), DuplicateCheck::Fresh);
        assert_eq!(
            detector.check("run_bash", &args),
            DuplicateCheck::Repeated { count: 2 }
        );
        assert_eq!(
            detector.check("run_bash", &args),
            DuplicateCheck::Blocked { count: 3 }
        );
        assert_eq!(
            detector.check("run_bash", &args),
            DuplicateCheck::Blocked { count: 4 }
        );
    }

    #[test]
    fn a_different_call_in_between_resets_the_count() {
        let mut detector = DuplicateDetector::new(&LimitsConfig::default());
        let a = json!({"path": "a"});
        detector.check("read_file", &a);
        detector.check("read_file", &a);
        assert_eq!(
            detector.check("read_file", &json!({"path": "b"})),
            DuplicateCheck::Fresh
        );
        assert_eq!(detector.check("read_file", &a), DuplicateCheck::Fresh);
        assert_eq!(
            detector.check("grep_files", &a),
            DuplicateCheck::Fresh,
            "another tool is another call"
        );
    }

    #[test]
    fn key_order_does_not_hide_a_repeat() {
        let mut detector = DuplicateDetector::new(&LimitsConfig::default());
        detector.check("t", &json!({"a": 1, "b": {"x": [1, 2], "y": null}}));
        detector.check("t", &json!({"b": {"y": null, "x": [1, 2]}, "a": 1}));
        assert_eq!(
            detector.check("t", &json!({"b": {"x": [1, 2], "y": null}, "a": 1})),
            DuplicateCheck::Blocked { count: 3 }
        );
        assert_ne!(canonical_json(&json!([1, 2])), canonical_json(&json!([2, 1])));
    }

    #[test]
    fn a_limit_of_two_blocks_the_second() {
        let mut detector = DuplicateDetector::new(&LimitsConfig {
            duplicate_limit: 2,
            ..LimitsConfig::default()
        });
        detector.check("t", &json!(1));
        assert_eq!(
            detector.check("t", &json!(1)),
            DuplicateCheck::Blocked { count: 2 }
        );
    }

    proptest! {
        #[test]
        fn canonical_json_round_trips(keys in proptest::collection::btree_map("[a-z\"\\\\]{0,4}", 0i64..100, 0..6)) {
            let value = serde_json::to_value(&keys).unwrap();
            let text = canonical_json(&value);
            let back: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(back, value);
        }
    }
}
