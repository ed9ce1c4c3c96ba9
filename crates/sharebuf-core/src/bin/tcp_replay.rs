//! `sharebuf-tcp-replay SPEC.json ACKS.txt`: drive sharebuf's TCP sender, configured by a resolved
//! engine spec's `[transport]` (as `sharebuf run --dump-spec` writes it), with recorded ACK
//! streams, and print what it does (`transport::replay`). bench/ns3dc/tcp_diag.py `replay` writes
//! ACKS.txt from ns3dc's traced senders and compares the two senders ACK by ACK.
//!
//! ACKS.txt, whitespace-separated, sequence numbers from 0 (the first data byte):
//!   F id size_bytes start_ns handshake(0|1) src dst    a flow from host src to host dst
//!   A t_ns ack flags echo_ns lo1 hi1 lo2 hi2 ...      an ACK of it
//! (flags as sharebuf's packet flags: 1 SYN, 32 ECE; echo_ns: the send time the ACK echoes). The
//! flow's path (base RTT, τ, line rate: what TIMELY and PowerTCP read) is the spec topology's
//! between src and dst, as in a run. Output, tab-separated with a header: one row per sender
//! event (send, ack, timeout, syn_ack) with its state after it.

use sharebuf_core::cc;
use sharebuf_core::engine::PS_PER_US;
use sharebuf_core::metrics::{STATE_CWR, STATE_DISORDER, STATE_LOSS, STATE_OPEN, STATE_RECOVERY, STATE_SYN_SENT, TRACE_ACK, TRACE_SEND, TRACE_SYN_ACK, TRACE_TIMEOUT};
use sharebuf_core::transport::replay::{replay, RecordedAck, RecordedFlow};
use sharebuf_core::transport::TransportCfg;
use sharebuf_core::topology::Topology;
use sharebuf_core::SimSpec;
use std::io::Write;

fn fail(msg: String) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(2);
}

fn num(tok: Option<&str>, what: &str, line: usize) -> u64 {
    let t = tok.unwrap_or_else(|| fail(format!("ACKS line {line}: {what} missing")));
    t.parse().unwrap_or_else(|_| fail(format!("ACKS line {line}: {what} = {t:?}: not a whole number")))
}

fn read_flows(text: &str, topo: &Topology, data_bytes: u64, ack_bytes: u64) -> Vec<RecordedFlow> {
    let ps_per_ns = PS_PER_US / 1000;
    let mut flows: Vec<RecordedFlow> = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let line = i + 1;
        let mut t = l.split_whitespace();
        match t.next() {
            Some("F") => {
                let id = num(t.next(), "id", line) as u32;
                let size_bytes = num(t.next(), "size_bytes", line);
                if size_bytes == 0 {
                    fail(format!("ACKS line {line}: size_bytes = 0: a flow carries at least one byte"));
                }
                let start_ps = num(t.next(), "start_ns", line) * ps_per_ns;
                let handshake = num(t.next(), "handshake", line) != 0;
                let mut host = |what| {
                    let h = num(t.next(), what, line);
                    if h >= topo.n_hosts as u64 {
                        fail(format!("ACKS line {line}: {what} = {h}: the spec's topology has hosts 0..{}", topo.n_hosts - 1));
                    }
                    h as u32
                };
                let (src, dst) = (host("src"), host("dst"));
                let path = topo.path_info(src, dst, data_bytes, ack_bytes);
                flows.push(RecordedFlow { id, size_bytes, start_ps, handshake, path, acks: Vec::new() });
            }
            Some("A") => {
                let f = flows.last_mut().unwrap_or_else(|| fail(format!("ACKS line {line}: an ACK before any flow (F line)")));
                let t_ps = num(t.next(), "t_ns", line) * ps_per_ns;
                let last = f.acks.last().map_or(f.start_ps, |a| a.t_ps);
                if t_ps < last {
                    fail(format!("ACKS line {line}: t_ns = {}: before the flow's start or its previous ACK ({} ns); ACKs come in time order", t_ps / ps_per_ns, last / ps_per_ns));
                }
                let ack = num(t.next(), "ack", line);
                let flags = num(t.next(), "flags", line) as u8;
                let echo_ps = num(t.next(), "echo_ns", line) * ps_per_ns;
                let edges: Vec<u64> = t.map(|x| num(Some(x), "SACK edge", line)).collect();
                if edges.len() % 2 != 0 {
                    fail(format!("ACKS line {line}: SACK edges come in pairs, got {}", edges.len()));
                }
                f.acks.push(RecordedAck { t_ps, ack, flags, echo_ps, sack: edges.chunks(2).map(|c| (c[0], c[1])).collect() });
            }
            None => {}
            Some(other) => fail(format!("ACKS line {line}: {other:?}: a line starts with F or A")),
        }
    }
    flows
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: sharebuf-tcp-replay SPEC.json ACKS.txt");
        std::process::exit(2);
    }
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_else(|e| fail(format!("cannot read {p}: {e}")));
    let spec = SimSpec::from_json(&read(&args[1])).unwrap_or_else(|e| fail(e));
    let cfg = TransportCfg::from_spec(&spec.transport).unwrap_or_else(|e| fail(e));
    if cfg.roce {
        fail("transport.kind = 'roce': sharebuf-tcp-replay drives TCP senders only; allowed: 'tcp'".into());
    }
    let proto = cc::build(&spec.transport.cc, &spec.transport.cc_params).unwrap_or_else(|e| fail(e));
    let topo = Topology::build(&spec.topology).unwrap_or_else(|e| fail(e));
    let flows = read_flows(&read(&args[2]), &topo, cfg.mss_bytes + cfg.header_bytes, cfg.header_bytes);
    let stdout = std::io::stdout();
    let mut o = std::io::BufWriter::new(stdout.lock());
    let ev = |e: u8| match e {
        TRACE_SEND => "send",
        TRACE_ACK => "ack",
        TRACE_TIMEOUT => "timeout",
        TRACE_SYN_ACK => "syn_ack",
        _ => "?",
    };
    let st = |s: u8| match s {
        STATE_OPEN => "open",
        STATE_DISORDER => "disorder",
        STATE_CWR => "cwr",
        STATE_RECOVERY => "recovery",
        STATE_LOSS => "loss",
        STATE_SYN_SENT => "syn_sent",
        _ => "?",
    };
    let w = |o: &mut std::io::BufWriter<_>, s: String| o.write_all(s.as_bytes()).unwrap_or_else(|e| fail(format!("cannot write: {e}")));
    w(&mut o, "flow\tevent\tt_ns\tseq\tretx\tcwnd_bytes\tssthresh_bytes\tin_flight_bytes\tsnd_una\tsnd_nxt\tstate\n".into());
    for f in &flows {
        for r in replay(f, &cfg, proto.clone_flow()) {
            let ss = if r.ssthresh_bytes == u64::MAX { -1 } else { r.ssthresh_bytes as i64 };
            w(&mut o, format!("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", f.id, ev(r.event), r.time_ps / 1000, r.seq, r.retx as u8, r.cwnd_bytes, ss, r.in_flight_bytes, r.snd_una, r.snd_nxt, st(r.state)));
        }
    }
}
