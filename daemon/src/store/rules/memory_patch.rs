//! RFC 6902 JSON Patch applied under the memory limits, one operation at a time.
//!
//! A `copy` from the root doubles the document, so checking the limits after the whole patch
//! let 16 operations of a 704-byte patch allocate gigabytes inside the writer every team shares.
//! Here each operation is judged before it runs: what it would add (the value's serialized
//! length, measured without allocating it, plus its key) must fit under `max_bytes` with the
//! document's running size, and the value must fit under `max_depth` where it lands. The
//! running size is an upper bound (additions count their key and separators, removals only
//! their value); when it would trip the limit it is measured exactly once more before refusing.
//! Every byte measured, copied or compared is charged to a work budget, and so is every array
//! element an insert or a removal shifts (a patch of small inserts at the front of a large
//! array moves the whole array per operation), so no patch allowed by the body limit can keep
//! the writer busy for long either.

use super::super::error::{StoreError, StoreResult};
use super::memory::MemoryLimits;
use json_patch::PatchOperation;
use serde_json::Value;

/// How many times the size limit one patch may touch in measuring, copying and comparing.
pub const WORK_BUDGET_FACTOR: usize = 16;

/// What shifting one array element costs, in budget bytes (the shortest element, `0,`).
const SHIFT_COST: usize = 2;

/// Applies `ops` to `doc`, all or none, refusing an operation whose result would break the
/// limits before it is carried out.
pub fn apply_bounded(mut doc: Value, ops: &Value, limits: MemoryLimits) -> StoreResult<Value> {
    let parsed: json_patch::Patch = serde_json::from_value(ops.clone()).map_err(|e| {
        StoreError::invalid(
            "patch",
            format!("a JSON Patch is a list of {{\"op\", \"path\", \"value\"?, \"from\"?}} operations: {e}"),
        )
    })?;
    let mut meter = Meter {
        size: serialized_len(&doc),
        work: 0,
        budget: limits.max_bytes.saturating_mul(WORK_BUDGET_FACTOR),
        limits,
    };
    for (index, op) in parsed.0.iter().enumerate() {
        meter.admit(&doc, index, op)?;
        // One operation at a time (reverted by the library if it fails), so the error names
        // the document as this operation found it.
        json_patch::patch(&mut doc, std::slice::from_ref(op)).map_err(|e| {
            let why = explain(&doc, &e.path.to_string());
            StoreError::invalid(
                "patch",
                format!("operation {index} at {}: {}{why}", e.path, e.kind),
            )
        })?;
    }
    Ok(doc)
}

/// The running size of the document and the work spent so far.
struct Meter {
    size: usize,
    work: usize,
    budget: usize,
    limits: MemoryLimits,
}

impl Meter {
    /// Refuses `op` if what it adds would not fit; otherwise books its effect on the size.
    fn admit(&mut self, doc: &Value, index: usize, op: &PatchOperation) -> StoreResult<()> {
        let path = op.path().as_str();
        match op {
            PatchOperation::Add(_) | PatchOperation::Copy(_) => {
                self.charge_shift(doc, path, false, index)?
            }
            PatchOperation::Remove(_) => self.charge_shift(doc, path, true, index)?,
            PatchOperation::Move(o) => {
                self.charge_shift(doc, o.from.as_str(), true, index)?;
                self.charge_shift(doc, path, false, index)?;
            }
            PatchOperation::Replace(_) | PatchOperation::Test(_) => {}
        }
        // (bytes the operation adds, bytes it frees); the library refuses bad pointers.
        let (grows, frees) = match op {
            PatchOperation::Add(o) => self.place(doc, path, &o.value, false, index)?,
            PatchOperation::Replace(o) => self.place(doc, path, &o.value, true, index)?,
            PatchOperation::Copy(o) => match doc.pointer(o.from.as_str()) {
                Some(source) => self.place(doc, path, source, false, index)?,
                None => return Ok(()),
            },
            PatchOperation::Move(o) => match doc.pointer(o.from.as_str()) {
                Some(moved) => {
                    self.check_depth(path, moved, index)?;
                    // The value changes place: its new key and separators may grow; what the
                    // target overwrites is not counted (an upper bound is enough).
                    let freed = self.removal(doc, o.from.as_str(), index)?;
                    let len = self.measure(moved, index)?;
                    (len + key_len(path) + 2, freed)
                }
                None => return Ok(()),
            },
            PatchOperation::Remove(_) => (0, self.removal(doc, path, index)?),
            PatchOperation::Test(o) => {
                self.measure(&o.value, index)?;
                return Ok(());
            }
        };
        let next = (self.size + grows).saturating_sub(frees);
        if next > self.limits.max_bytes {
            // The running size may overestimate (moves); measure exactly before refusing.
            self.size = serialized_len(doc);
            self.charge(self.size, index)?;
            let exact_next = (self.size + grows).saturating_sub(frees);
            if exact_next > self.limits.max_bytes {
                return Err(StoreError::TooLarge {
                    message: format!(
                        "JSON Patch operation {index} at {path:?} would make the shared memory document about {exact_next} bytes; the limit is {}",
                        self.limits.max_bytes
                    ),
                });
            }
            self.size = exact_next;
        } else {
            self.size = next;
        }
        Ok(())
    }

