//! Python bindings: `sharebuf._core.simulate(spec_json, progress, scheme_factory, scheme_label)`.
//!
//! Columns come back as raw little-endian byte buffers with a dtype tag, which the Python
//! side wraps with `numpy.frombuffer` (no per-element conversion).

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use sharebuf_core::bm::{BmContext, BufferManager};
use sharebuf_core::{RunOutput, SimSpec, Simulator};
use std::sync::Arc;

mod pyscheme;

create_exception!(_core, EngineInternalError, PyRuntimeError, "A panic inside the engine (a bug in sharebuf); the message is the panic's.");

thread_local! {
    /// Set while this thread runs the engine: its panics are caught and reported, not printed.
    static IN_ENGINE: Cell<bool> = const { Cell::new(false) };
    /// The message and location of the last engine panic on this thread.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Wrap the panic hook once: a panic inside `simulate` is recorded for the error message
/// instead of printed (no Rust backtrace reaches the user; `SHAREBUF_DEBUG_BACKTRACE` set: printed too,
/// so a developer can see where it came from; `RUST_BACKTRACE` alone is often set globally).
fn install_panic_hook() {
    HOOK.call_once(|| {
        let prev = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if IN_ENGINE.with(|f| f.get()) {
                let msg = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "(no message)".into());
                let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{msg}{at}")));
                if std::env::var_os("SHAREBUF_DEBUG_BACKTRACE").is_none() {
                    return;
                }
            }
            prev(info)
        }));
    });
}

fn raw<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: T is a plain integer type; the slice covers exactly the vector's elements.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

fn put<T: Copy>(py: Python<'_>, d: &Bound<'_, PyDict>, name: &str, dtype: &str, v: &[T]) -> PyResult<()> {
    d.set_item(name, (dtype, PyBytes::new_bound(py, raw(v))))
}

