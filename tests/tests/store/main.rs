//! The store contract, pinned against the `Store` trait rather than one backend.
//! One test binary per area; a module per concern.

mod bus;
mod contract;
mod counts;
mod history;
mod published;
