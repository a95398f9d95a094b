//! What a committed write transaction announces to every replica (`pg_notify` on
//! `huddle_changes`, written by `tx.rs`, read by `listener.rs`): its sequence ranges and the
//! tasks it left ready, in a payload under PostgreSQL's 8,000 bytes.

use crate::hub::ReadyTask;

/// The bytes a ready task takes in an announcement.
pub(super) fn ready_line_len(t: &ReadyTask) -> usize {
    let owner = t.owner.as_deref().map_or(1, str::len);
    t.prefix.len() + owner + t.project.as_deref().map_or(0, |p| p.len() * 3 + 1) + 2
}

/// What one committed transaction added to a team: message and event sequence ranges
/// (`first > last` when none), the tasks it left ready, or, when there were too many to name
/// (or after a lost connection), only that tasks may have become claimable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announcement {
    pub team_id: i64,
    pub msgs: (i64, i64),
    pub events: (i64, i64),
    pub tasks_changed: bool,
    /// The events include a revocation or rotation ([`TOKEN_EVENTS`]).
    pub tokens_changed: bool,
    pub ready: Vec<ReadyTask>,
}

impl Announcement {
    /// `team mf ml ef el tc kc`, then one line per ready task: `PREFIX owner` (`-` for none),
    /// then ` project` when it names one. Prefixes and names never hold spaces or newlines,
    /// nor can a name be `-`; a project holds no control characters (checked on write; one
    /// stored before that check has them replaced).
    pub fn encode(&self) -> String {
        let mut out = format!(
            "{} {} {} {} {} {} {}",
            self.team_id,
            self.msgs.0,
            self.msgs.1,
            self.events.0,
            self.events.1,
            u8::from(self.tasks_changed),
            u8::from(self.tokens_changed)
        );
        for t in &self.ready {
            out.push('\n');
            out.push_str(&t.prefix);
            out.push(' ');
            out.push_str(t.owner.as_deref().unwrap_or("-"));
            if let Some(project) = &t.project {
                out.push(' ');
                out.extend(
                    project
                        .chars()
                        .map(|c| if c.is_control() { '\u{fffd}' } else { c }),
                );
            }
        }
        out
    }

    pub fn decode(payload: &str) -> Option<Announcement> {
        let mut lines = payload.split('\n');
        let n: Vec<i64> = lines
            .next()?
            .split(' ')
            .map(|p| p.parse().ok())
            .collect::<Option<_>>()?;
        let ready = lines
            .map(|line| {
                let (prefix, rest) = line.split_once(' ')?;
                let (owner, project) = match rest.split_once(' ') {
                    Some((owner, project)) => (owner, Some(project.to_string())),
                    None => (rest, None),
                };
                Some(ReadyTask {
                    prefix: prefix.to_string(),
                    owner: (owner != "-").then(|| owner.to_string()),
                    project,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        // Without `kc` (a replica of the previous release), any event may be a revocation.
        let (team_id, mf, ml, ef, el, tc, kc) = match n[..] {
            [team_id, mf, ml, ef, el, tc] => (team_id, mf, ml, ef, el, tc, 1),
            [team_id, mf, ml, ef, el, tc, kc] => (team_id, mf, ml, ef, el, tc, kc),
            _ => return None,
        };
        Some(Announcement {
            team_id,
            msgs: (mf, ml),
            events: (ef, el),
            tasks_changed: tc != 0,
            tokens_changed: kc != 0,
            ready,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Announcement;
    use crate::hub::ReadyTask;

    #[test]
    fn announcements_round_trip_and_garbage_is_refused() {
        let a = Announcement {
            team_id: 7,
            msgs: (3, 5),
            events: (10, 9),
            tasks_changed: true,
            tokens_changed: false,
            ready: Vec::new(),
        };
        assert_eq!(Announcement::decode(&a.encode()), Some(a.clone()));
        // The previous release's six numbers: any event may be a revocation.
        let old = Announcement::decode("7 3 5 10 9 1").unwrap();
        assert!(old.tokens_changed && old.tasks_changed);
        let b = Announcement {
            tasks_changed: false,
            tokens_changed: true,
            ready: vec![
                ReadyTask {
                    prefix: "TEST".into(),
                    owner: None,
                    project: Some("github.com/org/my calc".into()),
                },
                ReadyTask {
                    prefix: "QARUN".into(),
                    owner: Some("exec-1".into()),
                    project: None,
                },
            ],
            ..a
        };
        assert_eq!(Announcement::decode(&b.encode()), Some(b));
        assert_eq!(Announcement::decode("7 1 2 3 4 0\nTEST"), None);
        assert_eq!(Announcement::decode("7 1 2"), None);
        assert_eq!(Announcement::decode("7 1 2 3 4 0 1 1"), None);
        assert_eq!(Announcement::decode("x 1 2 3 4 0"), None);
    }
}
