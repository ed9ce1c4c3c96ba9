#!/usr/bin/env python3
"""sharebuf side of the ns3dc comparison: seeds x {dt, abm_code} x {profile ns3dc, sharebuf
defaults}, each replaying ns3dc's own websearch flows and incast queries for that seed.

For each seed, ns3dc_flows.py re-derives ns3dc's flows (glibc rand(), same draw order) into
scenarios/replay/{websearch,incast}-sN.csv; the scenarios/ns3dc-<scheme>.toml files point at
them. Writes results/sharebuf/<variant>_<scheme>-sN.parquet (flows.parquet of each run) and
appends wall times to results/runs.csv; compare.py reads both.

Usage: python3 run_sharebuf.py [--seeds 1,2,3,4,5] [--variants profile,default] [--schemes dt,abm_code]
  variants: profile (ns3dc), default (sharebuf's), and ablations ecmp, devq, ippay, maxrto
  (one profile setting alone on sharebuf's defaults), hostfq (ns-3's host NIC:
  fq_codel over a 100 p device FIFO)
"""
import argparse
import csv
import os
import shutil
import sys
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ns3dc_flows  # noqa: E402

#: variant -> (value of the scenario's `profile` key, dotted keys set on top): the profile, sharebuf's
#: defaults, and one-setting ablations (each profile setting alone on sharebuf's defaults).
VARIANTS = {
    "profile": ("ns3dc", {}),
    "default": ("none", {}),
    "ecmp": ("none", {"topology.ecmp_hash": "same"}),
    "devq": ("none", {"switch.device_queue_packets": 100}),
    "ippay": ("none", {"switch.buffer_accounting": "ip_payload"}),
    "maxrto": ("none", {"transport.max_rto_us": 60e6}),
    "hostfq": ("none", {"host.nic_qdisc": "fq_codel", "host.device_queue_packets": 100}),
    # the profile without one of its settings
    "profile_hostfifo": ("ns3dc", {"host.nic_qdisc": "fifo", "host.device_queue_packets": 0}),
    "profile_notick": ("ns3dc", {"transport.timestamp_tick_us": 0}),
    "profile_rfc6675": ("ns3dc", {"transport.recovery": "rfc6675"}),
    # the profile with RFC 9438's congestion avoidance instead of ns-3.39 TcpCubic's (its state before
    # the CntClamp / no-Reno-friendly settings): a row of the Cubic table in docs/validation.md
    "profile_rfc9438ca": ("ns3dc", {"transport.cc_params.cnt_clamp_segments": 0, "transport.cc_params.reno_friendly": True}),
    # one of the two ns-3 Cubic settings alone on top of the profile's other settings
    "profile_clamponly": ("ns3dc", {"transport.cc_params.reno_friendly": True}),
    "profile_nofriendlyonly": ("ns3dc", {"transport.cc_params.cnt_clamp_segments": 0}),
    # DCTCP (the grid's DCTCP points): the profile without ns-3.39 TcpDctcp's loss response, without
    # the servers' no-marking NICs, and without both (the profile before them)
    "profile_dctcphalf": ("ns3dc", {"transport.cc_params.loss_ssthresh": "half"}),
    "profile_nicmark": ("ns3dc", {"host.nic_ecn_k_bytes": "switch"}),
    "profile_dctcpbefore": ("ns3dc", {"transport.cc_params.loss_ssthresh": "half", "host.nic_ecn_k_bytes": "switch"}),
    # RED's threshold in ns3dc's bytes (1452 B per full segment, with the IP header) expressed in the
    # profile's IP-payload bytes (1432 B): 91,000 x 1432 / 1452 = 89,746 B, a mark at 63 packets, not 64
    "profile_redbytes": ("ns3dc", {"switch.ecn_k_bytes": 89746}),
    # incast responses starting with the global initial window (55) instead of size / 1400 + 1
    "profile_iw55": ("ns3dc", {"transport.preopened_init_cwnd": "transport"}),
    # lost retransmissions detected from later SACKs (sharebuf's default) instead of left to the RTO
    "profile_rtxdetect": ("ns3dc", {"transport.lost_retransmission": "detect"}),
    # a window's un-SACKed tail left to the RTO (sharebuf's default, RFC 6675's NextSeg) instead of
    # resent in recovery (ns-3.39's NextSeg rule 3): the profile before recovery_tail
    "profile_tailrto": ("ns3dc", {"transport.recovery_tail": "rto"}),
    # duplicate ACKs in CWR start loss recovery (sharebuf's default, Linux) instead of ns-3.39's
    # CA_CWR, which starts none: the profile before cwr_dupacks (acts on DCTCP only)
    "profile_cwrrecover": ("ns3dc", {"transport.cwr_dupacks": "recover"}),
    # DCTCP's window in CWR brought down by PRR (ns-3.39's EnterCwr) instead of cut at the echo
    "profile_cwrprr": ("ns3dc", {"transport.cwr_window": "recovery"}),
    # DCTCP's window cut at the echo (sharebuf's default), duplicate ACKs in CWR as ns-3
    "profile_cwrcut": ("ns3dc", {"transport.cwr_window": "cc"}),
    # each segment's CE echoed (sharebuf's default, RFC 8257) instead of ns-3.39's receiver, which echoes
    # a CE only on a segment above the highest one echoed so far: the profile before ce_echo
    "profile_ceecho": ("ns3dc", {"transport.ce_echo": "packet"}),
    # a partial ACK in SACK recovery leaves the sending to the scoreboard and the window (sharebuf's
    # default, RFC 6675) instead of ns-3.39's DoRetransmit (one segment at once): the profile before partial_ack
    "profile_partialwindow": ("ns3dc", {"transport.partial_ack": "window"}),
    # the retransmission timer restarted at every ACK of new data and when recovery begins (sharebuf's
    # default) instead of ns-3.39's NewAck(ack, m_isFirstPartialAck): the profile before recovery_timer
    "profile_timerrestart": ("ns3dc", {"transport.recovery_timer": "restart"}),
    # the profile before ce_echo, partial_ack and recovery_timer
    "profile_rtobefore": ("ns3dc", {"transport.ce_echo": "packet", "transport.partial_ack": "window",
                                    "transport.recovery_timer": "restart"}),
    # no receive-window limit on the first flight (sharebuf's default) instead of ns-3's SYN-ACK window
    # (65,535 B, unscaled, until the first ACK): the profile before syn_ack_window_bytes
    "profile_synwinnone": ("ns3dc", {"transport.syn_ack_window_bytes": "none"}),
    # the profile with RFC 6937's slow-start reduction bound on every ACK instead of ns-3.39's
    # TcpPrrRecovery::DoRecovery (only on an ACK of retransmitted data): the profile before prr_reduction_bound
    "profile_ssrb": ("ns3dc", {"transport.prr_reduction_bound": "ssrb"}),
    # the profile with PRR's pipe the whole flight after a timeout and DCTCP's 2-segment floor on its loss
    # ssthresh instead of ns-3.39's SetSentListLost, EnterCwr from CA_LOSS and floor-less GetSsThresh
    "profile_flight": ("ns3dc", {"transport.loss_cwr": "flight", "transport.cc_params.loss_ssthresh": "alpha"}),
    # PRR in exact arithmetic instead of ns-3.39's DoRecovery, whose uint32_t prr_delivered * ssthresh
    # wraps modulo 2^32: the profile before prr_arithmetic (with one hash, and with ns3dc's placement)
    "profile_exactprr": ("ns3dc", {"transport.prr_arithmetic": "exact"}),
    "profile_ns3hash_exactprr": ("ns3dc", {"topology.ecmp_hash": "flow", "transport.prr_arithmetic": "exact"}),
    # INT on data packets only instead of ns3dc's GenQueueDisc, which stamps the ACKs too (after the
    # data's records they carry): the profile before int_stamp (with one hash, and with ns3dc's placement)
    "profile_intdata": ("ns3dc", {"switch.int_stamp": "data"}),
    "profile_ns3hash_intdata": ("ns3dc", {"topology.ecmp_hash": "flow", "switch.int_stamp": "data"}),
    # the profile before all three
    "profile_prrbefore": ("ns3dc", {"transport.prr_reduction_bound": "ssrb", "transport.loss_cwr": "flight",
                                    "transport.cc_params.loss_ssthresh": "alpha"}),
    # ns3dc's own ECMP choices: each flow's 5-tuple hash (ns3dc_ecmp.flow_ports / tuple_hash) from
    # the replay files (grid.py writes *-ecmp.csv with the two hash columns for this variant)
    "profile_ns3hash": ("ns3dc", {"topology.ecmp_hash": "flow"}),
    # ns3dc's ECMP and its spines' queues admitted by the leaves' pools under colliding port ids
    "profile_ns3hash_alias": ("ns3dc", {"topology.ecmp_hash": "flow", "switch.spine_buffer": "leaf_aliased"}),
    # the same without the ABM code's empty-poll credit (below, profile_nopollcredit)
    "profile_ns3hash_nopollcredit": ("ns3dc", {"topology.ecmp_hash": "flow", "switch.bm.empty_poll_credit_bytes": 0}),
    # the profile before both CWR settings (duplicate ACKs start recovery, DCTCP cuts at the echo)
    "profile_cwrbefore": ("ns3dc", {"transport.cwr_dupacks": "recover", "transport.cwr_window": "cc"}),
    # TIMELY: the profile with the paper's T_low, step and per-64 KB updates, its signed gradient over tau,
    # instead of ns3dc's (ns3dc's pacing kept)
    "profile_timelypaper": ("ns3dc", {"transport.cc_params.t_low_us": 50, "transport.cc_params.ai_mbps": 10,
                                      "transport.cc_params.hai_mbps": 10, "transport.cc_params.segment_bytes": 64000,
                                      "transport.cc_params.rtt_diff_wraps": False,
                                      "transport.cc_params.gradient_base": "tau",
                                      "transport.cc_params.keep_initial_window": False}),
    # the profile without one of ns3dc's TIMELY details (profile_timelynoiw: without the initial window)
    "profile_timelynowrap": ("ns3dc", {"transport.cc_params.rtt_diff_wraps": False}),
    "profile_timelynoiw": ("ns3dc", {"transport.cc_params.keep_initial_window": False}),
    "profile_timelytau": ("ns3dc", {"transport.cc_params.gradient_base": "tau"}),
    # (t_low_us repeats the profile's value: it keeps this variant to the TIMELY points)
    "profile_timelypacket": ("ns3dc", {"transport.pacing_size": "packet", "transport.cc_params.t_low_us": 200}),
    # ns3dc's TcpAdvanced at a loss (grid.py runs the *_adv* variants at TIMELY and PowerTCP points only): the
    # profile before its three settings (updates also an RTT after the last while the cumulative ACK stalls,
    # ssthresh = the window, PRR's window over the algorithm's), and without each one, with ns3dc's placement
    "profile_advbefore": ("ns3dc", {"transport.cc_params.update_trigger": "ack_or_rtt", "transport.cc_params.loss_ssthresh": "window",
                                    "transport.rate_window_in_recovery": "prr"}),
    "profile_ns3hash_advbefore": ("ns3dc", {"topology.ecmp_hash": "flow", "transport.cc_params.update_trigger": "ack_or_rtt",
                                            "transport.cc_params.loss_ssthresh": "window", "transport.rate_window_in_recovery": "prr"}),
    # ns-3.39's sending on duplicate ACKs and after a timeout, with ns3dc's placement: the profile before all
    # three settings (no Limited Transmit; every ACK in the loss state counted; Cubic's slow start capped at
    # ssthresh), without Limited Transmit alone, and without the loss-state pair alone
    "profile_ns3hash_lossbefore": ("ns3dc", {"topology.ecmp_hash": "flow", "transport.limited_transmit": False,
                                             "transport.loss_exit_acked": "all",
                                             "transport.cc_params.slow_start_cap": "ssthresh"}),
    "profile_ns3hash_nolt": ("ns3dc", {"topology.ecmp_hash": "flow", "transport.limited_transmit": False}),
    "profile_ns3hash_nolossexit": ("ns3dc", {"topology.ecmp_hash": "flow", "transport.loss_exit_acked": "all",
                                             "transport.cc_params.slow_start_cap": "ssthresh"}),
    "profile_ns3hash_advtrigger": ("ns3dc", {"topology.ecmp_hash": "flow", "transport.cc_params.update_trigger": "ack_or_rtt"}),
    "profile_ns3hash_advssthresh": ("ns3dc", {"topology.ecmp_hash": "flow", "transport.cc_params.loss_ssthresh": "window"}),
    "profile_ns3hash_advwindow": ("ns3dc", {"topology.ecmp_hash": "flow", "transport.rate_window_in_recovery": "prr"}),
    # the profile with ns-3.39's loss marking in SACK recovery (TcpTxBuffer::UpdateLostCount: a segment is
    # lost only with three SACKed segments above it), which the profile does not set (docs/validation.md)
    "profile_ns3hash_lossmarking": ("ns3dc", {"topology.ecmp_hash": "flow", "transport.loss_marking": "ns3"}),
    # the profile without SendPendingData's silly-window check for every flow (transport.silly_window, which
    # the profile sets): a window below one segment lets one go when nothing is in flight
    "profile_ns3hash_nosilly": ("ns3dc", {"topology.ecmp_hash": "flow", "transport.silly_window": "one_segment"}),
    # ABM's drain rate without the ABM code's empty-poll credit (1,472 B added to a queue's dequeue
    # count each time round robin finds it empty, GenQueueDisc::DoDequeue, which the profile sets);
    # acts on ABM runs only
    "profile_nopollcredit": ("ns3dc", {"switch.bm.empty_poll_credit_bytes": 0}),
    # PowerTCP (grid.py runs these at PowerTCP points only): the profile before ns3dc's TcpAdvanced PowerTCP
    # (sharebuf's update rule, INT txBytes as transmitted, the pacing gap kept), and without each detail
    "profile_ptcpbefore": ("ns3dc", {"transport.cc_params.smoothing_base": "current", "transport.cc_params.unsmoothed_below": 0,
                                     "transport.cc_params.power_start": "first", "transport.cc_params.tau_base": "unloaded",
                                     "transport.cc_params.window_check": "in_flight",
                                     "switch.int_tx_bytes": "transmitted", "transport.pacing_rate_change": "keep"}),
    "profile_ptcpsmooth": ("ns3dc", {"transport.cc_params.smoothing_base": "current"}),
    "profile_ptcpjump": ("ns3dc", {"transport.cc_params.unsmoothed_below": 0}),
    "profile_ptcpstart": ("ns3dc", {"transport.cc_params.power_start": "first"}),
    "profile_ptcptau": ("ns3dc", {"transport.cc_params.tau_base": "unloaded"}),
    "profile_ptcpinttx": ("ns3dc", {"switch.int_tx_bytes": "transmitted"}),
    "profile_ptcppace": ("ns3dc", {"transport.pacing_rate_change": "keep"}),
    "profile_ptcpwindow": ("ns3dc", {"transport.cc_params.window_check": "in_flight"}),
    # any rate-paced transport (TIMELY too): the pacing gap booked at the old rate kept (the profile before
    # pacing_rate_change)
    "profile_pacekeep": ("ns3dc", {"transport.pacing_rate_change": "keep"}),
}

