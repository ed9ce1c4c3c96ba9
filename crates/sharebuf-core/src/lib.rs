//! sharebuf-core: the packet-level engine of sharebuf.
//!
//! A discrete-event simulator of datacenter networks whose switches share one packet
//! buffer per switch under a buffer-management scheme (`bm`), with TCP-like transports
//! (`transport`) driven by congestion-control algorithms (`cc`) and datacenter workloads
//! (`workload`). Time is integer picoseconds; packets come from a reusable pool.

pub mod bm;
pub mod cc;
pub mod config;
pub mod engine;
pub mod metrics;
pub mod nic;
pub mod packet;
pub mod pfc;
pub mod sim;
pub mod switch;
pub mod topology;
pub mod transport;
pub mod workload;

pub use config::SimSpec;
pub use metrics::RunOutput;
pub use sim::{run_json, Simulator};
