//! Incast queries (partition/aggregate): each requester issues Poisson queries; a query
//! makes `fan_in` responders each send request_bytes / fan_in to the requester at the
//! query time, over connections opened beforehand (no handshake), as in the ABM code.

use super::{candidates, exp_ps, FlowColumns, FlowDesc, QueryDesc};
use crate::engine::Time;
use crate::topology::Topology;
use rand::Rng;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Responders {
    /// Drawn from hosts of other leaves (all of them when fan_in equals their number).
    OtherLeaf,
    /// Drawn from all other hosts.
    Any,
}

impl std::str::FromStr for Responders {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "other_leaf" => Ok(Responders::OtherLeaf),
            "any" => Ok(Responders::Any),
            _ => Err(format!("workload.responders = '{s}': allowed: other_leaf, any")),
        }
    }
}

pub struct Incast {
    pub request_bytes: u64,
    pub fan_in: u32,
    pub queries_per_s_per_host: f64,
    pub requesters: Vec<u32>,
    pub responders: Responders,
    pub priority: u8,
    pub start_ps: Time,
}

impl Incast {
    pub fn generate<R: Rng>(&self, topo: &Topology, until: Time, wi: u16, rng: &mut R, flows: &mut FlowColumns, queries: &mut Vec<QueryDesc>) -> Result<(), String> {
        if !(self.queries_per_s_per_host.is_finite() && self.queries_per_s_per_host >= 0.0) {
            return Err(format!("workload.queries_per_s_per_host = {}: must be >= 0", self.queries_per_s_per_host));
        }
        if self.fan_in == 0 {
            return Err("workload.fan_in = 0: must be >= 1".into());
        }
        if self.queries_per_s_per_host == 0.0 {
            return Ok(());
        }
        let other_leaf = self.responders == Responders::OtherLeaf && topo.n_leaves > 1;
        let requesters: Vec<u32> = if self.requesters.is_empty() { (0..topo.n_hosts).collect() } else { self.requesters.clone() };
        let per_flow = self.request_bytes.div_ceil(self.fan_in as u64).max(1);
        for &r in &requesters {
            let mut cands = candidates(topo, r, other_leaf);
            if (self.fan_in as usize) > cands.len() {
                return Err(format!("workload.fan_in = {}: host {r} has only {} possible responders", self.fan_in, cands.len()));
            }
            let mut t = self.start_ps + exp_ps(rng, self.queries_per_s_per_host);
            while t < until {
                let qid = queries.len() as i64;
                // Partial Fisher-Yates: the first fan_in entries become the responders.
                let k = self.fan_in as usize;
                if k < cands.len() {
                    for j in 0..k {
                        let x = rng.gen_range(j..cands.len());
                        cands.swap(j, x);
                    }
                }
                for &src in &cands[..k] {
                    flows.push(FlowDesc { src, dst: r, size_bytes: per_flow, start_ps: t, priority: self.priority, workload: wi, query: qid, handshake: false });
                }
                queries.push(QueryDesc { requester: r, size_bytes: per_flow * k as u64, start_ps: t, workload: wi });
                t += exp_ps(rng, self.queries_per_s_per_host);
            }
        }
        Ok(())
    }
}
