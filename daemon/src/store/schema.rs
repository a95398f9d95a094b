//! The schema-version policy both backends apply at start-up (expand/contract, N-1).
//!
//! Every release's migrations only *expand* the schema (new tables, new nullable or defaulted
//! columns, new indexes), so the previous release keeps working on a database the new one
//! migrated: a binary starts on a database that has migrations it does not know. A release
//! that must *contract* (drop or rename what older binaries use) does it at least one release
//! after the last binary that used it, and records in `huddle_schema_compat` the oldest
//! migration a binary must know (`compatible_from`); older binaries then refuse to start.
//! A replica started without migrating (`--no-migrate`) refuses a database older than itself.

use super::error::{StoreError, StoreResult};

/// The table a contracting release creates (`compatible_from bigint not null`, one row).
pub const COMPAT_TABLE: &str = "huddle_schema_compat";

/// What start-up found, for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaState {
    /// Exactly this binary's migrations.
    Current { version: i64 },
    /// Also migrations of a newer release (expand-only under the policy).
    Newer { known: i64, newest: i64 },
}

/// Judges the applied migrations against the ones this binary knows.
/// `compatible_from`: the value in [`COMPAT_TABLE`], when a newer release wrote one.
pub fn judge(
    applied: &[i64],
    known: &[i64],
    compatible_from: Option<i64>,
) -> StoreResult<SchemaState> {
    let missing: Vec<i64> = known
        .iter()
        .copied()
        .filter(|v| !applied.contains(v))
        .collect();
    let known_max = known.iter().copied().max().unwrap_or(0);
    if !missing.is_empty() {
        return Err(StoreError::Unavailable(format!(
            "the database schema is older than this huddled (migrations {missing:?} are not \
             applied): run `huddled migrate` (or start one replica without --no-migrate) first"
        )));
    }
    if let Some(from) = compatible_from.filter(|from| *from > known_max) {
        return Err(StoreError::Unavailable(format!(
            "the database was migrated by a newer huddle release that older ones cannot use \
             (it needs a huddled that knows migration {from}; this one knows up to {known_max}): \
             upgrade this replica"
        )));
    }
    let newest = applied.iter().copied().max().unwrap_or(0);
    Ok(if newest > known_max {
        SchemaState::Newer {
            known: known_max,
            newest,
        }
    } else {
        SchemaState::Current { version: known_max }
    })
}

/// Logs what [`judge`] found.
pub fn log(state: &SchemaState) {
    match state {
        SchemaState::Current { version } => tracing::info!(version, "database schema is current"),
        SchemaState::Newer { known, newest } => tracing::info!(
            known,
            newest,
            "the database has migrations of a newer release (expand-only): serving with this release's schema"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_newer_older_and_contracted_schemas() {
        assert_eq!(
            judge(&[1, 2], &[1, 2], None).unwrap(),
            SchemaState::Current { version: 2 }
        );
        assert_eq!(
            judge(&[1, 2, 3], &[1, 2], Some(1)).unwrap(),
            SchemaState::Newer {
                known: 2,
                newest: 3
            }
        );
        let older = judge(&[1], &[1, 2], None).unwrap_err().to_string();
        assert!(older.contains("huddled migrate"), "{older}");
        let contracted = judge(&[1, 2, 3], &[1, 2], Some(3)).unwrap_err().to_string();
        assert!(contracted.contains("knows migration 3"), "{contracted}");
    }
}
