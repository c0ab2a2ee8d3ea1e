//! How runs share the cores, decided without I/O: in which order runs start, when one may
//! start, and into how many runs each batch gate's files are split. The costs it works from
//! are estimates (`costs.rs` learns them from past runs); no verdict depends on them, only
//! how soon it is known.

/// What a run is expected to cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    /// Wall time, in milliseconds.
    pub wall_ms: f64,
    /// The cores it keeps busy on average (CPU time / wall time), at least 1: a whole-project
    /// run (tsc, cargo) may use several.
    pub cores: f64,
    /// A whole-project run: started before every run of a batch, whatever the estimates say
    /// (nearly always the long pole, and never divisible).
    pub whole: bool,
}

impl Default for Cost {
    fn default() -> Self {
        Self {
            wall_ms: 0.0,
            cores: 1.0,
            whole: false,
        }
    }
}

impl Cost {
    /// The cores this run is counted at on a pool of `slots`.
    pub fn counted(&self, slots: usize) -> f64 {
        self.cores.clamp(1.0, slots.max(1) as f64)
    }
}

/// The order runs start in: whole-project runs first, then longest expected first; ties
/// keep the given order.
pub fn order(costs: &[Cost]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..costs.len()).collect();
    idx.sort_by(|&a, &b| {
        let (x, y) = (&costs[a], &costs[b]);
        y.whole
            .cmp(&x.whole)
            .then(y.wall_ms.total_cmp(&x.wall_ms))
            .then(a.cmp(&b))
    });
    idx
}

/// Whether another run may start while runs counted at `busy` cores run on `slots`: only
/// while a core is not yet claimed, so the cores stay full and are never oversubscribed by
/// runs that each use one.
pub fn may_start(busy: f64, slots: usize) -> bool {
    busy < slots.max(1) as f64 - 1e-9
}

/// The time `costs` take on `slots` when started in [`order`] under [`may_start`]: the
/// simulated finish, or the CPU time divided by the cores when that is longer (runs that
/// share a core share its time).
pub fn makespan(costs: &[Cost], slots: usize) -> f64 {
    let mut running: Vec<(f64, f64)> = Vec::new(); // (ends at, cores counted)
    let (mut now, mut end) = (0.0_f64, 0.0_f64);
    for i in order(costs) {
        let c = &costs[i];
        loop {
            let busy: f64 = running.iter().map(|r| r.1).sum();
            if may_start(busy, slots) {
                break;
            }
            // The next run to end frees its cores.
            let (at, pos) = running
                .iter()
                .enumerate()
                .map(|(p, r)| (r.0, p))
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .expect("a busy pool has a run");
            now = now.max(at);
            running.swap_remove(pos);
        }
        let ends = now + c.wall_ms;
        end = end.max(ends);
        running.push((ends, c.counted(slots)));
    }
    let cpu: f64 = costs.iter().map(|c| c.wall_ms * c.counted(slots)).sum();
    end.max(cpu / slots.max(1) as f64)
}

/// A batch gate's files, as the split sees them.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// What starting one more process costs (ms).
    pub start_ms: f64,
    /// What checking all the files costs, start-up aside (ms).
    pub work_ms: f64,
    /// The most runs it may be split into (its file count, at most twice the slots).
    pub max_parts: usize,
    /// The split chosen last time, kept unless another is clearly faster (a stable split
    /// keeps the stored results of the unchanged runs usable).
    pub previous: Option<usize>,
    /// The estimate rests on runs of different sizes. One that does not (the first run's
    /// guess, or runs all of one size) cannot tell start-up from work, so it never overturns
    /// the previous split: that would only trade stored results for a guess.
    pub sure: bool,
}

impl Batch {
    /// The split chosen last time, where it is still one this batch can take.
    fn usable_previous(&self) -> Option<usize> {
        self.previous
            .filter(|&p| p >= 1 && p <= self.max_parts.max(1))
    }

    fn runs(&self, parts: usize) -> impl Iterator<Item = Cost> + '_ {
        let each = self.start_ms + self.work_ms / parts as f64;
        (0..parts).map(move |_| Cost {
            wall_ms: each,
            ..Cost::default()
        })
    }
}

/// How much faster another split must be expected to finish to replace the last one.
const KEEP_WITHIN: f64 = 1.05;
/// How much faster one more run must make the whole to be worth its start-up.
const GAIN: f64 = 0.98;
/// The least a split must gain (ms): less goes unnoticed, and costs another process, another
/// stored result, and a split that noise can change from run to run.
const MIN_GAIN_MS: f64 = 10.0;

/// The batch a step of [`split`] gave one more run.
fn changed(before: &[usize], after: &[usize]) -> usize {
    before
        .iter()
        .zip(after)
        .position(|(a, b)| a != b)
        .expect("a step changes one batch")
}

