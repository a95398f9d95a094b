//! The Python and TypeScript client packages and the coordinator guide, driven against real
//! daemons: each package installed from its folder runs its own test suite (which starts
//! `huddled` itself), the guide's coordinators run against real `huddle worker` processes, and
//! the README's and the client READMEs' examples (the first, and the gate) run as printed.
//! One test binary per area; a module per concern.

mod examples;
mod guide;
mod python;
mod rust_snippet;
mod support;
mod typescript;
