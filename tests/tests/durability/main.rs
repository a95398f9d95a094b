//! What survives: SIGKILL under load, restarts, full disks, and `huddled` as a real child
//! process.
//! One test binary per area; a module per concern.

mod checkpoints;
mod corrupt_rows;
mod daemon_process;
mod kill9;
mod restart;
mod start_failure;
mod storage_faults;
mod worker_kill9;