/// Into how many runs each batch is split, given the runs that cannot be split (`fixed`) and
/// the `slots`: from one run each, a batch gains a run while that is expected to finish the
/// whole sooner, the gate gaining most first; the previous split stays unless the new one is
/// more than 5% faster, and always while a batch's estimate is not [`Batch::sure`].
pub fn split(fixed: &[Cost], batches: &[Batch], slots: usize) -> Vec<usize> {
    let total = |parts: &[usize]| -> f64 {
        let mut all = fixed.to_vec();
        for (b, &n) in batches.iter().zip(parts) {
            all.extend(b.runs(n));
        }
        makespan(&all, slots)
    };
    let kept = |b: &Batch| b.usable_previous().filter(|_| !b.sure);
    let mut parts: Vec<usize> = batches.iter().map(|b| kept(b).unwrap_or(1)).collect();
    let mut best = total(&parts);
    loop {
        let step = (0..batches.len())
            .filter(|&g| kept(&batches[g]).is_none() && parts[g] < batches[g].max_parts.max(1))
            .map(|g| {
                let mut tried = parts.clone();
                tried[g] += 1;
                (total(&tried), tried)
            })
            .min_by(|a, b| a.0.total_cmp(&b.0));
        match step {
            // Worth it only when the whole ends sooner by more than noise, and by at least
            // half of what the extra process costs the cores (work others may need).
            Some((t, tried))
                if t < best * GAIN
                    && best - t
                        >= (batches[changed(&parts, &tried)].start_ms / 2.0).max(MIN_GAIN_MS) =>
            {
                (best, parts) = (t, tried)
            }
            _ => break,
        }
    }
    let previous: Option<Vec<usize>> = batches.iter().map(Batch::usable_previous).collect();
    match previous {
        Some(p) if p != parts && total(&p) <= best * KEEP_WITHIN => p,
        _ => parts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(wall_ms: f64) -> Cost {
        Cost {
            wall_ms,
            ..Cost::default()
        }
    }

    fn batch(start_ms: f64, work_ms: f64) -> Batch {
        Batch {
            start_ms,
            work_ms,
            max_parts: 4,
            previous: None,
            sure: true,
        }
    }

    #[test]
    fn whole_project_runs_start_first_then_the_longest() {
        let whole = Cost {
            wall_ms: 10.0,
            cores: 1.6,
            whole: true,
        };
        assert_eq!(
            order(&[run(5.0), run(50.0), whole, run(50.0)]),
            [2, 1, 3, 0]
        );
    }

    #[test]
    fn the_pool_never_takes_a_run_past_its_cores() {
        assert!(may_start(0.0, 2) && may_start(1.0, 2) && may_start(1.6, 2));
        assert!(!may_start(2.0, 2) && !may_start(2.6, 2));
        // Two one-core runs on two cores, then the third: 100 + 100.
        assert_eq!(makespan(&[run(100.0), run(100.0), run(100.0)], 2), 200.0);
        // A run that keeps both cores busy runs alone.
        let both = Cost {
            wall_ms: 100.0,
            cores: 2.0,
            whole: true,
        };
        assert_eq!(makespan(&[both, run(50.0), run(50.0)], 2), 150.0);
    }

    #[test]
    fn longest_first_fills_both_cores() {
        // 160 beside 100 + 60, not 100 + 60 first and 160 after.
        assert_eq!(makespan(&[run(60.0), run(100.0), run(160.0)], 2), 160.0);
    }

    #[test]
    fn an_interpreter_that_starts_slowly_is_not_split_when_the_cores_are_full() {
        // py_compile (40 ms to start, 120 ms of files) beside ShellCheck (2 ms, 158 ms): one
        // run each fills both cores; splitting either only adds start-ups.
        assert_eq!(
            split(&[], &[batch(40.0, 120.0), batch(2.0, 158.0)], 2),
            [1, 1]
        );
    }

    #[test]
    fn a_lone_batch_is_split_over_the_cores() {
        assert_eq!(split(&[], &[batch(20.0, 400.0)], 2), [2]);
        assert_eq!(split(&[], &[batch(20.0, 4000.0)], 4), [4]);
        // Work smaller than its start-up is not worth a second process.
        assert_eq!(split(&[], &[batch(40.0, 10.0)], 2), [1]);
        // Nor a gain too small to notice.
        assert_eq!(split(&[], &[batch(0.0, 16.0)], 2), [1]);
    }

    #[test]
    fn batches_fill_the_core_a_long_project_run_leaves() {
        // tsc for 1600 ms on one core: the batch runs beside it, unsplit.
        let tsc = Cost {
            wall_ms: 1600.0,
            cores: 1.0,
            whole: true,
        };
        assert_eq!(split(&[tsc], &[batch(40.0, 300.0)], 2), [1]);
        // A short project run: the batch takes both cores once it is done.
        let short = Cost {
            wall_ms: 100.0,
            ..tsc
        };
        assert_eq!(split(&[short], &[batch(10.0, 2000.0)], 2), [2]);
    }

    #[test]
    fn the_last_split_stays_unless_another_is_clearly_faster() {
        let mut b = batch(20.0, 400.0);
        b.previous = Some(3);
        // 2 runs take 220 ms, the previous 3 would take 306 (the third waits for a core):
        // more than 5% slower, so the previous split goes.
        assert_eq!(split(&[], std::slice::from_ref(&b), 2), [2]);
        b.previous = Some(2);
        assert_eq!(split(&[], &[b.clone()], 2), [2]);
        // Within 5%: kept.
        let mut c = batch(1.0, 400.0);
        c.previous = Some(4);
        assert_eq!(split(&[], &[c], 2), [4]);
    }

    #[test]
    fn a_split_never_exceeds_the_files() {
        let mut b = batch(0.0, 1000.0);
        b.max_parts = 1;
        assert_eq!(split(&[], &[b], 8), [1]);
    }
}
