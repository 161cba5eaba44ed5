//! Duplicate-call detection: the same call made again and again is a loop, not progress.

use std::collections::HashMap;

use serde_json::Value;

use crate::config::LimitsConfig;

/// How a call compares with the calls just before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DuplicateCheck {
    /// Not made in the previous step.
    Fresh,
    /// Made in `count` consecutive steps, still under the limit: it runs.
    Repeated {
        /// How many consecutive steps made it, this one included.
        count: u32,
    },
    /// Made in `count` consecutive steps, at or over the limit: it gets an error result instead of running.
    Blocked {
        /// How many consecutive steps made it, this one included.
        count: u32,
    },
}

/// Counts, for each call (same tool name, same canonical JSON arguments), the consecutive steps that made it. A
/// model that makes the same call turn after turn is looping; identical calls inside one step count once (they are
/// one request made in parallel, or one step executed in parts, not a loop).
#[derive(Debug, Clone)]
pub struct DuplicateDetector {
    limit: u32,
    /// The step being recorded.
    step: Option<u32>,
    /// The calls of the step before it and how many consecutive steps made each.
    before: HashMap<(String, String), u32>,
    /// The calls of the step being recorded, counted with the steps before.
    current: HashMap<(String, String), u32>,
}

impl DuplicateDetector {
    /// A detector refusing a call made in `config.duplicate_limit` consecutive steps.
    pub fn new(config: &LimitsConfig) -> Self {
        Self {
            limit: config.duplicate_limit,
            step: None,
            before: HashMap::new(),
            current: HashMap::new(),
        }
    }

    /// Records the next step, made of one call of `tool` with `args` (give the canonical tool name so that
    /// aliases compare equal).
    pub fn check(&mut self, tool: &str, args: &Value) -> DuplicateCheck {
        let step = self.step.map_or(1, |step| step.saturating_add(1));
        self.check_step(step, [(tool, args)])
            .into_iter()
            .next()
            .unwrap_or(DuplicateCheck::Fresh)
    }

    /// Records calls of `step` and returns, in order, how each compares with the steps before. Calls given again
    /// for the same step number belong to that step.
    pub fn check_step<'a>(
        &mut self,
        step: u32,
        calls: impl IntoIterator<Item = (&'a str, &'a Value)>,
    ) -> Vec<DuplicateCheck> {
        if self.step != Some(step) {
            self.before = std::mem::take(&mut self.current);
            self.step = Some(step);
        }
        let mut checks = Vec::new();
        for (tool, args) in calls {
            let key = (tool.to_owned(), canonical_json(args));
            let previous = self.before.get(&key).copied().unwrap_or(0);
            let run = *self
                .current
                .entry(key)
                .or_insert_with(|| previous.saturating_add(1));
            checks.push(match run {
                0 | 1 => DuplicateCheck::Fresh,
                count if count >= self.limit => DuplicateCheck::Blocked { count },
                count => DuplicateCheck::Repeated { count },
            });
        }
        checks
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
    fn identical_calls_in_one_step_count_once_and_a_step_without_the_call_resets_it() {
        let mut detector = DuplicateDetector::new(&LimitsConfig::default());
        let (a, b) = (json!({"path": "a"}), json!({"path": "b"}));
        let step = |d: &mut DuplicateDetector, n| {
            d.check_step(n, [("read_file", &a), ("read_file", &a), ("read_file", &b)])
        };
        assert_eq!(step(&mut detector, 1), vec![DuplicateCheck::Fresh; 3]);
        assert_eq!(
            step(&mut detector, 2),
            vec![DuplicateCheck::Repeated { count: 2 }; 3]
        );
        assert_eq!(
            step(&mut detector, 3),
            vec![DuplicateCheck::Blocked { count: 3 }; 3]
        );
        assert_eq!(
            detector.check_step(4, [("read_file", &b)]),
            vec![DuplicateCheck::Blocked { count: 4 }]
        );
        assert_eq!(
            detector.check_step(5, [("read_file", &a)]),
            vec![DuplicateCheck::Fresh]
        );
        assert_eq!(detector.check_step(6, std::iter::empty()), Vec::new());
        assert_eq!(
            detector.check("read_file", &a),
            DuplicateCheck::Fresh,
            "an empty step broke the run"
        );
    }

    #[test]
    fn a_step_given_in_parts_is_one_step() {
        let mut detector = DuplicateDetector::new(&LimitsConfig::default());
        let a = json!({"path": "a"});
        for _ in 0..5 {
            assert_eq!(
                detector.check_step(1, [("read_file", &a)]),
                vec![DuplicateCheck::Fresh]
            );
        }
        assert_eq!(
            detector.check_step(2, [("read_file", &a)]),
            vec![DuplicateCheck::Repeated { count: 2 }]
        );
        assert_eq!(
            detector.check_step(2, [("read_file", &a)]),
            vec![DuplicateCheck::Repeated { count: 2 }]
        );
        assert_eq!(
            detector.check_step(3, [("read_file", &a)]),
            vec![DuplicateCheck::Blocked { count: 3 }]
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
