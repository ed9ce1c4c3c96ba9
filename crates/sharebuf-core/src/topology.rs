//! Topology builders: which ports exist, what they connect, and the routes.
//!
//! Node ids: hosts are `0..H` (leaf-major: host h sits in leaf h / servers_per_leaf; on a
//! fat-tree, edge switch h / hosts_per_edge), switches are `H..H+S`. Port ids are global;
//! port `h < H` is host h's NIC.
//!
//! Every topology is a tree of link tiers: tier 0 is the host link, tier 1 the next one up
//! (leaf-spine or edge-aggregation), tier 2 aggregation-core. A path between two hosts climbs
//! to their lowest common ancestor tier by tier and comes down the same tiers, so its links,
//! rates and delays follow from [`Topology::path_level`] and [`Topology::tiers`] alone.

use crate::config::TopologySpec;
use crate::engine::Time;
use crate::metrics::Hop;

#[derive(Clone, Debug)]
pub struct PortDesc {
    /// Node that transmits on this port.
    pub owner: u32,
    /// Node at the other end of the link.
    pub peer: u32,
    pub rate_bps: u64,
    pub delay_ps: u64,
}

/// Equal-cost next hops towards each destination host, for one switch.
#[derive(Clone, Debug, Default)]
pub struct RouteTable {
    /// `span[dst] = (first, count)` into `cands`.
    pub span: Vec<(u32, u32)>,
    /// Local port indices.
    pub cands: Vec<u16>,
}

impl RouteTable {
    #[inline]
    /// Next hop towards `dst`; `hash()` is only evaluated when there is a choice.
    pub fn choose_with(&self, dst: u32, hash: impl FnOnce() -> u64) -> usize {
        let (first, count) = self.span[dst as usize];
        if count == 1 {
            return self.cands[first as usize] as usize;
        }
        self.cands[(first + (hash() % count as u64) as u32) as usize] as usize
    }

    #[inline]
    pub fn choose(&self, dst: u32, hash: u64) -> usize {
        self.choose_with(dst, || hash)
    }

    /// `choose` for the per-packet path: no bounds checks, and through the switch's
    /// [`EcmpMemo`]: where there is a choice, the
    /// candidate the hash picked for (`flow_hash`, `dst`) the last time, if the memo still holds
    /// it; else `ecmp_hash(flow_hash, dst, salt)` as without a memo, and it is remembered. The
    /// result is the same either way (the choice is a function of the key alone).
    ///
    /// # Safety
    /// `dst` < the number of spans, and the table passed [`RouteTable::check`] (every span
    /// non-empty and inside `cands`). The memo must be used with this table and `salt` only.
    #[inline(always)]
    pub(crate) unsafe fn choose_memo(&self, memo: &mut EcmpMemo, flow_hash: u32, dst: u32, salt: u32) -> usize {
        debug_assert!((dst as usize) < self.span.len());
        let (first, count) = *self.span.get_unchecked(dst as usize);
        if count == 1 {
            debug_assert!((first as usize) < self.cands.len());
            return *self.cands.get_unchecked(first as usize) as usize;
        }
        memo.get_or(flow_hash, dst, || {
            let i = first + (ecmp_hash(flow_hash, dst, salt) % count as u64) as u32;
            debug_assert!((i as usize) < self.cands.len());
            *self.cands.get_unchecked(i as usize)
        }) as usize
    }

    /// The table covers hosts `0..n_hosts`, each with at least one candidate, every span
    /// inside `cands` and every candidate a local port below `n_ports`: what
    /// [`RouteTable::choose_memo`] relies on.
    pub fn check(&self, n_hosts: u32, n_ports: usize) -> Result<(), String> {
        if self.span.len() != n_hosts as usize {
            return Err(format!("{} spans for {n_hosts} hosts", self.span.len()));
        }
        for (dst, &(first, count)) in self.span.iter().enumerate() {
            if count == 0 || first as usize + count as usize > self.cands.len() {
                return Err(format!("host {dst}: span ({first}, {count}) outside the {} candidates", self.cands.len()));
            }
        }
        match self.cands.iter().find(|&&c| c as usize >= n_ports) {
            Some(c) => Err(format!("candidate port {c} of {n_ports}")),
            None => Ok(()),
        }
    }
}