fn to_py(py: Python<'_>, o: &RunOutput) -> PyResult<PyObject> {
    let d = PyDict::new_bound(py);
    let flows = PyDict::new_bound(py);
    put(py, &flows, "src", "<u4", &o.flow_src)?;
    put(py, &flows, "dst", "<u4", &o.flow_dst)?;
    put(py, &flows, "size_bytes", "<u8", &o.flow_size)?;
    put(py, &flows, "start_ps", "<u8", &o.flow_start_ps)?;
    put(py, &flows, "end_ps", "<u8", &o.flow_end_ps)?;
    put(py, &flows, "ideal_ps", "<u8", &o.flow_ideal_ps)?;
    put(py, &flows, "ideal_paper_ps", "<u8", &o.flow_ideal_paper_ps)?;
    put(py, &flows, "priority", "<u1", &o.flow_prio)?;
    put(py, &flows, "workload", "<u2", &o.flow_workload)?;
    put(py, &flows, "query_id", "<i8", &o.flow_query)?;
    put(py, &flows, "retransmits", "<u4", &o.flow_retransmits)?;
    put(py, &flows, "timeouts", "<u4", &o.flow_timeouts)?;
    put(py, &flows, "received_bytes", "<u8", &o.flow_received)?;
    d.set_item("flows", flows)?;
    let q = PyDict::new_bound(py);
    put(py, &q, "requester", "<u4", &o.query_requester)?;
    put(py, &q, "size_bytes", "<u8", &o.query_size)?;
    put(py, &q, "start_ps", "<u8", &o.query_start_ps)?;
    put(py, &q, "end_ps", "<u8", &o.query_end_ps)?;
    put(py, &q, "workload", "<u2", &o.query_workload)?;
    d.set_item("queries", q)?;
    let c = PyDict::new_bound(py);
    put(py, &c, "src", "<u4", &o.cbr_src)?;
    put(py, &c, "dst", "<u4", &o.cbr_dst)?;
    put(py, &c, "sent_bytes", "<u8", &o.cbr_sent_bytes)?;
    put(py, &c, "delivered_bytes", "<u8", &o.cbr_delivered_bytes)?;
    put(py, &c, "workload", "<u2", &o.cbr_workload)?;
    d.set_item("cbr", c)?;
    let b = PyDict::new_bound(py);
    put(py, &b, "time_ps", "<u8", &o.buf_time_ps)?;
    put(py, &b, "switch", "<u2", &o.buf_switch)?;
    put(py, &b, "occupancy_bytes", "<u8", &o.buf_bytes)?;
    d.set_item("buffer", b)?;
    let qs = PyDict::new_bound(py);
    let n = o.queue_samples.len();
    let (mut t, mut s, mut p, mut qq, mut by) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    for x in &o.queue_samples {
        t.push(x.time_ps);
        s.push(x.switch);
        p.push(x.port);
        qq.push(x.queue);
        by.push(x.bytes);
    }
    put(py, &qs, "time_ps", "<u8", &t)?;
    put(py, &qs, "switch", "<u2", &s)?;
    put(py, &qs, "port", "<u2", &p)?;
    put(py, &qs, "queue", "<u1", &qq)?;
    put(py, &qs, "bytes", "<u8", &by)?;
    d.set_item("queue_occupancy", qs)?;
    let k = &o.counters;
    let stats = PyDict::new_bound(py);
    stats.set_item("events", o.events)?;
    stats.set_item("wall_s", o.wall_s)?;
    stats.set_item("end_ps", o.end_ps)?;
    stats.set_item("hit_max_time", o.hit_max_time)?;
    stats.set_item("sent_pkts", k.sent_pkts)?;
    stats.set_item("sent_bytes", k.sent_bytes)?;
    stats.set_item("delivered_pkts", k.delivered_pkts)?;
    stats.set_item("delivered_bytes", k.delivered_bytes)?;
    stats.set_item("delivered_data_pkts", k.delivered_data_pkts)?;
    stats.set_item("ecn_marks", k.ecn_marks)?;
    stats.set_item("nic_ecn_marks", k.nic_ecn_marks)?;
    stats.set_item("nic_peak_pkts", k.nic_peak_pkts)?;
    stats.set_item("nic_peak_bytes", k.nic_peak_bytes)?;
    stats.set_item("in_flight_pkts", o.in_flight_pkts)?;
    stats.set_item("in_flight_bytes", o.in_flight_bytes)?;
    stats.set_item("pool_capacity_pkts", o.pool_capacity_pkts)?;
    let drops = PyDict::new_bound(py);
    let dbytes = PyDict::new_bound(py);
    for (i, name) in sharebuf_core::switch::DROP_CAUSES.iter().enumerate() {
        drops.set_item(*name, k.drop_pkts[i])?;
        dbytes.set_item(*name, k.drop_bytes[i])?;
    }
    stats.set_item("drops_pkts", drops)?;
    stats.set_item("drops_bytes", dbytes)?;
    d.set_item("stats", stats)?;
    d.set_item("workload_names", o.workload_names.clone())?;
    d.set_item("switch_names", o.switch_names.clone())?;
    d.set_item("switch_buffer_bytes", o.switch_buffer_bytes.clone())?;
    d.set_item("switch_peak_bytes", o.switch_peak_bytes.clone())?;
    d.set_item("switch_final_bytes", o.switch_final_bytes.clone())?;
    d.set_item("scheme_stats", o.scheme_stats.clone())?;
    if o.roce {
        let rd = PyDict::new_bound(py);
        rd.set_item("nacks", k.roce_nacks)?;
        rd.set_item("cnps", k.roce_cnps)?;
        d.set_item("roce", rd)?;
    }
    if let Some(pfc) = &o.pfc {
        let pd = PyDict::new_bound(py);
        pd.set_item("lossless_drops", pfc.lossless_drops)?;
        pd.set_item("headroom_overflows", pfc.headroom_overflows)?;
        let rows: Vec<(u32, u32, u32, u64, u64, u64, u64, u64, u64, u64)> = pfc
            .ports
            .iter()
            .map(|r| (r.port, r.node, r.local, r.pauses_sent, r.resumes_sent, r.pauses_received, r.resumes_received, r.paused_ps, r.max_headroom_bytes, r.headroom_limit_bytes))
            .collect();
        pd.set_item("ports", rows)?;
        d.set_item("pfc", pd)?;
    }
    if let Some(rows) = &o.lqd_trace {
        let tr = PyDict::new_bound(py);
        macro_rules! col {
            ($name:literal, $dt:literal, $f:ident) => {
                put(py, &tr, $name, $dt, &rows.iter().map(|r| r.$f).collect::<Vec<_>>())?
            };
        }
        col!("switch", "<u2", switch);
        col!("port", "<u2", port);
        col!("queue", "<u1", queue);
        col!("flow", "<u4", flow);
        col!("flow_key", "<u8", flow_key);
        col!("seq", "<u8", seq);
        col!("occurrence", "<u4", occurrence);
        col!("size_bytes", "<u4", size_bytes);
        col!("flags", "<u1", flags);
        col!("t_arrival_ps", "<u8", t_arrival_ps);
        col!("t_fate_ps", "<u8", t_fate_ps);
        col!("q_bytes", "<u8", q_bytes);
        col!("q_avg_bytes", "<f8", q_avg_bytes);
        col!("occ_bytes", "<u8", occ_bytes);
        col!("occ_avg_bytes", "<f8", occ_avg_bytes);
        col!("longest_bytes", "<u8", longest_bytes);
        col!("fate", "<u1", fate);
        d.set_item("lqd_trace", tr)?;
    }
    if let Some(rows) = &o.drops {
        // `[output] drop_log`: one row per dropped packet (results.py names the kinds and causes).
        let dr = PyDict::new_bound(py);
        macro_rules! col {
            ($name:literal, $dt:literal, $f:ident) => {
                put(py, &dr, $name, $dt, &rows.iter().map(|r| r.$f).collect::<Vec<_>>())?
            };
        }
        col!("time_ps", "<u8", time_ps);
        col!("node", "<u4", node);
        col!("at_host", "|b1", at_host);
        col!("port", "<u2", port);
        col!("queue", "<u1", queue);
        col!("flow", "<u4", flow);
        col!("flags", "<u1", flags);
        col!("seq", "<u8", seq);
        col!("size_bytes", "<u4", size_bytes);
        col!("cause", "<u1", cause);
        col!("queue_bytes", "<u8", queue_bytes);
        col!("occupied_bytes", "<u8", occupied_bytes);
        d.set_item("drops", dr)?;
    }
    if let Some(rows) = &o.tcp_trace {
        // `[output] tcp_trace_*`: one row per sender event of a traced flow (results.py names
        // the events and states).
        let tr = PyDict::new_bound(py);
        macro_rules! col {
            ($name:literal, $dt:literal, $f:ident) => {
                put(py, &tr, $name, $dt, &rows.iter().map(|r| r.$f).collect::<Vec<_>>())?
            };
        }
        col!("time_ps", "<u8", time_ps);
        col!("flow", "<u4", flow);
        col!("event", "<u1", event);
        col!("retx", "|b1", retx);
        col!("seq", "<u8", seq);
        col!("ece", "|b1", ece);
        col!("cwnd_bytes", "<u8", cwnd_bytes);
        col!("ssthresh_bytes", "<u8", ssthresh_bytes);
        col!("in_flight_bytes", "<u8", in_flight_bytes);
        col!("snd_una", "<u8", snd_una);
        col!("snd_nxt", "<u8", snd_nxt);
        col!("state", "<u1", state);
        col!("alpha", "<f8", alpha);
        d.set_item("tcp_trace", tr)?;
    }
    Ok(d.into())
}