    /// What putting `value` at `path` adds and frees (an `add`, `replace` or `copy`).
    fn place(
        &mut self,
        doc: &Value,
        path: &str,
        value: &Value,
        replaces: bool,
        index: usize,
    ) -> StoreResult<(usize, usize)> {
        self.check_depth(path, value, index)?;
        let len = self.measure(value, index)?;
        let Some((parent, _)) = path.rsplit_once('/') else {
            return Ok((len, self.size)); // the whole document is replaced
        };
        Ok(match doc.pointer(parent) {
            Some(Value::Object(members)) => match doc.pointer(path) {
                Some(old) => (len, self.measure(old, index)?),
                None => (
                    key_len(path) + 1 + len + usize::from(!members.is_empty()),
                    0,
                ),
            },
            Some(Value::Array(items)) => match doc.pointer(path) {
                // `replace` swaps an element; `add` and `copy` insert one.
                Some(old) if replaces => (len, self.measure(old, index)?),
                _ => (len + usize::from(!items.is_empty()), 0),
            },
            _ => (0, 0),
        })
    }

    /// What removing the value at `path` frees: the value, its key and a separator.
    fn removal(&mut self, doc: &Value, path: &str, index: usize) -> StoreResult<usize> {
        let (Some(old), Some((parent, _))) = (doc.pointer(path), path.rsplit_once('/')) else {
            return Ok(0);
        };
        let len = self.measure(old, index)?;
        Ok(match doc.pointer(parent) {
            Some(Value::Object(m)) => key_len(path) + 1 + len + usize::from(m.len() > 1),
            Some(Value::Array(a)) => len + usize::from(a.len() > 1),
            _ => 0,
        })
    }

    /// Charges the elements after `path` in its array, which an insert there (or a removal)
    /// shifts by one; appending (`-`, or past the last element) shifts none.
    fn charge_shift(
        &mut self,
        doc: &Value,
        path: &str,
        removes: bool,
        index: usize,
    ) -> StoreResult<()> {
        let Some((parent, last)) = path.rsplit_once('/') else {
            return Ok(());
        };
        let (Some(Value::Array(items)), Ok(at)) = (doc.pointer(parent), last.parse::<usize>())
        else {
            return Ok(());
        };
        let shifted = items.len().saturating_sub(at + usize::from(removes));
        self.charge(shifted.saturating_mul(SHIFT_COST), index)
    }

    /// The serialized length of `value`, charged to the work budget.
    fn measure(&mut self, value: &Value, index: usize) -> StoreResult<usize> {
        let len = serialized_len(value);
        self.charge(len, index)?;
        Ok(len)
    }

    fn charge(&mut self, bytes: usize, index: usize) -> StoreResult<()> {
        self.work = self.work.saturating_add(bytes);
        if self.work > self.budget {
            return Err(StoreError::TooLarge {
                message: format!(
                    "the JSON Patch touches more than {} bytes of the document by operation {index} ({}× the size limit); split it into smaller patches",
                    self.budget, WORK_BUDGET_FACTOR
                ),
            });
        }
        Ok(())
    }

    /// The value must stay within `max_depth` where it lands: one level per path token.
    fn check_depth(&self, path: &str, value: &Value, index: usize) -> StoreResult<()> {
        let tokens = path.matches('/').count();
        let depth = tokens + deepest(value, self.limits.max_depth + 1);
        if depth > self.limits.max_depth {
            return Err(StoreError::invalid(
                "patch",
                format!(
                    "JSON Patch operation {index} at {path:?} would nest the document {depth} levels deep; the limit is {}",
                    self.limits.max_depth
                ),
            ));
        }
        Ok(())
    }
}

/// The serialized length of the last token of `path` as an object key (quotes included).
fn key_len(path: &str) -> usize {
    let last = path.rsplit_once('/').map_or("", |(_, k)| k);
    let key = last.replace("~1", "/").replace("~0", "~");
    serialized_len(&Value::String(key))
}

/// How deep `value` nests, counting no further than `cap`.
fn deepest(value: &Value, cap: usize) -> usize {
    if cap == 0 {
        return 0;
    }
    match value {
        Value::Array(a) => 1 + a.iter().map(|v| deepest(v, cap - 1)).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(|v| deepest(v, cap - 1)).max().unwrap_or(0),
        _ => 0,
    }
}

