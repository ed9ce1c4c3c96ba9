//! Workload generators: they turn `workload` specs into flows, incast queries and
//! constant-rate senders before the run starts. Each generator draws from its own RNG
//! stream (seeded from the scenario seed and the workload's index), so adding a generator
//! never changes another one's draws.

pub mod cdf;
pub mod incast;
pub mod poisson;

use crate::config::{SimSpec, WorkloadSpec};
use crate::engine::Time;
use crate::topology::Topology;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// A TCP flow to run: the row a generator pushes into [`FlowColumns`].
#[derive(Clone, Debug)]
pub struct FlowDesc {
    pub src: u32,
    pub dst: u32,
    pub size_bytes: u64,
    pub start_ps: Time,
    pub priority: u8,
    pub workload: u16,
    /// Incast query this flow answers, or -1.
    pub query: i64,
    /// Open with a 3-way handshake (false: pre-established connection).
    pub handshake: bool,
}

/// The TCP flows of a run, one column per [`FlowDesc`] field (36 B per flow, no padding);
/// flow `i` is row `i`. The simulator keeps them as each flow's cold descriptor until the
/// flow starts and hands the first seven columns over as the run's output columns, so a
/// flow's description is stored once.
#[derive(Clone, Debug, Default)]
pub struct FlowColumns {
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    pub size_bytes: Vec<u64>,
    pub start_ps: Vec<Time>,
    pub priority: Vec<u8>,
    pub workload: Vec<u16>,
    /// Incast query this flow answers, or -1.
    pub query: Vec<i64>,
    pub handshake: Vec<bool>,
}

impl FlowColumns {
    pub fn push(&mut self, f: FlowDesc) {
        self.src.push(f.src);
        self.dst.push(f.dst);
        self.size_bytes.push(f.size_bytes);
        self.start_ps.push(f.start_ps);
        self.priority.push(f.priority);
        self.workload.push(f.workload);
        self.query.push(f.query);
        self.handshake.push(f.handshake);
    }

    pub fn len(&self) -> usize {
        self.src.len()
    }

    pub fn is_empty(&self) -> bool {
        self.src.is_empty()
    }

    /// Row `i`.
    pub fn get(&self, i: usize) -> FlowDesc {
        FlowDesc { src: self.src[i], dst: self.dst[i], size_bytes: self.size_bytes[i], start_ps: self.start_ps[i], priority: self.priority[i], workload: self.workload[i], query: self.query[i], handshake: self.handshake[i] }
    }
}

/// An incast query.
#[derive(Clone, Debug)]
pub struct QueryDesc {
    pub requester: u32,
    pub size_bytes: u64,
    pub start_ps: Time,
    pub workload: u16,
}

#[derive(Default)]
pub struct Generated {
    pub flows: FlowColumns,
    pub queries: Vec<QueryDesc>,
    pub cbr: Vec<(crate::config::CbrSpec, u16)>,
    pub names: Vec<String>,
    /// Per flow (row of `flows`), the flow file's ECMP hashes (data, reverse), if given.
    pub ecmp: Vec<Option<(u32, u32)>>,
}

/// A seed for stream `index` of the scenario seed (SplitMix64 mix of both).
pub fn stream_seed(seed: u64, index: u64) -> u64 {
    let mut z = seed ^ index.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The RNG stream of workload `index`.
pub fn stream(seed: u64, index: u64) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(stream_seed(seed, index))
}

fn check_host(topo: &Topology, what: &str, h: u32) -> Result<(), String> {
    if h >= topo.n_hosts {
        return Err(format!("{what} = {h}: no such host; hosts are 0..{}", topo.n_hosts - 1));
    }
    Ok(())
}

