//! Buffer-management schemes written in Python (`scheme = "python"`, docs/schemes/python.md).
//!
//! [`PyScheme`] implements the core's `BufferManager` by calling the Python object's hooks.
//! The run holds the GIL throughout (`simulate` does not release it when a Python scheme is
//! present), so each hook call only re-enters it (`Python::with_gil` on a thread that holds the
//! GIL is a counter increment). The hooks see the switch's `BufferState` and the packet through
//! two view objects made once per switch ([`StateView`], [`PacketView`]) that borrow the Rust
//! values for the duration of one call: nothing is copied, and a view kept past its call raises.
//!
//! An exception in a hook is recorded in a [`Failure`] shared by every switch of the run; from
//! then on no Python code runs, the scheme drops every arrival, the run aborts at its next
//! progress check and `simulate` raises `sharebuf.errors.SchemeError` naming the class, the hook
//! and the packet, with the Python exception as its cause.

use pyo3::exceptions::{PyIndexError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyTuple};
use sharebuf_core::bm::{Admission, BmContext, BufferManager, BufferState, QueueRef};
use sharebuf_core::engine::Time;
use sharebuf_core::packet::{flags, Packet};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::{Arc, Mutex};

const PS_PER_S: f64 = 1e12;

/// The first error of a run's Python schemes (shared by all switches and `simulate`).
#[derive(Default)]
pub struct Failure {
    set: AtomicBool,
    err: Mutex<Option<PyErr>>,
}

impl Failure {
    #[inline]
    pub fn is_set(&self) -> bool {
        self.set.load(Ordering::Relaxed)
    }
    pub fn record(&self, e: PyErr) {
        let mut g = self.err.lock().unwrap();
        if g.is_none() {
            *g = Some(e);
        }
        self.set.store(true, Ordering::Relaxed);
    }
    pub fn take(&self) -> Option<PyErr> {
        self.err.lock().unwrap().take()
    }
}

/// What the scheme's constructor gets as `ctx`.
#[pyclass(frozen, module = "sharebuf._core", name = "SchemeContext")]
pub struct SchemeContext {
    #[pyo3(get)]
    buffer_bytes: u64,
    #[pyo3(get)]
    n_ports: usize,
    #[pyo3(get)]
    n_queues: usize,
    #[pyo3(get)]
    port_rate_bps: Vec<u64>,
    /// Largest base RTT in the network, seconds.
    #[pyo3(get)]
    base_rtt_s: f64,
    #[pyo3(get)]
    seed: u64,
    #[pyo3(get)]
    switch_index: usize,
    #[pyo3(get)]
    mss_bytes: u32,
    #[pyo3(get)]
    header_bytes: u32,
}

#[pymethods]
impl SchemeContext {
    fn __repr__(&self) -> String {
        format!(
            "SchemeContext(buffer_bytes={}, n_ports={}, n_queues={}, port_rate_bps={:?}, base_rtt_s={}, seed={}, switch_index={}, mss_bytes={}, header_bytes={})",
            self.buffer_bytes, self.n_ports, self.n_queues, self.port_rate_bps, self.base_rtt_s, self.seed, self.switch_index, self.mss_bytes, self.header_bytes
        )
    }
}

/// The switch's buffer state, borrowed for one hook call (`state` in the hooks).
#[pyclass(frozen, module = "sharebuf._core", name = "BufferState")]
pub struct StateView {
    ptr: AtomicPtr<BufferState>,
}

fn expired(what: &str) -> PyErr {
    PyRuntimeError::new_err(format!("this {what} object is only valid during the hook call that received it; copy the values you need"))
}

impl StateView {
    #[inline]
    fn st(&self) -> PyResult<&BufferState> {
        let p = self.ptr.load(Ordering::Relaxed);
        if p.is_null() {
            return Err(expired("state"));
        }
        // SAFETY: `PyScheme::views` stores a pointer to the `&BufferState` the engine lends the
        // hook and resets it to null before the hook returns to Rust; the engine does not mutate
        // the state while a hook runs (it holds the shared borrow across the call).
        Ok(unsafe { &*p })
    }
}

fn qindex(st: &BufferState, port: usize, queue: usize) -> PyResult<usize> {
    if port >= st.n_ports || queue >= st.n_queues {
        return Err(PyIndexError::new_err(format!("(port {port}, queue {queue}) out of range: {} ports, {} queues per port", st.n_ports, st.n_queues)));
    }
    Ok(port * st.n_queues + queue)
}

