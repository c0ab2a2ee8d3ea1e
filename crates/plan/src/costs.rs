//! What runs cost, learned from every run that was not served from the cache and kept in
//! `.ralph/costs.json`: for each gate, its recent file runs (how much they checked, how long
//! they took), the cores they used and the split chosen last; for each whole-project run
//! (a tsconfig, a workspace), its wall time and cores. Only the scheduler reads it: a forged
//! or damaged file can make a check slower, never change a verdict, and every value read is
//! bounded.

use crate::schedule::{Batch, Cost};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Start-up assumed for a gate never seen (ms): about what an interpreter takes to start.
const START_MS: f64 = 32.0;
/// The share of its fastest run taken as start-up while a gate's runs all had one size: a
/// cautious guess (splitting then looks costly), so a split changes only on evidence, and
/// the stored results of a stable split keep serving.
const START_SHARE: f64 = 0.8;
/// Cost of a KiB of files assumed for a gate never seen (ms); a file counts at least 1 KiB
/// (see [`kib`]). Not higher: a python process costs 60-90 ms of CPU to start here, so a new
/// clone's 300 small .py files split beside 80 scripts took the same wall time as one run
/// each, for 40% more CPU (measured at 1.0 ms).
const MS_PER_KIB: f64 = 0.5;
/// Wall time assumed for a whole-project run never seen (ms): long, so it starts first and
/// the batches are split to run beside it.
const WHOLE_MS: f64 = 1000.0;
/// Recent runs kept per gate.
const SAMPLES: usize = 12;
/// No estimate goes past a day, whatever the file says.
const MAX_MS: f64 = 86_400_000.0;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Costs {
    #[serde(default)]
    gates: BTreeMap<String, GateCost>,
    #[serde(default)]
    runs: BTreeMap<String, RunCost>,
    #[serde(skip)]
    changed: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct GateCost {
    /// Recent runs of its files: (KiB of files, wall ms), oldest first.
    #[serde(default)]
    samples: Vec<(f64, f64)>,
    #[serde(default)]
    cores: Option<f64>,
    #[serde(default)]
    split: Option<usize>,
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
struct RunCost {
    wall_ms: f64,
    #[serde(default)]
    cores: Option<f64>,
}

/// One finished run, as the costs learn from it.
pub struct Ran<'a> {
    pub gate: &'a str,
    /// `Some(identity)` for a whole-project run, `None` for a run of files.
    pub whole: Option<String>,
    pub kib: f64,
    pub wall_ms: f64,
    pub cpu_ms: Option<f64>,
}

/// A file's share of a run's work, in KiB: its size rounded up to a power of two (a tool's
/// time grows with what it reads; rounding keeps a split stable while a file grows a little).
pub fn kib(size: u64) -> f64 {
    (size + 512).next_power_of_two() as f64 / 1024.0
}

/// The identity of a whole-project run: its gate, folder and label.
pub fn whole_id(gate: &str, dir: &Path, label: Option<&str>) -> String {
    format!("{gate}\u{0}{}\u{0}{}", dir.display(), label.unwrap_or(""))
}

fn sane(x: f64) -> Option<f64> {
    (x.is_finite() && x >= 0.0).then_some(x.min(MAX_MS))
}

fn sane_cores(c: Option<f64>) -> f64 {
    c.filter(|c| c.is_finite())
        .unwrap_or(1.0)
        .clamp(1.0, 1024.0)
}

/// The fastest run of each size (KiB) seen at least twice. Noise only ever adds time, so the
/// fastest is the truest; a size seen once may be all noise (one run on a busy machine), and
/// a line through it would read that noise as work per KiB.
fn settled_sizes(samples: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut by_size: Vec<(f64, f64, usize)> = Vec::new(); // (KiB, fastest ms, runs)
    for &(k, ms) in samples {
        match by_size.iter_mut().find(|s| s.0 == k) {
            Some(s) => (s.1, s.2) = (s.1.min(ms), s.2 + 1),
            None => by_size.push((k, ms, 1)),
        }
    }
    by_size
        .into_iter()
        .filter(|s| s.2 >= 2)
        .map(|s| (s.0, s.1))
        .collect()
}

/// `(start-up, rate)` by least squares through `points`, when their sizes are at least 1.5
/// times apart (closer sizes tell noise more than rate); the start-up at most `fastest`.
fn fit(points: &[(f64, f64)], fastest: f64) -> Option<(f64, f64)> {
    let (lo, hi) = points.iter().fold((f64::MAX, 0.0_f64), |(lo, hi), p| {
        (lo.min(p.0), hi.max(p.0))
    });
    if points.len() < 2 || hi < lo * 1.5 {
        return None;
    }
    let n = points.len() as f64;
    let mk = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mm = points.iter().map(|p| p.1).sum::<f64>() / n;
    let cov: f64 = points.iter().map(|p| (p.0 - mk) * (p.1 - mm)).sum();
    let var: f64 = points.iter().map(|p| (p.0 - mk).powi(2)).sum();
    let rate = (cov / var).max(0.0);
    Some(((mm - rate * mk).clamp(0.0, fastest), rate))
}

impl Costs {
    fn path(root: &Path) -> PathBuf {
        ralph_base::state::Layout::at(root).costs()
    }

    /// The costs learned in the project at `root`; none when the file is missing or damaged.
    pub fn load(root: &Path) -> Self {
        std::fs::read(Self::path(root))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// Writes what was learned, if anything was (whole, atomically; a failure only loses
    /// what was learned).
    pub fn save(&self, root: &Path) {
        if self.changed {
            if let Ok(bytes) = serde_json::to_vec(self) {
                let _ = ralph_base::atomic::write(&Self::path(root), &bytes);
            }
        }
    }

    /// `(start-up ms, ms per KiB)` of `gate`'s file runs: a line through the fastest run of
    /// each size seen at least twice, when there are such sizes far enough apart; else most of
    /// its fastest run taken as start-up, the rest as rate.
    fn model(&self, gate: &str) -> (f64, f64) {
        self.fitted(gate).0
    }

    /// [`Costs::model`], and whether it rests on a line through runs of different sizes: a
    /// model of runs of one size cannot tell start-up from work.
    fn fitted(&self, gate: &str) -> ((f64, f64), bool) {
        let samples: Vec<(f64, f64)> = self
            .gates
            .get(gate)
            .map(|g| {
                g.samples
                    .iter()
                    .filter_map(|&(k, ms)| Some((sane(k)?, sane(ms)?)))
                    .filter(|&(k, _)| k > 0.0)
                    .collect()
            })
            .unwrap_or_default();
        if samples.is_empty() {
            return ((START_MS, MS_PER_KIB), false);
        }
        let fastest = samples.iter().map(|s| s.1).fold(f64::MAX, f64::min);
        if let Some(fit) = fit(&settled_sizes(&samples), fastest) {
            return (fit, true);
        }
        // The fastest run alone: slower runs of the same size differ by noise (a busy
        // machine), and reading that noise as work per KiB would make a split look worth it.
        let mk = samples.iter().map(|s| s.0).sum::<f64>() / samples.len() as f64;
        let start = fastest * START_SHARE;
        ((start, (fastest - start) / mk), false)
    }

    /// What a run of `gate` over `kib` KiB of files is expected to cost.
    pub fn files_run(&self, gate: &str, kib: f64) -> Cost {
        let (start, rate) = self.model(gate);
        Cost {
            wall_ms: start + rate * kib,
            cores: sane_cores(self.gates.get(gate).and_then(|g| g.cores)),
            whole: false,
        }
    }

    /// What the whole-project run `id` is expected to cost.
    pub fn whole_run(&self, id: &str) -> Cost {
        let known = self.runs.get(id);
        Cost {
            wall_ms: known.and_then(|r| sane(r.wall_ms)).unwrap_or(WHOLE_MS),
            cores: sane_cores(known.and_then(|r| r.cores)),
            whole: true,
        }
    }

    /// A batch gate's files as [`crate::schedule::split`] weighs them.
    pub fn batch(&self, gate: &str, kib: f64, files: usize, slots: usize) -> Batch {
        let ((start, rate), sure) = self.fitted(gate);
        Batch {
            start_ms: start,
            work_ms: rate * kib,
            max_parts: files.min(2 * slots.max(1)).max(1),
            previous: self.previous_split(gate),
            sure,
        }
    }

    /// The split chosen for `gate` last time.
    pub fn previous_split(&self, gate: &str) -> Option<usize> {
        self.gates.get(gate).and_then(|g| g.split)
    }

    /// Remembers the split chosen for `gate`.
    pub fn chose(&mut self, gate: &str, parts: usize) {
        let g = self.gates.entry(gate.to_string()).or_default();
        if g.split != Some(parts) {
            g.split = Some(parts);
            self.changed = true;
        }
    }

    /// Learns from one finished run.
    pub fn learn(&mut self, ran: &Ran<'_>) {
        let Some(wall) = sane(ran.wall_ms) else {
            return;
        };
        let cores = ran
            .cpu_ms
            .and_then(sane)
            .filter(|_| wall > 0.0)
            .map(|cpu| cpu / wall);
        let blend = |old: Option<f64>, new: f64| old.map_or(new, |o| (o + new) / 2.0);
        match &ran.whole {
            Some(id) => {
                let r = self.runs.entry(id.clone()).or_default();
                r.wall_ms = if r.wall_ms > 0.0 {
                    (r.wall_ms + wall) / 2.0
                } else {
                    wall
                };
                if let Some(c) = cores {
                    r.cores = Some(blend(r.cores, c));
                }
            }
            None => {
                let g = self.gates.entry(ran.gate.to_string()).or_default();
                g.samples.push((ran.kib, wall));
                let extra = g.samples.len().saturating_sub(SAMPLES);
                g.samples.drain(..extra);
                if let Some(c) = cores {
                    g.cores = Some(blend(g.cores, c));
                }
            }
        }
        self.changed = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(gate: &str, kib: f64, wall_ms: f64) -> Ran<'_> {
        Ran {
            gate,
            whole: None,
            kib,
            wall_ms,
            cpu_ms: None,
        }
    }

    #[test]
    fn start_up_and_rate_are_fitted_from_runs_of_different_sizes() {
        let mut c = Costs::default();
        // Two runs of each size (as a split gives); the slower of each is noise.
        for (kib, ms) in [
            (150.0, 100.0),
            (150.0, 130.0),
            (300.0, 165.0),
            (300.0, 190.0),
        ] {
            c.learn(&files("py", kib, ms));
        }
        let (start, rate) = c.model("py");
        assert!((start - 35.0).abs() < 0.01 && (rate - 65.0 / 150.0).abs() < 1e-9);
        assert!((c.files_run("py", 300.0).wall_ms - 165.0).abs() < 0.01);
    }

    #[test]
    fn a_size_seen_once_is_not_read_as_work_per_kib() {
        // A tiny gate that ran quickly on one file, then once slowly on two (a busy
        // machine): not a rate of 27 ms per KiB, which would split two files into two runs.
        let mut c = Costs::default();
        for ms in [3.0, 2.5, 3.2] {
            c.learn(&files("g", 1.0, ms));
        }
        c.learn(&files("g", 2.0, 30.0));
        let b = c.batch("g", 2.0, 2, 2);
        assert_eq!(crate::schedule::split(&[], &[b], 2), [1]);
    }

    #[test]
    fn runs_of_one_size_are_taken_as_mostly_start_up() {
        let mut c = Costs::default();
        assert_eq!(c.model("sc"), (START_MS, MS_PER_KIB));
        c.learn(&files("sc", 80.0, 160.0));
        let (start, rate) = c.model("sc");
        assert!((start - 128.0).abs() < 1e-9 && (rate - 32.0 / 80.0).abs() < 1e-9);
        // So a gate seen once is not split on a guess: two runs would not finish sooner.
        let b = c.batch("sc", 80.0, 80, 2);
        assert_eq!(crate::schedule::split(&[], &[b], 2), [1]);
        // Nor once a busy machine made a run of the same size slower.
        c.learn(&files("sc", 80.0, 800.0));
        assert!((c.model("sc").1 - 32.0 / 80.0).abs() < 1e-9);
        let b = c.batch("sc", 80.0, 80, 2);
        assert_eq!(crate::schedule::split(&[], &[b], 2), [1]);
    }

    #[test]
    fn runs_of_one_size_never_overturn_the_split_they_were_run_in() {
        // py ran in two runs, sc in one. Runs all of one size cannot tell start-up from
        // work: read as mostly start-up, one py run would look faster, and the next plan
        // would trade every stored result for that guess. It keeps the split instead.
        let mut c = Costs::default();
        c.chose("py", 2);
        c.chose("sc", 1);
        for (gate, kib, ms) in [
            ("py", 150.0, 140.0),
            ("py", 150.0, 141.0),
            ("sc", 80.0, 100.0),
        ] {
            c.learn(&files(gate, kib, ms));
        }
        let next = [c.batch("py", 300.0, 300, 2), c.batch("sc", 80.0, 80, 2)];
        assert!(next.iter().all(|b| !b.sure));
        assert_eq!(crate::schedule::split(&[], &next, 2), [2, 1]);
        // Runs of another size make the estimate sure, and it may then choose again.
        for _ in 0..2 {
            c.learn(&files("py", 10.0, 40.0));
        }
        assert!(c.batch("py", 300.0, 300, 2).sure);
    }

    #[test]
    fn whole_runs_keep_their_wall_time_and_cores() {
        let mut c = Costs::default();
        let id = whole_id("tsc", Path::new("web"), None);
        assert_eq!(c.whole_run(&id).wall_ms, WHOLE_MS);
        c.learn(&Ran {
            gate: "tsc",
            whole: Some(id.clone()),
            kib: 0.0,
            wall_ms: 1600.0,
            cpu_ms: Some(2560.0),
        });
        let cost = c.whole_run(&id);
        assert_eq!((cost.wall_ms, cost.cores, cost.whole), (1600.0, 1.6, true));
    }

    #[test]
    fn a_forged_or_damaged_file_gives_bounded_estimates() {
        let dir = tempfile::tempdir().unwrap();
        let path = Costs::path(dir.path());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"{not json").unwrap();
        assert!(Costs::load(dir.path()).gates.is_empty());
        std::fs::write(
            &path,
            br#"{"gates":{"g":{"samples":[[-1,5],[1e308,1e308],[2,-3]],"cores":-7,"split":0}},
                "runs":{"r":{"wall_ms":1e300,"cores":1e9}}}"#,
        )
        .unwrap();
        let c = Costs::load(dir.path());
        let run = c.files_run("g", 10.0);
        assert!(run.wall_ms.is_finite() && run.cores == 1.0, "{run:?}");
        let whole = c.whole_run("r");
        assert!(
            whole.wall_ms <= MAX_MS && whole.cores <= 1024.0,
            "{whole:?}"
        );
        let b = c.batch("g", 10.0, 3, 2);
        assert!(b.start_ms.is_finite() && b.work_ms.is_finite() && b.max_parts == 3);
    }
}
