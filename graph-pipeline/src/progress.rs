//! Live progress on stderr: a redrawn line on a terminal, a line per phase otherwise (logs, CI).

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

pub struct Progress {
    start: Instant,
    tty: bool,
    quiet: bool,
    phase: Mutex<(String, u64, Instant)>,
    done: AtomicU64,
    last_draw_ms: AtomicU64,
}

impl Progress {
    pub fn new(quiet: bool) -> Self {
        Progress {
            start: Instant::now(),
            tty: std::io::stderr().is_terminal(),
            quiet,
            phase: Mutex::new((String::new(), 0, Instant::now())),
            done: AtomicU64::new(0),
            last_draw_ms: AtomicU64::new(0),
        }
    }

    /// Starts a phase; `total` is in the unit `advance` counts (bytes, nodes), 0 when unknown.
    pub fn phase(&self, name: &str, total: u64) {
        self.finish_phase();
        *self.phase.lock().unwrap() = (name.to_string(), total, Instant::now());
        self.done.store(0, Ordering::Relaxed);
        self.draw(true);
    }

    /// Adds a detail to the current phase's line (what took how long within it).
    pub fn detail(&self, detail: &str) {
        let mut phase = self.phase.lock().unwrap();
        phase.0 = format!("{}; {detail}", phase.0);
    }

    pub fn advance(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
        self.draw(false);
    }

    fn draw(&self, force: bool) {
        if self.quiet || !self.tty {
            return;
        }
        let now = self.start.elapsed().as_millis() as u64;
        let last = self.last_draw_ms.load(Ordering::Relaxed);
        if !force && now < last + 100 {
            return;
        }
        self.last_draw_ms.store(now, Ordering::Relaxed);
        let (name, total, _) = self.phase.lock().unwrap().clone();
        let done = self.done.load(Ordering::Relaxed);
        let pct = (done * 100)
            .checked_div(total)
            .map(|p| format!(" {:>3}%", p.min(100)))
            .unwrap_or_default();
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K  {:>6.1}s  {name}{pct}", now as f64 / 1000.0);
        let _ = err.flush();
    }

    /// Ends the current phase with a line giving its duration.
    pub fn finish_phase(&self) {
        let (name, _, started) = self.phase.lock().unwrap().clone();
        if name.is_empty() || self.quiet {
            return;
        }
        let mut err = std::io::stderr().lock();
        let clear = if self.tty { "\r\x1b[2K" } else { "" };
        let _ = writeln!(
            err,
            "{clear}  {:>6.1}s  {name} ({:.2}s)",
            self.start.elapsed().as_secs_f64(),
            started.elapsed().as_secs_f64()
        );
        self.phase.lock().unwrap().0.clear();
    }

    pub fn elapsed_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }
}

/// Peak resident memory of this process in bytes (Linux `VmHWM`), if known.
pub fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