fn pindex(st: &BufferState, port: usize) -> PyResult<usize> {
    if port >= st.n_ports {
        return Err(PyIndexError::new_err(format!("port {port} out of range: {} ports", st.n_ports)));
    }
    Ok(port)
}

#[pymethods]
impl StateView {
    /// Total shared buffer B, bytes.
    #[getter]
    fn total_bytes(&self) -> PyResult<u64> {
        Ok(self.st()?.total_bytes)
    }
    /// Occupied bytes Q(t).
    #[getter]
    fn occupied_bytes(&self) -> PyResult<u64> {
        Ok(self.st()?.occupied_bytes)
    }
    /// Free bytes B − Q(t).
    #[getter]
    fn remaining_bytes(&self) -> PyResult<u64> {
        Ok(self.st()?.remaining_bytes())
    }
    #[getter]
    fn n_ports(&self) -> PyResult<usize> {
        Ok(self.st()?.n_ports)
    }
    #[getter]
    fn n_queues(&self) -> PyResult<usize> {
        Ok(self.st()?.n_queues)
    }
    fn queue_bytes(&self, port: usize, queue: usize) -> PyResult<u64> {
        let st = self.st()?;
        Ok(st.queue_bytes[qindex(st, port, queue)?])
    }
    fn queue_pkts(&self, port: usize, queue: usize) -> PyResult<u32> {
        let st = self.st()?;
        Ok(st.queue_pkts[qindex(st, port, queue)?])
    }
    /// Cumulative bytes dequeued (transmitted) from the queue: drain rates are deltas.
    fn deq_bytes(&self, port: usize, queue: usize) -> PyResult<u64> {
        let st = self.st()?;
        Ok(st.deq_bytes[qindex(st, port, queue)?])
    }
    fn port_bytes(&self, port: usize) -> PyResult<u64> {
        let st = self.st()?;
        Ok(st.port_bytes(pindex(st, port)?))
    }
    /// Bytes of priority (queue index) `queue` summed over ports.
    fn prio_bytes(&self, queue: usize) -> PyResult<u64> {
        let st = self.st()?;
        qindex(st, 0, queue)?;
        Ok(st.prio_bytes[queue])
    }
    fn port_rate_bps(&self, port: usize) -> PyResult<u64> {
        let st = self.st()?;
        Ok(st.port_rate_bps[pindex(st, port)?])
    }
    /// The queue's share of its port under the scheduler among its non-empty queues (FB's γ).
    fn sched_share(&self, port: usize, queue: usize) -> PyResult<f64> {
        let st = self.st()?;
        qindex(st, port, queue)?;
        Ok(st.sched_share(QueueRef { port, queue }))
    }
    /// Queues of priority `queue` (over all ports) holding at least `min_bytes` (at least 1).
    fn congested_queues(&self, queue: usize, min_bytes: u64) -> PyResult<usize> {
        let st = self.st()?;
        qindex(st, 0, queue)?;
        Ok(st.congested_queues(queue, min_bytes))
    }
}

/// The packet a hook is about, borrowed for one call (`pkt` in the hooks).
#[pyclass(frozen, module = "sharebuf._core", name = "Packet")]
pub struct PacketView {
    ptr: AtomicPtr<Packet>,
}

impl PacketView {
    #[inline]
    fn p(&self) -> PyResult<&Packet> {
        let p = self.ptr.load(Ordering::Relaxed);
        if p.is_null() {
            return Err(expired("pkt"));
        }
        // SAFETY: as `StateView::st`: valid for the hook call only, reset to null after it.
        Ok(unsafe { &*p })
    }
}

