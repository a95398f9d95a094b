//! The worker runtime against a real daemon: draining, leases lost and regained, restarts.
//! One test binary per area; a module per concern.

mod drain;
mod leases;
mod restart;
