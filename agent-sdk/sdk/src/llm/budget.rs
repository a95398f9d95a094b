//! What one task may spend on the model: a number of calls and of tokens. When an answer has
//! no `usage`, tokens are estimated from the text (four characters a token).

use super::LlmError;

/// A task's remaining calls and tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    max_calls: u32,
    max_tokens: u64,
    calls: u32,
    tokens: u64,
}

impl Budget {
    /// A budget of `max_calls` calls and `max_tokens` tokens.
    pub fn new(max_calls: u32, max_tokens: u64) -> Budget {
        Budget {
            max_calls,
            max_tokens,
            calls: 0,
            tokens: 0,
        }
    }

    /// Refuses a call when either limit is reached.
    pub fn check(&self) -> Result<(), LlmError> {
        if self.calls >= self.max_calls {
            return Err(LlmError::Budget(format!(
                "{} of {} calls used (raise [llm] max_calls_per_task or HUDDLE_LLM_MAX_CALLS)",
                self.calls, self.max_calls
            )));
        }
        if self.tokens >= self.max_tokens {
            return Err(LlmError::Budget(format!(
                "{} of {} tokens used (raise [llm] max_tokens_per_task or HUDDLE_LLM_MAX_TASK_TOKENS)",
                self.tokens, self.max_tokens
            )));
        }
        Ok(())
    }

    /// Records one call that used `tokens`.
    pub fn charge(&mut self, tokens: u64) {
        self.calls += 1;
        self.tokens = self.tokens.saturating_add(tokens);
    }

    /// Calls made.
    pub fn calls(&self) -> u32 {
        self.calls
    }

    /// Tokens used.
    pub fn tokens(&self) -> u64 {
        self.tokens
    }
}

/// Tokens in `chars` characters of text, roughly.
pub fn estimate_tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_and_tokens_run_out() {
        let mut b = Budget::new(2, 1000);
        b.charge(10);
        assert!(b.check().is_ok());
        b.charge(10);
        assert!(b.check().unwrap_err().to_string().contains("2 of 2 calls"));
        let mut b = Budget::new(10, 100);
        b.charge(150);
        assert!(b.check().unwrap_err().to_string().contains("tokens"));
    }
}