#[pymethods]
impl PacketView {
    /// Bytes the packet holds in the buffer (wire bytes, or IP payload with
    /// `buffer_accounting = "ip_payload"`), as the built-in schemes see it.
    #[getter]
    fn size_bytes(&self) -> PyResult<u32> {
        Ok(self.p()?.size_bytes)
    }
    #[getter]
    fn priority(&self) -> PyResult<u8> {
        Ok(self.p()?.prio)
    }
    /// Flow id (TCP flows and CBR flows have separate id spaces: see `flow_key`).
    #[getter]
    fn flow(&self) -> PyResult<u32> {
        Ok(self.p()?.flow)
    }
    /// A key unique to the flow and direction (data vs its ACKs; CBR flows apart).
    #[getter]
    fn flow_key(&self) -> PyResult<u64> {
        Ok(self.p()?.flow_key())
    }
    #[getter]
    fn dst(&self) -> PyResult<u32> {
        Ok(self.p()?.dst)
    }
    /// Within the first `unscheduled_bytes` of its flow.
    #[getter]
    fn unscheduled(&self) -> PyResult<bool> {
        Ok(self.p()?.has(flags::UNSCHED))
    }
    /// No payload (ACK, SYN, SYN-ACK).
    #[getter]
    fn is_control(&self) -> PyResult<bool> {
        Ok(self.p()?.is_control())
    }
    #[getter]
    fn is_cbr(&self) -> PyResult<bool> {
        Ok(self.p()?.has(flags::CBR))
    }
    /// Time the packet entered its queue, seconds (meaningful in on_enqueue, on_dequeue and
    /// on_evict; in classify/admit it is still the previous hop's).
    #[getter]
    fn enq_time_s(&self) -> PyResult<f64> {
        Ok(self.p()?.enq_ps as f64 / PS_PER_S)
    }
}

/// A Python scheme object and its bound hooks, for one switch.
pub struct PyScheme {
    label: String,
    class: String,
    switch_index: usize,
    admit: Py<PyAny>,
    classify: Option<Py<PyAny>>,
    on_enqueue: Option<Py<PyAny>>,
    on_dequeue: Option<Py<PyAny>>,
    on_evict: Option<Py<PyAny>>,
    on_tick: Option<Py<PyAny>>,
    tick_ps: Option<Time>,
    state: Py<StateView>,
    pkt: Py<PacketView>,
    failure: Arc<Failure>,
}