/// The length of `value` as compact JSON, counted without building the text.
pub fn serialized_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a `Value` to a writer that never fails cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// What is at a failed path's parent, when that explains the failure.
fn explain(doc: &Value, path: &str) -> String {
    let parent = path.rsplit_once('/').map_or("", |(p, _)| p);
    match doc.pointer(parent) {
        None => format!(
            " ({} does not exist)",
            if parent.is_empty() { "/" } else { parent }
        ),
        Some(v) if !v.is_object() && !v.is_array() => {
            let kind = match v {
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                Value::Bool(_) => "a boolean",
                _ => "null",
            };
            format!(" ({parent} is {kind}, not an object or array)")
        }
        Some(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::{apply_bounded, serialized_len};
    use crate::store::error::StoreError;
    use crate::store::rules::MemoryLimits;
    use serde_json::json;

    const LIMITS: MemoryLimits = MemoryLimits {
        max_depth: 8,
        max_bytes: 10_000,
        history: 10,
    };

    #[test]
    fn serialized_len_is_the_compact_text_length() {
        let v = json!({"a": [1, "two", null], "é\"": {"x": 1.5}});
        assert_eq!(serialized_len(&v), v.to_string().len());
    }

    #[test]
    fn a_copy_past_the_size_limit_is_refused_at_that_operation() {
        let doc = json!({"s": "x".repeat(2000)});
        let ops = json!((0..10)
            .map(|i| json!({"op": "copy", "from": "", "path": format!("/k{i}")}))
            .collect::<Vec<_>>());
        match apply_bounded(doc, &ops, LIMITS) {
            Err(StoreError::TooLarge { message }) => {
                // 2 KB → 4 → 8 → 16 KB: the third copy (operation 2) would pass 10 KB.
                assert!(message.contains("operation 2"), "{message}");
            }
            other => panic!("expected too large, got {other:?}"),
        }
    }

    #[test]
    fn adds_and_removes_near_the_limit_are_measured_exactly_not_refused() {
        let doc = json!({"s": "x".repeat(9_900)});
        // Each add is followed by its remove: the document never grows past ~9.95 KB.
        let ops: Vec<_> = (0..200)
            .flat_map(|i| {
                [
                    json!({"op": "add", "path": "/k", "value": format!("{i:0>20}")}),
                    json!({"op": "remove", "path": "/k"}),
                ]
            })
            .collect();
        let out = apply_bounded(doc.clone(), &json!(ops), LIMITS).expect("within the limit");
        assert_eq!(out, doc);
    }

    #[test]
    fn an_insert_into_an_array_frees_nothing() {
        let doc = json!({"a": ["x".repeat(4000)]});
        let ops: Vec<_> = (0..3)
            .map(|_| json!({"op": "add", "path": "/a/0", "value": "y".repeat(4000)}))
            .collect();
        assert!(matches!(
            apply_bounded(doc, &json!(ops), LIMITS),
            Err(StoreError::TooLarge { .. })
        ));
    }

    #[test]
    fn a_value_nested_past_the_depth_limit_where_it_lands_is_refused() {
        let doc = json!({"a": {"b": {"c": {}}}});
        let ops = json!([
            {"op": "copy", "from": "/a", "path": "/a/b/c/d"},
            {"op": "copy", "from": "/a", "path": "/a/b/c/d/b/c/d"},
        ]);
        match apply_bounded(doc, &ops, LIMITS) {
            Err(StoreError::Invalid { message, .. }) => {
                assert!(message.contains("operation 1"), "{message}")
            }
            other => panic!("expected invalid, got {other:?}"),
        }
    }

    const ROOMY: MemoryLimits = MemoryLimits {
        max_depth: 8,
        max_bytes: 1_000_000,
        history: 10,
    };

    /// Each removal at the front shifts the whole array: charged, so the patch is refused early
    /// instead of moving 200,000 elements 2,000 times.
    #[test]
    fn small_removals_at_the_front_of_a_large_array_run_out_of_work_budget() {
        let doc = json!({"a": vec![0; 200_000]});
        let ops: Vec<_> = (0..2_000)
            .map(|_| json!({"op": "remove", "path": "/a/0"}))
            .collect();
        match apply_bounded(doc, &json!(ops), ROOMY) {
            Err(StoreError::TooLarge { message }) => {
                assert!(message.contains("split"), "{message}")
            }
            other => panic!("expected too large, got {:?}", other.map(|_| "a document")),
        }
    }

    /// The same number of operations at the end of the array shifts nothing and is allowed.
    #[test]
    fn appends_and_removals_at_the_end_of_a_large_array_are_not_charged_for_shifts() {
        let doc = json!({"a": vec![0; 200_000]});
        let ops: Vec<_> = (0..1_000)
            .flat_map(|_| {
                [
                    json!({"op": "add", "path": "/a/-", "value": 1}),
                    json!({"op": "remove", "path": "/a/200000"}),
                ]
            })
            .collect();
        let out = apply_bounded(doc.clone(), &json!(ops), ROOMY).expect("within the budget");
        assert_eq!(out, doc);
    }

    #[test]
    fn copy_and_remove_of_a_big_value_in_a_loop_runs_out_of_work_budget() {
        let doc = json!({"s": "x".repeat(4_000)});
        let ops: Vec<_> = (0..100)
            .flat_map(|_| {
                [
                    json!({"op": "copy", "from": "/s", "path": "/t"}),
                    json!({"op": "remove", "path": "/t"}),
                ]
            })
            .collect();
        match apply_bounded(doc, &json!(ops), LIMITS) {
            Err(StoreError::TooLarge { message }) => {
                assert!(message.contains("split"), "{message}")
            }
            other => panic!("expected too large, got {other:?}"),
        }
    }
}