/// A direct-mapped memo of one switch's ECMP choices, keyed by (flow hash, destination):
/// a packet of a flow whose choice is still held skips the hash and its division. Exact: an
/// entry holds what the hash gave for its full key, and a key that does not match is computed.
#[derive(Clone, Debug)]
pub(crate) struct EcmpMemo {
    /// (`flow_hash << 32 | dst`, local port); the key `u64::MAX` is empty (no host id is
    /// `u32::MAX`).
    slots: Box<[(u64, u16); EcmpMemo::SLOTS]>,
}

impl Default for EcmpMemo {
    fn default() -> Self {
        EcmpMemo { slots: Box::new([(u64::MAX, 0); EcmpMemo::SLOTS]) }
    }
}

impl EcmpMemo {
    /// 256 entries of 16 B (4 KB per switch): a switch's concurrent flows rarely share a slot.
    const SLOTS: usize = 256;

    #[inline(always)]
    pub(crate) fn get_or(&mut self, flow_hash: u32, dst: u32, choose: impl FnOnce() -> u16) -> u16 {
        debug_assert!(dst != u32::MAX);
        let key = (flow_hash as u64) << 32 | dst as u64;
        // Sequential flow ids and a flow's two directions (same flow, two hosts) spread over
        // the slots; the mask keeps the index in range (no bounds check).
        let i = (flow_hash.wrapping_mul(0x9E37_79B1) ^ dst.wrapping_mul(0x85EB_CA77)) >> 24;
        let e = &mut self.slots[i as usize & (Self::SLOTS - 1)];
        if e.0 == key {
            return e.1;
        }
        let local = choose();
        *e = (key, local);
        local
    }
}

#[derive(Clone, Debug)]
pub struct Topology {
    pub n_hosts: u32,
    pub n_switches: u32,
    pub ports: Vec<PortDesc>,
    /// Per switch, the global ids of its ports in local order.
    pub switch_ports: Vec<Vec<u32>>,
    pub routes: Vec<RouteTable>,
    pub host_rate_bps: u64,
    /// Rate and propagation delay of each link tier, from the hosts up (see the module doc).
    pub tiers: Vec<Hop>,
    /// Leaf (edge switch index) of each host.
    pub leaf_of_host: Vec<u32>,
    pub n_leaves: u32,
    /// Leaves (edge switches) per pod: hosts of leaves `l / leaves_per_pod` alike meet below
    /// tier 2 (= n_leaves on a leaf-spine or star, a single pod).
    pub leaves_per_pod: u32,
    /// Capacity of one leaf's uplinks (0 on a star).
    pub leaf_uplink_bps: u64,
    /// Switch names for outputs ("leaf0", "spine1", "switch0").
    pub switch_names: Vec<String>,
    /// One ECMP hash at every switch (`ecmp_hash = "same"`), else salted per switch.
    pub ecmp_same: bool,
    /// `ecmp_hash = "flow"`: each flow's packets take the flow file's hash (data or reverse),
    /// modulo the candidates, at every switch (constant-rate flows: the "same" hash).
    pub ecmp_given: bool,
}

