//! The step limit: `max_steps` steps with tools, then one final turn without tools.

use crate::config::LimitsConfig;

/// The message injected before the final turn.
pub(crate) const FINAL_TURN_REMINDER: &str = "The step limit is reached: tools are no longer available. Answer now with \
     what you have found so far.";

/// What the loop may do at its next step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepGate {
    /// A normal step, with tools.
    Proceed {
        /// The step, from 1.
        step: u32,
    },
    /// The one final turn: no tools, `reminder` injected; the loop ends after it.
    FinalTurn {
        /// The step, from 1.
        step: u32,
        /// The message to inject.
        reminder: &'static str,
    },
    /// The final turn was given: stop.
    Stop,
}

/// Counts the steps of a loop.
#[derive(Debug, Clone)]
pub struct StepLimiter {
    max_steps: u32,
    taken: u32,
}

impl StepLimiter {
    /// A limiter allowing `config.max_steps` steps with tools.
    pub fn new(config: &LimitsConfig) -> Self {
        Self {
            max_steps: config.max_steps,
            taken: 0,
        }
    }

    /// Takes the next step.
    pub fn next_step(&mut self) -> StepGate {
        let step = self.taken.saturating_add(1);
        if self.taken > self.max_steps {
            return StepGate::Stop;
        }
        self.taken = step;
        if step > self.max_steps {
            StepGate::FinalTurn {
                step,
                reminder: FINAL_TURN_REMINDER,
            }
        } else {
            StepGate::Proceed { step }
        }
    }

    /// The steps taken so far (the final turn included).
    pub fn taken(&self) -> u32 {
        self.taken
    }

    /// The step limit.
    pub fn max_steps(&self) -> u32 {
        self.max_steps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter(max_steps: u32) -> StepLimiter {
        StepLimiter::new(&LimitsConfig {
            max_steps,
            ..LimitsConfig::default()
        })
    }

    #[test]
    fn the_default_allows_eight_steps_then_one_final_turn_then_stops() {
        let mut steps = StepLimiter::new(&LimitsConfig::default());
        for step in 1..=8 {
            assert_eq!(steps.next_step(), StepGate::Proceed { step });
        }
        assert_eq!(
            steps.next_step(),
            StepGate::FinalTurn {
                step: 9,
                reminder: FINAL_TURN_REMINDER
            }
        );
        assert_eq!(steps.next_step(), StepGate::Stop);
        assert_eq!(steps.next_step(), StepGate::Stop, "stopping is final");
        assert_eq!(steps.taken(), 9);
    }

    #[test]
    fn one_step_limit() {
        let mut steps = limiter(1);
        assert_eq!(steps.next_step(), StepGate::Proceed { step: 1 });
        assert!(matches!(steps.next_step(), StepGate::FinalTurn { step: 2, .. }));
        assert_eq!(steps.next_step(), StepGate::Stop);
    }
}