/// Run a resolved engine spec (JSON). `progress(sim_time_s, events) -> bool` is called
/// periodically with the GIL held; returning False stops the run early.
///
/// `scheme_factory(ctx) -> object` builds a Python buffer-management scheme per switch
/// (`pyscheme.rs`); `scheme_label` names it in messages. Without one the run releases the GIL;
/// with one it holds it throughout and every hook call re-enters it.
#[pyfunction]
#[pyo3(signature = (spec_json, progress=None, scheme_factory=None, scheme_label=None))]
fn simulate(py: Python<'_>, spec_json: String, progress: Option<PyObject>, scheme_factory: Option<PyObject>, scheme_label: Option<String>) -> PyResult<PyObject> {
    let mut cb_err: Option<PyErr> = None;
    install_panic_hook();
    let res = match scheme_factory {
        None => py.allow_threads(|| {
            let mut cb = |now: u64, events: u64| -> bool { Python::with_gil(|py| poll(py, progress.as_ref(), now, events, &mut cb_err)) };
            in_engine(|| sharebuf_core::run_json(&spec_json, &mut cb))
        }),
        Some(factory) => {
            let label = scheme_label.unwrap_or_else(|| "python".into());
            let failure = Arc::new(pyscheme::Failure::default());
            let res = in_engine(|| {
                SimSpec::from_json(&spec_json).and_then(|spec| {
                    let mut make = |ctx: &BmContext| -> Result<Box<dyn BufferManager>, String> { Ok(Box::new(pyscheme::PyScheme::build(py, &factory, &label, ctx, &failure)?)) };
                    let mut sim = Simulator::with_bm_factory(&spec, &mut make)?;
                    // A hook failed: stop at this check (the run's output is discarded).
                    let mut cb = |now: u64, events: u64| -> bool { !failure.is_set() && poll(py, progress.as_ref(), now, events, &mut cb_err) };
                    Ok(sim.run(&mut cb))
                })
            });
            if let Some(e) = failure.take() {
                return Err(e);
            }
            res
        }
    };
    if let Some(e) = cb_err {
        return Err(e);
    }
    match res {
        Ok(Ok(o)) => to_py(py, &o),
        Ok(Err(msg)) => Err(PyValueError::new_err(msg)),
        Err(_) => {
            let msg = LAST_PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| "(no message)".into());
            Err(EngineInternalError::new_err(format!("engine panicked: {msg}")))
        }
    }
}