impl Topology {
    pub fn build(spec: &TopologySpec) -> Result<Topology, String> {
        match *spec {
            TopologySpec::LeafSpine { leaves, spines, servers_per_leaf, links_per_leaf_spine, host_link_bps, fabric_link_bps, link_delay_ps, ref ecmp_hash } => {
                if leaves == 0 || spines == 0 || servers_per_leaf == 0 || links_per_leaf_spine == 0 {
                    return Err("topology: leaves, spines, servers_per_leaf and links_per_leaf_spine must be >= 1".into());
                }
                let mut t = leaf_spine(leaves, spines, servers_per_leaf, links_per_leaf_spine, host_link_bps, fabric_link_bps, link_delay_ps);
                (t.ecmp_same, t.ecmp_given) = parse_ecmp_hash(ecmp_hash)?;
                Ok(t)
            }
            TopologySpec::Star { hosts, link_bps, link_delay_ps } => {
                if hosts < 2 {
                    return Err(format!("topology.hosts = {hosts}: a star needs at least 2 hosts"));
                }
                Ok(star(hosts, link_bps, link_delay_ps))
            }
            TopologySpec::FatTree { k, hosts_per_edge, host_link_bps, edge_agg_link_bps, agg_core_link_bps, host_link_delay_ps, edge_agg_link_delay_ps, agg_core_link_delay_ps, ref ecmp_hash } => {
                if k < 2 || k % 2 != 0 || k > 32 {
                    return Err(format!("topology.k = {k}: a fat-tree needs an even k in 2..=32 (its route tables grow as k^5: ~0.7 GB at k = 32)"));
                }
                if hosts_per_edge > 1024 {
                    return Err(format!("topology.hosts_per_edge = {hosts_per_edge}: at most 1024"));
                }
                if hosts_per_edge == 0 {
                    return Err("topology.hosts_per_edge = 0: must be >= 1".into());
                }
                let tiers = [(host_link_bps, host_link_delay_ps), (edge_agg_link_bps, edge_agg_link_delay_ps), (agg_core_link_bps, agg_core_link_delay_ps)];
                let mut t = fat_tree(k, hosts_per_edge, tiers.map(|(rate_bps, delay_ps)| Hop { rate_bps, delay_ps }));
                (t.ecmp_same, t.ecmp_given) = parse_ecmp_hash(ecmp_hash)?;
                Ok(t)
            }
        }
    }

    /// Node id of switch `s`.
    #[inline]
    pub fn switch_node(&self, s: u32) -> u32 {
        self.n_hosts + s
    }

    /// ECMP hash salt of switch `s`: its index (`"salted"`), or 0 at every switch (`"same"`,
    /// ns-3 global routing: with uplinks ordered spine-major, hash % (spines x links) at the
    /// leaf and hash % links at the spine pick the same link index j).
    #[inline]
    pub fn ecmp_salt(&self, s: u32) -> u32 {
        if self.ecmp_same { 0 } else { s }
    }

    /// Link tiers the path between two hosts climbs (and descends): 1 under one leaf/edge
    /// switch, 2 within a pod (or across leaves of a leaf-spine), 3 across fat-tree pods.
    #[inline]
    pub fn path_level(&self, src: u32, dst: u32) -> usize {
        let (a, b) = (self.leaf_of_host[src as usize], self.leaf_of_host[dst as usize]);
        if a == b {
            1
        } else if a / self.leaves_per_pod == b / self.leaves_per_pod {
            2
        } else {
            3
        }
    }

    /// Number of links on the path between two hosts.
    pub fn path_links(&self, src: u32, dst: u32) -> u32 {
        2 * self.path_level(src, dst) as u32
    }

    /// The links from host `src` to host `dst` in order: up the tiers, then down them.
    pub fn path_hops(&self, src: u32, dst: u32) -> Vec<Hop> {
        let up = &self.tiers[..self.path_level(src, dst)];
        up.iter().chain(up.iter().rev()).copied().collect()
    }

    /// Unloaded round trip of a `data_bytes` packet and its `ack_bytes` ACK: propagation and
    /// store-and-forward serialization on every link, no queueing.
    pub fn unloaded_rtt_ps(&self, src: u32, dst: u32, data_bytes: u64, ack_bytes: u64) -> Time {
        use crate::engine::tx_time_ps;
        let up = &self.tiers[..self.path_level(src, dst)];
        self.base_rtt_ps(src, dst) + 2 * up.iter().map(|h| tx_time_ps(data_bytes, h.rate_bps) + tx_time_ps(ack_bytes, h.rate_bps)).sum::<Time>()
    }