fn hook(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Option<Py<PyAny>>> {
    match obj.getattr(name) {
        Ok(v) if v.is_none() => Ok(None),
        Ok(v) if v.is_callable() => Ok(Some(v.unbind())),
        Ok(_) => Err(PyRuntimeError::new_err(format!("{name} is not callable"))),
        Err(_) => Ok(None),
    }
}

impl PyScheme {
    /// Build the scheme of one switch: `factory(ctx)` returns the Python object.
    /// `label` names the scheme in messages (`"module:Class"`, or the `schemes=` name).
    pub fn build(py: Python<'_>, factory: &Py<PyAny>, label: &str, ctx: &BmContext, failure: &Arc<Failure>) -> Result<PyScheme, String> {
        let c = SchemeContext {
            buffer_bytes: ctx.buffer_bytes,
            n_ports: ctx.port_rate_bps.len(),
            n_queues: ctx.n_queues,
            port_rate_bps: ctx.port_rate_bps.to_vec(),
            base_rtt_s: ctx.base_rtt_ps as f64 / PS_PER_S,
            seed: ctx.seed,
            switch_index: ctx.switch_index,
            mss_bytes: ctx.mss_bytes,
            header_bytes: ctx.header_bytes,
        };
        let key = "switch.bm";
        let obj = match factory.call1(py, (c,)) {
            Ok(o) => o.into_bound(py),
            Err(e) => {
                // A configuration error (a parameter value the class refuses, most often):
                // sharebuf.ScenarioError, with the exception as its cause.
                let msg = format!("{key}: python scheme '{label}': the constructor raised {} (switch {})", describe(py, &e), ctx.switch_index);
                failure.record(error_of(py, "ScenarioError", &msg, e));
                return Err(msg);
            }
        };
        let class = obj.get_type().qualname().map(|s| s.to_string()).unwrap_or_else(|_| label.to_string());
        let bad = |m: String| format!("{key}: python scheme '{label}' (class {class}): {m}");
        let admit = hook(&obj, "admit").map_err(|e| bad(e.to_string()))?.ok_or_else(|| bad("no admit(state, port, queue, pkt, now_s) method".into()))?;
        let get = |n: &str| hook(&obj, n).map_err(|e| bad(e.to_string()));
        let (classify, on_enqueue, on_dequeue, on_evict, on_tick) = (get("classify")?, get("on_enqueue")?, get("on_dequeue")?, get("on_evict")?, get("on_tick")?);
        let tick_ps = match (&on_tick, obj.getattr("tick_interval_s")) {
            (None, _) => None,
            (Some(_), Ok(v)) => {
                let s: f64 = v.extract().map_err(|_| bad(format!("tick_interval_s = {v}: must be a number of seconds > 0")))?;
                let ps = (s * PS_PER_S).round();
                if !(ps >= 1.0 && ps.is_finite()) {
                    return Err(bad(format!("tick_interval_s = {s}: must be > 0 (and at least 1 ps)")));
                }
                Some(ps as Time)
            }
            (Some(_), Err(_)) => return Err(bad("on_tick is defined but tick_interval_s (seconds, > 0) is not".into())),
        };
        let state = Py::new(py, StateView { ptr: AtomicPtr::new(null_mut()) }).map_err(|e| e.to_string())?;
        let pkt = Py::new(py, PacketView { ptr: AtomicPtr::new(null_mut()) }).map_err(|e| e.to_string())?;
        Ok(PyScheme { label: label.into(), class, switch_index: ctx.switch_index, admit, classify, on_enqueue, on_dequeue, on_evict, on_tick, tick_ps, state, pkt, failure: failure.clone() })
    }

    /// Lend `st` and `pkt` to the views for the duration of `f`.
    #[inline]
    fn views<R>(&self, py: Python<'_>, st: &BufferState, pkt: Option<&Packet>, f: impl FnOnce(&Bound<'_, StateView>, &Bound<'_, PacketView>) -> R) -> R {
        let (sv, pv) = (self.state.bind(py), self.pkt.bind(py));
        sv.get().ptr.store(st as *const BufferState as *mut BufferState, Ordering::Relaxed);
        if let Some(p) = pkt {
            pv.get().ptr.store(p as *const Packet as *mut Packet, Ordering::Relaxed);
        }
        let r = f(sv, pv);
        sv.get().ptr.store(null_mut(), Ordering::Relaxed);
        pv.get().ptr.store(null_mut(), Ordering::Relaxed);
        r
    }

    /// Record the failure of `hook` on `pkt` in queue `q` (None: a tick).
    #[cold]
    fn fail(&self, py: Python<'_>, hook: &str, q: Option<QueueRef>, pkt: Option<&Packet>, now: Time, e: PyErr) {
        let what = describe(py, &e);
        let at = match (q, pkt) {
            (Some(q), Some(p)) => format!("switch {}, port {}, queue {}, flow {}, size {} B", self.switch_index, q.port, q.queue, p.flow, p.size_bytes),
            _ => format!("switch {}", self.switch_index),
        };
        let msg = format!("python scheme '{}': {}.{} raised {what} ({at}, t = {:.9} s); the run was stopped and no output written", self.label, self.class, hook, now as f64 / PS_PER_S);
        self.failure.record(error_of(py, "SchemeError", &msg, e));
    }

    #[cold]
    fn fail_msg(&self, py: Python<'_>, hook: &str, q: Option<QueueRef>, pkt: Option<&Packet>, now: Time, msg: String) {
        self.fail(py, hook, q, pkt, now, PyRuntimeError::new_err(msg));
    }
}

/// "ExceptionType: message".
fn describe(py: Python<'_>, e: &PyErr) -> String {
    match e.get_type_bound(py).qualname() {
        Ok(n) => format!("{n}: {}", e.value_bound(py)),
        Err(_) => e.value_bound(py).to_string(),
    }
}

/// `sharebuf.errors.<class>(msg)` with `cause` as its `__cause__`.
fn error_of(py: Python<'_>, class: &str, msg: &str, cause: PyErr) -> PyErr {
    let e = match py.import_bound("sharebuf.errors").and_then(|m| m.getattr(class)).and_then(|c| c.call1((msg,))) {
        Ok(v) => PyErr::from_value_bound(v),
        Err(_) => PyRuntimeError::new_err(msg.to_string()),
    };
    e.set_cause(py, Some(cause));
    e
}

#[inline]
fn now_s(now: Time) -> f64 {
    now as f64 / PS_PER_S
}

impl BufferManager for PyScheme {
    fn name(&self) -> &'static str {
        "python"
    }

    fn classifies(&self) -> bool {
        self.classify.is_some()
    }

    fn classify(&mut self, st: &BufferState, port: usize, pkt: &Packet, default_queue: usize, now: Time) -> usize {
        let Some(f) = &self.classify else { return default_queue };
        if self.failure.is_set() {
            return default_queue;
        }
        Python::with_gil(|py| {
            let r = self.views(py, st, Some(pkt), |sv, pv| f.call1(py, (sv, port, pv, default_queue, now_s(now))).and_then(|r| r.extract::<usize>(py)));
            let q = QueueRef { port, queue: default_queue };
            match r {
                Ok(x) if x < st.n_queues => x,
                Ok(x) => {
                    self.fail_msg(py, "classify", Some(q), Some(pkt), now, format!("returned queue {x}; allowed 0..{}", st.n_queues - 1));
                    default_queue
                }
                Err(e) => {
                    self.fail(py, "classify", Some(q), Some(pkt), now, e);
                    default_queue
                }
            }
        })
    }

    fn admit(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) -> Admission {
        if self.failure.is_set() {
            return Admission::Drop;
        }
        Python::with_gil(|py| {
            let r = self.views(py, st, Some(pkt), |sv, pv| self.admit.call1(py, (sv, q.port, q.queue, pv, now_s(now))));
            let r = match r {
                Ok(r) => r.into_bound(py),
                Err(e) => {
                    self.fail(py, "admit", Some(q), Some(pkt), now, e);
                    return Admission::Drop;
                }
            };
            if let Ok(b) = r.downcast::<PyBool>() {
                return if b.is_true() { Admission::Accept } else { Admission::Drop };
            }
            if let Ok(t) = r.downcast::<PyTuple>() {
                if let Ok((port, queue)) = t.extract::<(usize, usize)>() {
                    if port < st.n_ports && queue < st.n_queues {
                        return Admission::PushOut(QueueRef { port, queue });
                    }
                }
            } else if !r.is_none() {
                if let Ok(b) = r.is_truthy() {
                    return if b { Admission::Accept } else { Admission::Drop };
                }
            }
            let m = format!(
                "returned {}; allowed: True (admit), False (drop) or PushOut(port, queue) with port < {} and queue < {}",
                r.repr().map(|s| s.to_string()).unwrap_or_default(),
                st.n_ports,
                st.n_queues
            );
            self.fail_msg(py, "admit", Some(q), Some(pkt), now, m);
            Admission::Drop
        })
    }

    fn uses_queue_hooks(&self) -> bool {
        self.on_enqueue.is_some() || self.on_dequeue.is_some() || self.on_evict.is_some()
    }

    fn on_enqueue(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) {
        let Some(f) = &self.on_enqueue else { return };
        if self.failure.is_set() {
            return;
        }
        Python::with_gil(|py| {
            if let Err(e) = self.views(py, st, Some(pkt), |sv, pv| f.call1(py, (sv, q.port, q.queue, pv, now_s(now)))) {
                self.fail(py, "on_enqueue", Some(q), Some(pkt), now, e);
            }
        })
    }

    fn on_dequeue(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) -> bool {
        let Some(f) = &self.on_dequeue else { return true };
        if self.failure.is_set() {
            return true;
        }
        Python::with_gil(|py| {
            let r = self.views(py, st, Some(pkt), |sv, pv| f.call1(py, (sv, q.port, q.queue, pv, now_s(now))).and_then(|r| if r.is_none(py) { Ok(true) } else { r.is_truthy(py) }));
            r.unwrap_or_else(|e| {
                self.fail(py, "on_dequeue", Some(q), Some(pkt), now, e);
                true
            })
        })
    }

    fn on_evict(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) {
        if self.on_evict.is_none() {
            // As the Rust trait: forwarded to on_dequeue, whose verdict is moot.
            let _ = self.on_dequeue(st, q, pkt, now);
            return;
        }
        if self.failure.is_set() {
            return;
        }
        let f = self.on_evict.as_ref().unwrap();
        Python::with_gil(|py| {
            if let Err(e) = self.views(py, st, Some(pkt), |sv, pv| f.call1(py, (sv, q.port, q.queue, pv, now_s(now)))) {
                self.fail(py, "on_evict", Some(q), Some(pkt), now, e);
            }
        })
    }

    fn tick_interval_ps(&self) -> Option<Time> {
        self.tick_ps
    }

    fn on_tick(&mut self, st: &BufferState, now: Time) {
        let Some(f) = &self.on_tick else { return };
        if self.failure.is_set() {
            return;
        }
        Python::with_gil(|py| {
            if let Err(e) = self.views(py, st, None, |sv, _| f.call1(py, (sv, now_s(now)))) {
                self.fail(py, "on_tick", None, None, now, e);
            }
        })
    }
}
