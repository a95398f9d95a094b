//! The open-file limit. Every client connection is a descriptor: with the default
//! `max_connections` (4,096) under a common soft limit of 1,024, accepts fail before the cap is
//! reached and new clients wait instead of getting a 503. So the soft limit is raised to the
//! hard one at start, and the connection cap is kept under what remains after the daemon's own
//! descriptors.

/// Descriptors kept for everything but API connections: the database (SQLite files, the
/// PostgreSQL pool, its listener), logs, the metrics listener's connections, refused
/// connections being answered.
pub const RESERVED: u64 = 256;

/// Connections the separate `/metrics` listener keeps open at most (scrapers are few).
pub const METRICS_MAX_CONNECTIONS: usize = 64;

/// Raises the soft open-file limit to the hard one; returns the soft limit now in force
/// (`u64::MAX` where the platform has none).
pub fn raise() -> u64 {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => limit,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read or raise the open-file limit");
            rlimit::getrlimit(rlimit::Resource::NOFILE)
                .map(|(soft, _)| soft)
                .unwrap_or(u64::MAX)
        }
    }
}

/// The API's connection cap under `open_files`: `configured` when it fits, else what the
/// limit leaves after [`RESERVED`] (half the limit when that is tiny), with a warning.
pub fn connection_cap(configured: usize, open_files: u64) -> usize {
    let room = if open_files > 2 * RESERVED {
        open_files - RESERVED
    } else {
        (open_files / 2).max(1)
    };
    if configured as u64 <= room {
        return configured;
    }
    let cap = room as usize;
    tracing::warn!(
        "[server] max_connections = {configured} does not fit the open-file limit ({open_files}, \
         `ulimit -n`): accepting {cap} connections at most; raise the limit to allow more"
    );
    cap
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_that_fits_is_kept() {
        assert_eq!(connection_cap(4_096, 1_048_576), 4_096);
        assert_eq!(connection_cap(100, 1_024), 100);
    }

    #[test]
    fn a_cap_past_the_limit_leaves_room_for_the_daemon() {
        assert_eq!(connection_cap(4_096, 1_024), 1_024 - RESERVED as usize);
        assert_eq!(connection_cap(4_096, 300), 150);
        assert_eq!(connection_cap(4_096, 1), 1);
    }
}
