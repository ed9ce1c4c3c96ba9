//! Poisson flow arrivals per sending host, sizes from a CDF. The rate is resolved from the
//! target load by the Python front end (see docs/scenario.md): `load` of host-link capacity
//! gives λ = load·C_host / (8·E[size]) per host; the ABM code's definition (utilization of a
//! leaf's uplinks) gives λ = load·C_uplinks / (8·E[size]·servers_per_leaf).

use super::{candidates, cdf::Cdf, exp_ps, Destinations, FlowColumns, FlowDesc};
use crate::engine::Time;
use crate::topology::Topology;
use rand::Rng;

pub struct Poisson {
    pub cdf: Cdf,
    pub rate_per_host_per_s: f64,
    pub destinations: Destinations,
    pub sources: Vec<u32>,
    pub priority: u8,
    pub start_ps: Time,
}

impl Poisson {
    pub fn generate<R: Rng>(&self, topo: &Topology, until: Time, wi: u16, handshake: bool, rng: &mut R, out: &mut FlowColumns) -> Result<(), String> {
        if !(self.rate_per_host_per_s.is_finite() && self.rate_per_host_per_s >= 0.0) {
            return Err(format!("workload poisson: flow rate {} per host per second is not allowed (load must be >= 0)", self.rate_per_host_per_s));
        }
        if self.rate_per_host_per_s == 0.0 {
            return Ok(());
        }
        if self.destinations == Destinations::InterLeaf && topo.n_leaves < 2 {
            return Err("workload.destinations = 'inter_leaf' needs a topology with at least 2 leaves; use 'all_to_all'".into());
        }
        let sources: Vec<u32> = if self.sources.is_empty() { (0..topo.n_hosts).collect() } else { self.sources.clone() };
        for &src in &sources {
            let dsts = candidates(topo, src, self.destinations == Destinations::InterLeaf);
            let mut t = self.start_ps + exp_ps(rng, self.rate_per_host_per_s);
            while t < until {
                let dst = dsts[rng.gen_range(0..dsts.len())];
                let size = self.cdf.sample(rng);
                out.push(FlowDesc { src, dst, size_bytes: size, start_ps: t, priority: self.priority, workload: wi, query: -1, handshake });
                t += exp_ps(rng, self.rate_per_host_per_s);
            }
        }
        Ok(())
    }
}