/// Run `f` as engine code: its panics are caught (and recorded by the hook, not printed).
fn in_engine<T>(f: impl FnOnce() -> T) -> std::thread::Result<T> {
    IN_ENGINE.with(|x| x.set(true));
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    IN_ENGINE.with(|x| x.set(false));
    r
}

/// The engine's periodic check, with the GIL held: the progress callback if there is one, else
/// Python's signal handlers (Ctrl-C, SIGTERM stop the run within 2^18 events, not at its end).
/// False stops the run; an exception is kept in `err`.
fn poll(py: Python<'_>, progress: Option<&PyObject>, now: u64, events: u64, err: &mut Option<PyErr>) -> bool {
    let r = match progress {
        None => py.check_signals().map(|_| true),
        Some(f) => f.call1(py, (now as f64 * 1e-12, events)).map(|v| v.is_truthy(py).unwrap_or(true)),
    };
    r.unwrap_or_else(|e| {
        *err = Some(e);
        false
    })
}

/// Credence's forest evaluator (`bm::credence::Forest`) on rows of features: `model_json` as
/// written by `sharebuf train-predictor`, `x` the rows as little-endian f64, row-major with
/// `n_features` columns. Returns one byte per row (1: predict "drop"). For tests against
/// scikit-learn's `predict`.
#[pyfunction]
fn forest_predict(model_json: &str, x: &[u8]) -> PyResult<Vec<u8>> {
    let f = sharebuf_core::bm::credence::Forest::from_json(model_json).map_err(PyValueError::new_err)?;
    let nf = f.n_features;
    if nf == 0 || x.len() % (8 * nf) != 0 {
        return Err(PyValueError::new_err(format!("x: {} bytes is not a whole number of rows of {nf} f64 features", x.len())));
    }
    let vals: Vec<f64> = x.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect();
    Ok(vals.chunks_exact(nf).map(|row| f.predict(row) as u8).collect())
}

#[pyfunction]
fn schemes() -> Vec<&'static str> {
    sharebuf_core::bm::scheme_names()
}

#[pyfunction]
fn congestion_controls() -> Vec<&'static str> {
    sharebuf_core::cc::names()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(schemes, m)?)?;
    m.add_function(wrap_pyfunction!(forest_predict, m)?)?;
    m.add_function(wrap_pyfunction!(congestion_controls, m)?)?;
    m.add_class::<pyscheme::SchemeContext>()?;
    m.add_class::<pyscheme::StateView>()?;
    m.add_class::<pyscheme::PacketView>()?;
    m.add("EngineInternalError", m.py().get_type_bound::<EngineInternalError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // A hash of the engine's source files (build.rs): part of every run's key.
    m.add("ENGINE_SOURCE", env!("SHAREBUF_ENGINE_SOURCE"))?;
    Ok(())
}
