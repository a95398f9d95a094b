//! When to stop asking a model that does not help: two unusable replies in a row (garbage,
//! HTML, refused edits, errors), the same refusal twice, or model calls that keep ending in
//! server errors. Without it a bad model burns every iteration of every task.

use std::collections::BTreeSet;

/// Unusable replies in a row that end the cycle.
const UNUSABLE_IN_A_ROW: usize = 2;

/// Model calls in a row that ended in a 5xx answer (after the client's own retries) that make
/// the model count as unreachable.
const SERVER_ERRORS_IN_A_ROW: u32 = 2;

/// What to do after an unusable reply.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Ask again (the reason goes back to the model).
    TryAgain,
    /// Stop the cycle: the model's replies cannot be used; the text says why.
    GiveUp(String),
    /// Stop the cycle: the endpoint keeps failing.
    Unreachable,
}

/// The model's track record within one task.
#[derive(Debug, Default)]
pub(crate) struct Patience {
    /// Reasons of the unusable replies since the last usable one.
    in_a_row: Vec<String>,
    /// Every refusal reason given so far.
    refusals: BTreeSet<String>,
    server_errors: u32,
}

impl Patience {
    /// A usable reply (applied, or a reasoned `cannot_fix`).
    pub fn usable(&mut self) {
        self.in_a_row.clear();
        self.server_errors = 0;
    }

    /// An unusable reply: unreadable, refused by the guard, or a failed call.
    pub fn unusable(&mut self, reason: &str) -> Next {
        self.server_errors = 0;
        let repeated = !self.refusals.insert(reason.to_string());
        self.in_a_row.push(reason.to_string());
        if self.in_a_row.len() >= UNUSABLE_IN_A_ROW {
            return Next::GiveUp(format!(
                "the model gave {} unusable replies in a row: {}",
                self.in_a_row.len(),
                self.in_a_row.join("; ")
            ));
        }
        if repeated {
            return Next::GiveUp(format!(
                "the model gave the same unusable reply twice: {reason}"
            ));
        }
        Next::TryAgain
    }

    /// A call that ended in a server error (5xx) after the client's retries.
    pub fn server_error(&mut self, reason: &str) -> Next {
        self.server_errors += 1;
        if self.server_errors >= SERVER_ERRORS_IN_A_ROW {
            return Next::Unreachable;
        }
        self.in_a_row.push(reason.to_string());
        if self.in_a_row.len() >= UNUSABLE_IN_A_ROW {
            return Next::GiveUp(format!(
                "the model gave {} unusable replies in a row: {}",
                self.in_a_row.len(),
                self.in_a_row.join("; ")
            ));
        }
        Next::TryAgain
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_unusable_replies_in_a_row_give_up_one_between_good_ones_does_not() {
        let mut p = Patience::default();
        assert_eq!(p.unusable("garbage"), Next::TryAgain);
        p.usable();
        assert_eq!(p.unusable("html"), Next::TryAgain);
        let Next::GiveUp(why) = p.unusable("refused: x") else {
            panic!("give up expected")
        };
        assert!(why.contains("html; refused: x"), "{why}");
    }

    #[test]
    fn the_same_refusal_twice_gives_up_even_apart() {
        let mut p = Patience::default();
        assert_eq!(p.unusable("refused: a"), Next::TryAgain);
        p.usable();
        assert!(matches!(p.unusable("refused: a"), Next::GiveUp(_)));
    }

    #[test]
    fn server_errors_in_a_row_make_the_model_unreachable() {
        let mut p = Patience::default();
        assert_eq!(p.server_error("500"), Next::TryAgain);
        assert_eq!(p.server_error("500"), Next::Unreachable);
    }
}