/// `kinds`: per workload, (default handshake of its flows, its flows run RoCE).
pub fn generate(spec: &SimSpec, topo: &Topology, kinds: &[(bool, bool)]) -> Result<Generated, String> {
    let mut g = Generated::default();
    for (i, w) in spec.workloads.iter().enumerate() {
        let wi = i as u16;
        let (default_handshake, roce) = kinds[i];
        let mut rng = stream(spec.seed, i as u64);
        let until = spec.arrivals_until_ps;
        match w {
            WorkloadSpec::Poisson { name, cdf, rate_per_host_per_s, destinations, sources, priority, start_ps, .. } => {
                g.names.push(name.clone());
                let c = cdf::Cdf::new(cdf).map_err(|e| format!("workload {i} ({name}).cdf: {e}"))?;
                for &s in sources {
                    check_host(topo, &format!("workload {i} ({name}).sources"), s)?;
                }
                let p = poisson::Poisson { cdf: c, rate_per_host_per_s: *rate_per_host_per_s, destinations: destinations.parse()?, sources: sources.clone(), priority: *priority, start_ps: *start_ps };
                p.generate(topo, until, wi, default_handshake, &mut rng, &mut g.flows)?;
            }
            WorkloadSpec::Incast { name, request_bytes, fan_in, queries_per_s_per_host, requesters, responders, priority, start_ps, .. } => {
                g.names.push(name.clone());
                for &s in requesters {
                    check_host(topo, &format!("workload {i} ({name}).requesters"), s)?;
                }
                let inc = incast::Incast { request_bytes: *request_bytes, fan_in: *fan_in, queries_per_s_per_host: *queries_per_s_per_host, requesters: requesters.clone(), responders: responders.parse()?, priority: *priority, start_ps: *start_ps };
                inc.generate(topo, until, wi, &mut rng, &mut g.flows, &mut g.queries)?;
            }
            WorkloadSpec::Flows { name, flows, .. } => {
                g.names.push(name.clone());
                // Query ids of this workload -> global query index, in order of first appearance.
                let mut qidx: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
                for (k, f) in flows.iter().enumerate() {
                    check_host(topo, &format!("workload {i} ({name}) flow {k}: src"), f.src)?;
                    check_host(topo, &format!("workload {i} ({name}) flow {k}: dst"), f.dst)?;
                    if f.src == f.dst {
                        return Err(format!("workload {i} ({name}) flow {k}: src = dst = {}; a flow needs two hosts", f.src));
                    }
                    let query = match f.query {
                        None => -1,
                        Some(q) => {
                            let qi = *qidx.entry(q).or_insert_with(|| {
                                g.queries.push(QueryDesc { requester: f.dst, size_bytes: 0, start_ps: f.start_ps, workload: wi });
                                g.queries.len() - 1
                            });
                            let d = &mut g.queries[qi];
                            if d.requester != f.dst {
                                return Err(format!("workload {i} ({name}) flow {k}: query {q} goes to host {}, but its earlier flows go to host {}; a query has one requester (dst)", f.dst, d.requester));
                            }
                            // QCT runs from the query's earliest response start to its last response's end.
                            d.start_ps = d.start_ps.min(f.start_ps);
                            d.size_bytes += f.size_bytes;
                            qi as i64
                        }
                    };
                    if roce && f.handshake == Some(true) {
                        return Err(format!("workload {i} ({name}) flow {k}: handshake = true: not allowed for a RoCE flow (a queue pair sends at once); allowed: false"));
                    }
                    g.flows.push(FlowDesc { src: f.src, dst: f.dst, size_bytes: f.size_bytes, start_ps: f.start_ps, priority: f.priority, workload: wi, query, handshake: f.handshake.unwrap_or(default_handshake) });
                    g.ecmp.resize(g.flows.len() - 1, None);
                    g.ecmp.push(match (f.ecmp_hash, f.ecmp_hash_reverse) {
                        (Some(a), Some(b)) => Some((a, b)),
                        (None, None) => None,
                        _ => return Err(format!("workload {i} ({name}) flow {k}: ecmp_hash and ecmp_hash_reverse go together; give both or neither")),
                    });
                }
            }
            WorkloadSpec::Cbr { name, flows } => {
                g.names.push(name.clone());
                for (k, f) in flows.iter().enumerate() {
                    check_host(topo, &format!("workload {i} ({name}) flow {k}: src"), f.src)?;
                    check_host(topo, &format!("workload {i} ({name}) flow {k}: dst"), f.dst)?;
                    if f.rate_bps == 0 || f.packet_bytes == 0 {
                        return Err(format!("workload {i} ({name}) flow {k}: rate_gbps and packet_bytes must be > 0"));
                    }
                    g.cbr.push((f.clone(), wi));
                }
            }
        }
    }
    Ok(g)
}

/// Where Poisson flows go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Destinations {
    /// Uniform over hosts of other leaves (the ABM/FB setups).
    InterLeaf,
    /// Uniform over all other hosts.
    AllToAll,
}

impl std::str::FromStr for Destinations {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "inter_leaf" => Ok(Destinations::InterLeaf),
            "all_to_all" => Ok(Destinations::AllToAll),
            _ => Err(format!("workload.destinations = '{s}': allowed: inter_leaf, all_to_all")),
        }
    }
}

/// Hosts a source may send to.
pub fn candidates(topo: &Topology, src: u32, other_leaf_only: bool) -> Vec<u32> {
    (0..topo.n_hosts)
        .filter(|&h| h != src && (!other_leaf_only || topo.leaf_of_host[h as usize] != topo.leaf_of_host[src as usize]))
        .collect()
}

/// Exponential inter-arrival with rate `per_s`, in picoseconds.
pub fn exp_ps<R: rand::Rng>(rng: &mut R, per_s: f64) -> Time {
    let u: f64 = rng.gen::<f64>();
    ((-(1.0 - u).ln() / per_s) * 1e12) as Time
}