#: keys of one buffer-management scheme's [switch.bm] (set only where the scenario runs that scheme)
BM_KEY_OWNER = {"switch.bm.empty_poll_credit_bytes": "abm"}


def with_keys(data, dotted):
    """A copy of the scenario dict with dotted keys set; a congestion control's parameter
    (``transport.cc_params.X``) only where the scenario runs that congestion control, a scheme's
    (``BM_KEY_OWNER``) only where it runs that scheme."""
    import copy

    from sharebuf.scenario.profiles import cc_param_applies

    out = copy.deepcopy(data)
    for k, v in dotted.items():
        if not cc_param_applies(k, out.get("transport", {}).get("cc")):
            continue
        if k in BM_KEY_OWNER and out.get("switch", {}).get("bm", {}).get("scheme") != BM_KEY_OWNER[k]:
            continue
        *path, leaf = k.split(".")
        d = out
        for part in path:
            d = d.setdefault(part, {})
        d[leaf] = v
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="1,2,3,4,5")
    ap.add_argument("--variants", default="profile,default")
    ap.add_argument("--schemes", default="dt,abm_code")
    ap.add_argument("--results", default=str(HERE / "results"))
    args = ap.parse_args()
    import sharebuf

    seeds = [int(s) for s in args.seeds.split(",")]
    res_dir = Path(args.results) / "sharebuf"
    res_dir.mkdir(parents=True, exist_ok=True)
    replay = HERE / "scenarios" / "replay"
    runs_csv = Path(args.results) / "runs.csv"
    new = not runs_csv.exists()
    with runs_csv.open("a", newline="") as fh:
        w = csv.writer(fh)
        if new:
            w.writerow(["side", "scheme", "seed", "wall_s"])
        for seed in seeds:
            flows, start = ns3dc_flows.generate(seed, 0.5)
            ws_csv, inc_csv = ns3dc_flows.write_csvs(flows, start, seed, replay)
            for scheme in args.schemes.split(","):
                path = HERE / "scenarios" / f"ns3dc-{scheme}.toml"
                data = tomllib.loads(path.read_text())
                data["seed"] = seed
                for wl in data["workload"]:
                    wl["file"] = ws_csv if wl["name"] == "websearch" else inc_csv
                for variant in args.variants.split(","):
                    t0 = time.time()
                    prof, keys = VARIANTS[variant]
                    r = sharebuf.run(with_keys(data, keys), profile=prof, quiet=True, out=HERE / "out" / f"{variant}_{scheme}-s{seed}")
                    wall = time.time() - t0
                    shutil.copy(HERE / "out" / f"{variant}_{scheme}-s{seed}" / "flows.parquet", res_dir / f"{variant}_{scheme}-s{seed}.parquet")
                    w.writerow(["sharebuf", f"{variant}_{scheme}", seed, f"{wall:.1f}"])
                    fh.flush()
                    s = r.summary
                    print(f"seed {seed} {variant:8s} {scheme:9s} {wall:5.1f} s  unfinished {s['flows']['unfinished']}  "
                          f"p99 " + ", ".join(f"{k} {v['p99']:.1f}" for k, v in s["slowdown"].items()) +
                          f"  profile set {s['profile']['set']}", flush=True)


if __name__ == "__main__":
    main()
