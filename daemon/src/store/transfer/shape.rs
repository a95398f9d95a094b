//! The order of an export's lines, checked as they arrive (an import refuses a file out of
//! order or cut short before it writes anything).

use super::{Record, KINDS};

/// Checks a file's shape line by line as it arrives: the team first and once, kinds in
/// order, the `end` last with the right count.
#[derive(Debug, Default)]
pub struct Shape {
    records: u64,
    last_rank: Option<usize>,
    ended: bool,
}

impl Shape {
    pub fn check(&mut self, record: &Record) -> Result<(), String> {
        if self.ended {
            return Err("a record after the \"end\" record".into());
        }
        let rank = record.rank();
        match self.last_rank {
            None if rank != 0 => return Err("the first record must be the \"team\"".into()),
            Some(_) if rank == 0 => return Err("a second \"team\" record".into()),
            Some(last) if rank < last => {
                return Err(format!(
                    "a {} record after the {} records (the order is {})",
                    record.kind(),
                    KINDS[last],
                    KINDS.join(", ")
                ))
            }
            _ => {}
        }
        self.last_rank = Some(rank);
        if let Record::End(end) = record {
            if end.records != self.records {
                return Err(format!(
                    "the \"end\" record counts {} records but {} came before it",
                    end.records, self.records
                ));
            }
            self.ended = true;
        } else {
            self.records += 1;
        }
        Ok(())
    }

    /// At the end of the input: refused when the `end` record never came.
    pub fn finish(&self) -> Result<(), String> {
        match (self.last_rank, self.ended) {
            (None, _) => Err("the file is empty".into()),
            (_, false) => Err("no \"end\" record: the file is cut short".into()),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::transfer::EndRecord;

    #[test]
    fn the_shape_wants_the_team_first_and_a_counted_end() {
        let end = |n| Record::End(EndRecord { records: n });
        let mut shape = Shape::default();
        assert!(shape.check(&end(0)).is_err());
        let mut shape = Shape::default();
        assert_eq!(shape.finish().unwrap_err(), "the file is empty");
        let team = Record::parse(
            r#"{"kind":"team","version":1,"name":"qa","createdAt":1,"msgSeq":0,"eventSeq":0,"memory":{},"memoryVersion":0}"#,
        )
        .unwrap();
        shape.check(&team).unwrap();
        assert!(shape.finish().unwrap_err().contains("cut short"));
        assert!(shape.check(&team).is_err());
        assert!(shape.check(&end(2)).unwrap_err().contains("counts 2"));
        let mut shape = Shape::default();
        shape.check(&team).unwrap();
        shape.check(&end(1)).unwrap();
        shape.finish().unwrap();
        assert!(shape.check(&end(1)).is_err());
    }
}