    /// What a flow from `src` to `dst` knows of its path (`cc::PathInfo`): base RTT, τ for
    /// `data_bytes` segments and `ack_bytes` ACKs, and the hosts' line rate.
    pub fn path_info(&self, src: u32, dst: u32, data_bytes: u64, ack_bytes: u64) -> crate::cc::PathInfo {
        crate::cc::PathInfo { base_rtt_ps: self.base_rtt_ps(src, dst), tau_ps: self.unloaded_rtt_ps(src, dst, data_bytes, ack_bytes), line_rate_bps: self.host_rate_bps }
    }

    /// Round-trip propagation delay between two hosts (the papers' base RTT).
    pub fn base_rtt_ps(&self, src: u32, dst: u32) -> Time {
        4 * self.tiers[..self.path_level(src, dst)].iter().map(|h| h.delay_ps).sum::<Time>()
    }
}

fn parse_ecmp_hash(s: &str) -> Result<(bool, bool), String> {
    match s {
        "salted" => Ok((false, false)),
        "same" => Ok((true, false)),
        "flow" => Ok((true, true)),
        s => Err(format!("topology.ecmp_hash = '{s}': allowed: salted, same, flow")),
    }
}

#[inline]
pub fn ecmp_hash(flow: u32, dst: u32, salt: u32) -> u64 {
    // SplitMix64 finalizer over (flow, direction, salt): per-flow, per-direction ECMP;
    // the salt is the switch index (independent choices) or 0 at every switch.
    let mut z = (flow as u64) << 32 ^ (dst as u64) ^ ((salt as u64) << 48) ^ 0x9E37_79B9_7F4A_7C15;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn host_link(ports: &mut Vec<PortDesc>, host: u32, sw_node: u32, rate: u64, delay: u64) -> u32 {
    // Host NIC port ids equal the host id and are created first.
    debug_assert_eq!(ports.len() as u32, host);
    ports.push(PortDesc { owner: host, peer: sw_node, rate_bps: rate, delay_ps: delay });
    0
}

pub fn star(hosts: u32, link_bps: u64, delay: u64) -> Topology {
    let sw = hosts;
    let mut ports = Vec::new();
    for h in 0..hosts {
        host_link(&mut ports, h, sw, link_bps, delay);
    }
    let mut local = Vec::new();
    for h in 0..hosts {
        local.push(ports.len() as u32);
        ports.push(PortDesc { owner: sw, peer: h, rate_bps: link_bps, delay_ps: delay });
    }
    let mut rt = RouteTable::default();
    for h in 0..hosts {
        rt.span.push((rt.cands.len() as u32, 1));
        rt.cands.push(h as u16);
    }
    Topology {
        n_hosts: hosts,
        n_switches: 1,
        ports,
        switch_ports: vec![local],
        routes: vec![rt],
        host_rate_bps: link_bps,
        tiers: vec![Hop { rate_bps: link_bps, delay_ps: delay }],
        leaf_of_host: vec![0; hosts as usize],
        n_leaves: 1,
        leaves_per_pod: 1,
        leaf_uplink_bps: 0,
        switch_names: vec!["switch0".into()],
        ecmp_same: false,
        ecmp_given: false,
    }
}

pub fn leaf_spine(leaves: u32, spines: u32, spl: u32, links: u32, host_bps: u64, fabric_bps: u64, delay: u64) -> Topology {
    let h = leaves * spl;
    let leaf_node = |l: u32| h + l;
    let spine_node = |s: u32| h + leaves + s;
    let mut ports = Vec::new();
    for x in 0..h {
        host_link(&mut ports, x, leaf_node(x / spl), host_bps, delay);
    }
    let mut switch_ports = Vec::new();
    // Leaf l: ports 0..spl to its servers, then spl + s*links + j to spine s, link j.
    for l in 0..leaves {
        let mut local = Vec::new();
        for i in 0..spl {
            local.push(ports.len() as u32);
            ports.push(PortDesc { owner: leaf_node(l), peer: l * spl + i, rate_bps: host_bps, delay_ps: delay });
        }
        for s in 0..spines {
            for _ in 0..links {
                local.push(ports.len() as u32);
                ports.push(PortDesc { owner: leaf_node(l), peer: spine_node(s), rate_bps: fabric_bps, delay_ps: delay });
            }
        }
        switch_ports.push(local);
    }
    // Spine s: port l*links + j to leaf l, link j.
    for s in 0..spines {
        let mut local = Vec::new();
        for l in 0..leaves {
            for _ in 0..links {
                local.push(ports.len() as u32);
                ports.push(PortDesc { owner: spine_node(s), peer: leaf_node(l), rate_bps: fabric_bps, delay_ps: delay });
            }
        }
        switch_ports.push(local);
    }
    let mut routes = Vec::new();
    for l in 0..leaves {
        let mut rt = RouteTable::default();
        for dst in 0..h {
            if dst / spl == l {
                rt.span.push((rt.cands.len() as u32, 1));
                rt.cands.push((dst % spl) as u16);
            } else {
                rt.span.push((rt.cands.len() as u32, spines * links));
                for p in 0..spines * links {
                    rt.cands.push((spl + p) as u16);
                }
            }
        }
        routes.push(rt);
    }
    for _ in 0..spines {
        let mut rt = RouteTable::default();
        for dst in 0..h {
            let l = dst / spl;
            rt.span.push((rt.cands.len() as u32, links));
            for j in 0..links {
                rt.cands.push((l * links + j) as u16);
            }
        }
        routes.push(rt);
    }
    let mut names: Vec<String> = (0..leaves).map(|l| format!("leaf{l}")).collect();
    names.extend((0..spines).map(|s| format!("spine{s}")));
    Topology {
        n_hosts: h,
        n_switches: leaves + spines,
        ports,
        switch_ports,
        routes,
        host_rate_bps: host_bps,
        tiers: vec![Hop { rate_bps: host_bps, delay_ps: delay }, Hop { rate_bps: fabric_bps, delay_ps: delay }],
        leaf_of_host: (0..h).map(|x| x / spl).collect(),
        n_leaves: leaves,
        leaves_per_pod: leaves,
        leaf_uplink_bps: spines as u64 * links as u64 * fabric_bps,
        switch_names: names,
        ecmp_same: false,
        ecmp_given: false,
    }
}

/// A k-ary three-tier fat-tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2 edge and k/2
/// aggregation switches, (k/2)^2 core switches, `hpe` hosts per edge switch (k/2: full
/// bisection; more oversubscribes the edge uplinks).
///
/// Switch indices: edge `p*k/2 + i` (pod p), then aggregation `k^2/2 + p*k/2 + j`, then core
/// `k^2 + j*k/2 + m`; aggregation switch j of every pod connects to cores `j*k/2 .. (j+1)*k/2`.
/// Local ports: edge: hosts `0..hpe`, then aggregation j at `hpe + j`; aggregation: edge i at
/// `i`, then core m of its group at `k/2 + m`; core: pod p at `p`.
/// Routing: up by ECMP (edge over its k/2 aggregation switches, aggregation over its k/2
/// cores) until the common ancestor, then down on the one path there is.
pub fn fat_tree(k: u32, hpe: u32, tiers: [Hop; 3]) -> Topology {
    let half = k / 2;
    let n_edge = k * half;
    let h = n_edge * hpe;
    let edge_node = |e: u32| h + e;
    let agg_node = |a: u32| h + n_edge + a;
    let core_node = |c: u32| h + 2 * n_edge + c;
    let [host, ea, ac] = tiers;
    let mut ports = Vec::new();
    for x in 0..h {
        host_link(&mut ports, x, edge_node(x / hpe), host.rate_bps, host.delay_ps);
    }
    let mut switch_ports = Vec::new();
    let link = |ports: &mut Vec<PortDesc>, local: &mut Vec<u32>, owner: u32, peer: u32, tier: Hop| {
        local.push(ports.len() as u32);
        ports.push(PortDesc { owner, peer, rate_bps: tier.rate_bps, delay_ps: tier.delay_ps });
    };
    for e in 0..n_edge {
        let (p, mut local) = (e / half, Vec::new());
        for i in 0..hpe {
            link(&mut ports, &mut local, edge_node(e), e * hpe + i, host);
        }
        for j in 0..half {
            link(&mut ports, &mut local, edge_node(e), agg_node(p * half + j), ea);
        }
        switch_ports.push(local);
    }
    for a in 0..n_edge {
        let (p, j, mut local) = (a / half, a % half, Vec::new());
        for i in 0..half {
            link(&mut ports, &mut local, agg_node(a), edge_node(p * half + i), ea);
        }
        for m in 0..half {
            link(&mut ports, &mut local, agg_node(a), core_node(j * half + m), ac);
        }
        switch_ports.push(local);
    }
    for c in 0..half * half {
        let (j, mut local) = (c / half, Vec::new());
        for p in 0..k {
            link(&mut ports, &mut local, core_node(c), agg_node(p * half + j), ac);
        }
        switch_ports.push(local);
    }
    // Route tables: one span per destination host.
    let table = |route: &dyn Fn(u32) -> (u32, u32)| {
        let mut rt = RouteTable::default();
        for dst in 0..h {
            let (first, count) = route(dst);
            rt.span.push((rt.cands.len() as u32, count));
            rt.cands.extend((first..first + count).map(|l| l as u16));
        }
        rt
    };
    let edge_of = |dst: u32| dst / hpe;
    let mut routes = Vec::new();
    for e in 0..n_edge {
        routes.push(table(&|dst| if edge_of(dst) == e { (dst % hpe, 1) } else { (hpe, half) }));
    }
    for a in 0..n_edge {
        let p = a / half;
        routes.push(table(&|dst| if edge_of(dst) / half == p { (edge_of(dst) % half, 1) } else { (half, half) }));
    }
    for _ in 0..half * half {
        routes.push(table(&|dst| (edge_of(dst) / half, 1)));
    }
    let mut names: Vec<String> = (0..n_edge).map(|e| format!("edge{e}")).collect();
    names.extend((0..n_edge).map(|a| format!("agg{a}")));
    names.extend((0..half * half).map(|c| format!("core{c}")));
    Topology {
        n_hosts: h,
        n_switches: 2 * n_edge + half * half,
        ports,
        switch_ports,
        routes,
        host_rate_bps: host.rate_bps,
        tiers: vec![host, ea, ac],
        leaf_of_host: (0..h).map(edge_of).collect(),
        n_leaves: n_edge,
        leaves_per_pod: half,
        leaf_uplink_bps: half as u64 * ea.rate_bps,
        switch_names: names,
        ecmp_same: false,
        ecmp_given: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaf_spine_shape() {
        let t = leaf_spine(2, 2, 4, 2, 10_000_000_000, 40_000_000_000, 1_000_000);
        assert_eq!(t.n_hosts, 8);
        assert_eq!(t.n_switches, 4);
        // 8 NICs + 2 leaves * (4 + 4) + 2 spines * 4
        assert_eq!(t.ports.len(), 8 + 16 + 8);
        // host 5 is in leaf 1; leaf 1's route to host 5 is its local port 1.
        assert_eq!(t.routes[1].choose(5, 12345), 1);
        // leaf 0 reaches host 5 over one of its 4 uplinks (local ports 4..8).
        for hsh in 0..16 {
            let p = t.routes[0].choose(5, hsh);
            assert!((4..8).contains(&p));
            assert_eq!(t.ports[t.switch_ports[0][p] as usize].peer, t.n_hosts + 2 + (p as u32 - 4) / 2);
        }
        assert_eq!(t.base_rtt_ps(0, 5), 8_000_000);
        assert_eq!(t.base_rtt_ps(0, 1), 4_000_000);
        assert_eq!(t.leaf_uplink_bps, 160_000_000_000);
        // 1500 B data + 64 B ACK: 4 x 1 us propagation each way, 10G edges, 40G core.
        assert_eq!(t.unloaded_rtt_ps(0, 5, 1500, 64), 8_000_000 + 2 * (1_200_000 + 51_200) + 2 * (300_000 + 12_800));
    }

    /// Every builder's route tables pass the check the unchecked look-up relies on, and the
    /// check refuses a table with an empty span, a span past `cands` or a port out of range.
    #[test]
    fn route_tables_pass_their_check_and_bad_ones_fail() {
        let hop = Hop { rate_bps: 10_000_000_000, delay_ps: 1_000_000 };
        for t in [leaf_spine(2, 2, 4, 2, 10_000_000_000, 40_000_000_000, 1_000_000), star(5, 10_000_000_000, 1_000_000), fat_tree(4, 2, [hop; 3])] {
            for (s, rt) in t.routes.iter().enumerate() {
                assert_eq!(rt.check(t.n_hosts, t.switch_ports[s].len()), Ok(()));
            }
        }
        let t = leaf_spine(2, 2, 4, 2, 10_000_000_000, 40_000_000_000, 1_000_000);
        let n_ports = t.switch_ports[0].len();
        let mut rt = t.routes[0].clone();
        assert!(rt.check(t.n_hosts + 1, n_ports).is_err());
        rt.span[3].1 = 0;
        assert!(rt.check(t.n_hosts, n_ports).is_err());
        let mut rt = t.routes[0].clone();
        rt.span[7].0 = rt.cands.len() as u32 - 1;
        assert!(rt.check(t.n_hosts, n_ports).is_err());
        let mut rt = t.routes[0].clone();
        rt.cands[0] = n_ports as u16;
        assert!(rt.check(t.n_hosts, n_ports).is_err());
    }

    /// Through the memo, every choice equals the hash's: 40,000 (flow, destination) keys in
    /// an order that revisits recent keys (hits), older ones (evicted: recomputed) and keys
    /// sharing a slot, on a leaf (16 uplinks) and a spine of the 8 x 8 x 4 leaf-spine.
    #[test]
    fn ecmp_memo_gives_the_hash_choice_for_every_key() {
        let t = leaf_spine(8, 8, 16, 2, 10_000_000_000, 40_000_000_000, 1_000_000);
        let mut hits = 0;
        for sw in [0u32, 9] {
            let (rt, salt) = (&t.routes[sw as usize], t.ecmp_salt(sw));
            let mut memo = EcmpMemo::default();
            let mut x = 12345u64;
            for k in 0..40_000u32 {
                // recent flows mostly, sometimes a far older one; the CBR bit on some
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let back = if x >> 60 == 0 { (x >> 32) as u32 % 5000 } else { (x >> 32) as u32 % 40 };
                let flow = k.saturating_sub(back) / 4 | if x >> 63 == 1 && x & 1 == 1 { 1 << 31 } else { 0 };
                let dst = (((x >> 16) as u32 % 2) * 17 + flow) % 128;
                let before = memo.slots.iter().filter(|e| e.0 == (flow as u64) << 32 | dst as u64).count();
                let got = unsafe { rt.choose_memo(&mut memo, flow, dst, salt) };
                assert_eq!(got, rt.choose(dst, ecmp_hash(flow, dst, salt)), "switch {sw}, flow {flow}, dst {dst}");
                hits += before;
            }
        }
        // The memo is exercised both ways: hits and misses.
        assert!(hits > 10_000 && hits < 70_000, "{hits} hits of 80,000");
        // Keys sharing a slot (same flow, other destination; other flows), taken in turns:
        // each evicts the other, and a match on part of the key would give a wrong port.
        let (rt, salt) = (&t.routes[0], t.ecmp_salt(0));
        let mut by_slot: std::collections::BTreeMap<u32, Vec<(u32, u32)>> = Default::default();
        for flow in 0..1024u32 {
            for dst in 16..128u32 {
                by_slot.entry((flow.wrapping_mul(0x9E37_79B1) ^ dst.wrapping_mul(0x85EB_CA77)) >> 24).or_default().push((flow, dst));
            }
        }
        let mut memo = EcmpMemo::default();
        let mut differing = 0;
        for keys in by_slot.values_mut() {
            // In turns by flow, then by destination (same destination, other flows adjacent).
            for pass in 0..2 {
                if pass == 1 {
                    keys.sort_by_key(|&(flow, dst)| (dst, flow));
                }
                for &(flow, dst) in keys.iter() {
                    let want = rt.choose(dst, ecmp_hash(flow, dst, salt));
                    assert_eq!(unsafe { rt.choose_memo(&mut memo, flow, dst, salt) }, want, "flow {flow}, dst {dst}");
                    differing += (want != rt.choose(keys[0].1, ecmp_hash(keys[0].0, keys[0].1, salt))) as u32;
                }
            }
        }
        assert!(differing > 1000, "colliding keys mostly choose other ports ({differing})");
    }

    /// Pearson chi-square of `counts` against a uniform spread.
    fn chi2(counts: &[u64]) -> f64 {
        let n: u64 = counts.iter().sum();
        let e = n as f64 / counts.len() as f64;
        counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum()
    }

    /// ecmp_hash = "same" on the ns3dc topology (2 leaves, 2 spines, 4 links per pair, 32
    /// servers per leaf): the spine picks the same link index j as the leaf's uplink (s, j), so
    /// downlink (s, j) carries exactly what uplink (s, j) carried; "salted" matches only by chance
    /// (1/4). Flows spread uniformly over the 8 uplinks in both modes: chi-square with 7 degrees
    /// of freedom below 24.32 (p = 0.001).
    #[test]
    fn ecmp_same_hash_polarizes_and_spreads_evenly() {
        for same in [false, true] {
            let mut t = leaf_spine(2, 2, 32, 4, 10_000_000_000, 10_000_000_000, 10_000_000);
            t.ecmp_same = same;
            // Leaf 1 (salt 1 when salted; leaf 0's salt is 0 in both modes) towards leaf 0.
            let (leaf, n_flows) = (1u32, 64_000u32);
            let mut counts = [0u64; 8];
            let mut same_j = 0u32;
            for flow in 0..n_flows {
                let dst = flow % 32;
                let up = t.routes[leaf as usize].choose(dst, ecmp_hash(flow, dst, t.ecmp_salt(leaf)));
                let p = up - 32; // uplink index s * links + j
                counts[p] += 1;
                let (s, j) = (p / 4, p % 4);
                let spine = 2 + s as u32;
                let down = t.routes[spine as usize].choose(dst, ecmp_hash(flow, dst, t.ecmp_salt(spine)));
                // spine local port l * links + j towards leaf l = 0
                if down == j {
                    same_j += 1;
                }
            }
            let x2 = chi2(&counts);
            println!("ecmp same = {same}: chi-square {x2:.2} over uplinks {counts:?}, spine repeats j for {same_j} of {n_flows}");
            assert!(x2 < 24.32, "same = {same}: chi-square {x2} over uplinks {counts:?}");
            let frac = same_j as f64 / n_flows as f64;
            if same {
                assert_eq!(same_j, n_flows, "one hash: the spine repeats the leaf's link index");
            } else {
                // binomial(64000, 1/4): sd 0.0017
                assert!((frac - 0.25).abs() < 0.01, "salted: spine matches leaf's j in {frac} of flows, expected 0.25");
            }
        }
    }
}
