//! A team's records read from one read transaction (a consistent snapshot while writes go
//! on), handed over one at a time as the receiver takes them: memory stays bounded whatever
//! the team's size. The statements come from `store::transfer::sql`, the records from
//! `store::transfer::rows`, in the order `store::transfer::tables::EXPORTED` fixes.

use super::super::error::{StoreError, StoreResult};
use super::super::transfer::rows::{read, StoredRow};
use super::super::transfer::sql::{select, Dialect};
use super::super::transfer::tables::EXPORTED;
use super::super::transfer::{EndRecord, Record};
use rusqlite::{Connection, Row};
use tokio::sync::mpsc;

impl StoredRow for Row<'_> {
    fn opt_int(&self, column: &str) -> StoreResult<Option<i64>> {
        Ok(self.get(column)?)
    }

    fn opt_text(&self, column: &str) -> StoreResult<Option<String>> {
        Ok(self.get(column)?)
    }
}

pub fn export(
    conn: &Connection,
    team_id: i64,
    to: &mpsc::Sender<StoreResult<Record>>,
) -> StoreResult<()> {
    let mut sent = 0u64;
    for table in EXPORTED {
        let mut statement = conn.prepare(&select(table, Dialect::Sqlite))?;
        let mut rows = statement.query([team_id])?;
        while let Some(row) = rows.next()? {
            if to.blocking_send(Ok(read(table, row)?)).is_err() {
                return Ok(()); // the client left
            }
            sent += 1;
        }
        if sent == 0 {
            return Err(StoreError::not_found(format!("team {team_id}")));
        }
    }
    let _ = to.blocking_send(Ok(Record::End(EndRecord { records: sent })));
    Ok(())
}
