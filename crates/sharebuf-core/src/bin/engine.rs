//! `sharebuf-engine SPEC.json`: run a resolved engine spec (as written by
//! `sharebuf run --dump-spec`) without Python, and print the run's counters as JSON.
//! Used by the benchmarks and for profiling.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 {
        eprintln!("usage: sharebuf-engine SPEC.json");
        std::process::exit(2);
    }
    let text = match std::fs::read_to_string(&args[1]) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", args[1]);
            std::process::exit(2);
        }
    };
    let out = match sharebuf_core::run_json(&text, &mut |_, _| true) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    eprintln!("events by kind (Arrive, TxDone, FlowStart, Rto, DelAck, Pace, CbrSend, BmTick, SampleBuffer, SampleQueues, Pfc): {:?}", out.events_by_kind);
    let finished = out.flow_end_ps.iter().filter(|&&e| e != u64::MAX).count();
    println!(
        "{{\"events\": {}, \"wall_s\": {:.4}, \"sim_s\": {:.6}, \"events_per_s\": {:.0}, \"delivered_data_pkts\": {}, \"data_pkts_per_s\": {:.0}, \"sim_s_per_wall_s\": {:.6}, \"flows\": {}, \"finished\": {}, \"drops\": {}, \"pool_pkts\": {}}}",
        out.events,
        out.wall_s,
        out.end_ps as f64 * 1e-12,
        out.events as f64 / out.wall_s,
        out.counters.delivered_data_pkts,
        out.counters.delivered_data_pkts as f64 / out.wall_s,
        out.end_ps as f64 * 1e-12 / out.wall_s,
        out.flow_src.len(),
        finished,
        out.counters.drop_pkts.iter().sum::<u64>(),
        out.pool_capacity_pkts
    );
}
