//! Which runs of a gate read which files of the project besides the ones they were for, as
//! their runs were observed to: an edit to `lib/lib.go` re-runs `app`'s `go vet` too, when
//! `app` (through `go.work` or a `replace`) read it last time; an edit to a sourced `lib.sh`
//! re-runs ShellCheck on the scripts whose run read it; an edit to a `.js` file a tsconfig
//! checks through `checkJs` re-runs that project's tsc. The edit hook and `check --staged`
//! / `--changed` choose runs by this as well as by the gates' globs. One small file per
//! (gate, folder, files of the run), written whole after each observed run that read such a
//! file; reading them only adds runs, never removes one, so a damaged or forged file costs
//! at most a needless run.

use crate::observe::Input;
use ralph_base::state::Layout;
use std::path::{Path, PathBuf};

/// The empty file a gate's folder holds once a run of it has been observed here (never
/// taken for a run's record: it has no folder line).
const HEARD: &str = "heard";

/// A run whose last observation read a file asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    /// Its folder, relative to the project root.
    pub dir: PathBuf,
    /// The files it was for (relative to the root), or none for a run of a whole folder
    /// (a `project` gate), which any of the folder's files plans.
    pub files: Vec<PathBuf>,
}

/// Records that `gate`'s run in `dir` for `files` (none: the whole folder) read `inputs`: the
/// files of the project among them that do not plan it already (`plans`: its own files, or
/// for a whole folder's run the folder's files the gate's globs match). Paths a run looked
/// for and did not find count (a `conftest.py` or `.python-version` made later changes what
/// it does).
pub fn record(
    root: &Path,
    gate: &str,
    (dir, files): (&Path, &[PathBuf]),
    plans: &dyn Fn(&Path) -> bool,
    inputs: &[Input],
) {
    told(root, gate);
    let files_read = inputs
        .iter()
        .filter(|i| i.seen.starts_with("f:") || i.seen == "absent");
    let mut read: Vec<String> = names(root, files_read)
        .into_iter()
        // A file beside the project (`../shared/x.py`) never plans a run by its globs,
        // whatever its name: `*.py` matches it, but no selection of the project holds it.
        .filter(|p| !p.contains('\n') && (p.starts_with("../") || !plans(Path::new(p))))
        .collect();
    read.sort();
    read.dedup();
    let path = file(root, gate, dir, files);
    if read.is_empty() {
        let _ = std::fs::remove_file(path);
        return;
    }
    // One path a line: a name holding a line break could forge another (it costs a run
    // at most, but the record stays readable).
    let mut text = format!("{}\n", dir.display());
    for f in files
        .iter()
        .filter_map(|f| f.to_str())
        .filter(|f| !f.contains('\n'))
    {
        text.push('\t');
        text.push_str(f);
        text.push('\n');
    }
    for p in read {
        text.push_str(&p);
        text.push('\n');
    }
    // Most runs read what the last one did: no write then.
    if std::fs::read(&path).ok().as_deref() != Some(text.as_bytes()) {
        let _ = ralph_base::atomic::write(&path, text.as_bytes());
    }
}

/// Marks `gate` as told here: its runs are chosen by its globs and by what its observed
/// runs recorded, no longer run whole for a file its globs miss. Said after an observed run,
/// and after a cached run no observation can ever teach (observation off, a kernel that
/// refuses tracing): such a gate is chosen by its globs alone, as the static model does, or
/// every edit no glob names would run it whole, be served the same stored result, and tell
/// its failures again.
pub fn told(root: &Path, gate: &str) {
    let heard = Layout::at(root).readers(gate).join(HEARD);
    if !heard.exists() {
        let _ = ralph_base::atomic::write(&heard, b"");
    }
}

/// The project's names for what `inputs` are: each path from the root, and where a link on
/// its way leads; a file beside a project below the top of its repository as `../x`;
/// nothing for the rest (outside the work tree). What the readers' records and
/// `check --staged`'s untracked check both look up.
pub(crate) fn names<'i>(root: &Path, inputs: impl Iterator<Item = &'i Input>) -> Vec<String> {
    let beside = ralph_plan::files::Beside::of(root);
    let mut links = Links::new(root, beside.as_ref());
    inputs
        .flat_map(|i| match i.path.strip_prefix("./") {
            Some(p) => [Some(p.to_string()), links.target(p)],
            None => [
                beside
                    .as_ref()
                    .and_then(|b| b.rel(Path::new(&i.path)))
                    .and_then(|p| p.to_str().map(str::to_string)),
                None,
            ],
        })
        .flatten()
        .collect()
}

/// Where project paths lead through symbolic links: an edit of `fixtures/good.json` reaches
/// the runs that read it as `tests/data/cases.json` (a link), and one of `../shared/data.txt`
/// the runs that read `lib/data.txt` through `lib -> ../shared`. Each folder is asked once
/// whether it is a link, so a run that read thousands of files costs one call per folder.
struct Links<'a> {
    root: &'a Path,
    real_root: Option<PathBuf>,
    beside: Option<&'a ralph_plan::files::Beside>,
    folders: std::collections::HashMap<PathBuf, bool>,
}

impl<'a> Links<'a> {
    fn new(root: &'a Path, beside: Option<&'a ralph_plan::files::Beside>) -> Self {
        Links {
            root,
            real_root: root.canonicalize().ok(),
            beside,
            folders: Default::default(),
        }
    }

    fn is_link(&self, rel: &Path) -> bool {
        std::fs::symlink_metadata(self.root.join(rel)).is_ok_and(|m| m.file_type().is_symlink())
    }

    /// Where `rel` really is, when a link on its way leads elsewhere: a path from the root,
    /// or `../` beside it.
    fn target(&mut self, rel: &str) -> Option<String> {
        let rel = Path::new(rel);
        let mut linked = self.is_link(rel);
        for folder in rel
            .ancestors()
            .skip(1)
            .filter(|a| !a.as_os_str().is_empty())
        {
            if linked {
                break;
            }
            let known = self.folders.get(folder).copied();
            linked = known.unwrap_or_else(|| {
                let is = self.is_link(folder);
                self.folders.insert(folder.to_path_buf(), is);
                is
            });
        }
        if !linked {
            return None;
        }
        let real = self.root.join(rel).canonicalize().ok()?;
        match real.strip_prefix(self.real_root.as_ref()?) {
            Ok(inside) => Some(inside.to_str()?.to_string()),
            Err(_) => Some(self.beside?.rel(&real)?.to_str()?.to_string()),
        }
    }
}

/// The runs of `gate` whose last observation read one of `rels`.
pub fn runs_reading(root: &Path, gate: &str, rels: &[PathBuf]) -> Vec<Reading> {
    let Ok(entries) = std::fs::read_dir(Layout::at(root).readers(gate)) else {
        return Vec::new();
    };
    let mut found: Vec<Reading> = entries
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .filter_map(|text| {
            let mut lines = text.lines();
            let dir = PathBuf::from(lines.next()?);
            let (own, read): (Vec<&str>, Vec<&str>) = lines.partition(|l| l.starts_with('\t'));
            read.iter()
                .any(|l| rels.iter().any(|r| r.as_os_str() == *l))
                .then(|| Reading {
                    dir,
                    files: own.iter().map(|l| PathBuf::from(&l[1..])).collect(),
                })
        })
        .collect();
    found.sort_by(|a, b| (&a.dir, &a.files).cmp(&(&b.dir, &b.files)));
    found.dedup();
    found
}

/// The runs of `phase`'s gates whose last observation read one of `rels`, by gate.
fn readings<'c>(
    config: &'c ralph_config::Config,
    (root, phase): (&Path, ralph_config::Phase),
    rels: &[PathBuf],
) -> Vec<(&'c ralph_config::Gate, Reading)> {
    config
        .gates
        .iter()
        .filter(|g| g.runs_in(phase))
        .flat_map(|g| {
            runs_reading(root, &g.name, rels)
                .into_iter()
                .map(move |r| (g, r))
        })
        .collect()
}

/// What a change reaches beyond the gates' globs: the runs whose last observation read one
/// of its files, and the gates to run whole (no run here has told what they read, and their
/// globs miss one of the files). The edit hook and `check --staged` / `--changed` both ask
/// this, then plan [`Reach::files`] and the `whole` gates.
pub struct Reach<'c> {
    readings: Vec<(&'c ralph_config::Gate, Reading)>,
    pub whole: Vec<&'c ralph_config::Gate>,
    phase: ralph_config::Phase,
}

impl<'c> Reach<'c> {
    /// Reads the records of `phase`'s gates for `touched` (paths relative to the root).
    pub fn of(
        config: &'c ralph_config::Config,
        (root, phase): (&Path, ralph_config::Phase),
        touched: &[PathBuf],
        head: &dyn Fn(&Path) -> Option<Vec<u8>>,
    ) -> Reach<'c> {
        let mut whole = unheard(config, (root, phase), touched, head);
        // A declared input is one of every run of its gate (`../shared/limits.cfg` too).
        whole.extend(
            config
                .gates
                .iter()
                .filter(|g| g.runs_in(phase) && touched.iter().any(|r| declares(g, r))),
        );
        Reach {
            readings: readings(config, (root, phase), touched),
            whole,
            phase,
        }
    }

    /// Nothing beyond the globs: the caller need not list the project.
    pub fn is_empty(&self) -> bool {
        self.readings.is_empty() && self.whole.is_empty()
    }

    /// The names of the gates to run whole, among `asked` (all when empty), sorted.
    pub fn whole_names(&self, asked: &[String]) -> Vec<String> {
        let mut names: Vec<String> = self
            .whole
            .iter()
            .filter(|g| asked.is_empty() || asked.contains(&g.name))
            .map(|g| g.name.clone())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// The files of `universe` that plan the runs that read a touched file again.
    pub fn files(
        &self,
        config: &ralph_config::Config,
        universe: &[PathBuf],
        head: &dyn Fn(&Path) -> Option<Vec<u8>>,
    ) -> Vec<PathBuf> {
        asked(config, (&self.readings, self.phase), universe, head)
    }
}

/// Whether `gate` declares `rel` one of its inputs: by its `inputs` globs, or for a file
/// beside the project by the path written whole.
fn declares(gate: &ralph_config::Gate, rel: &Path) -> bool {
    match rel.starts_with("..") {
        true => gate.inputs.iter().any(|w| Path::new(w.trim()) == rel),
        false => gate.is_input(rel),
    }
}

/// The gates of `phase` that no observed run here has told what they read (a new clone, a
/// new gate) and that one of `rels` may concern: a file their globs do not match. Runs
/// chosen by globs and readings alone could miss that edit, so the caller plans the whole
/// gate; its runs are cached like any other, and observed from then on.
fn unheard<'c>(
    config: &'c ralph_config::Config,
    (root, phase): (&Path, ralph_config::Phase),
    rels: &[PathBuf],
    head: &dyn Fn(&Path) -> Option<Vec<u8>>,
) -> Vec<&'c ralph_config::Gate> {
    config
        .gates
        .iter()
        .filter(|g| g.runs_in(phase))
        // A file beside the project (`../x`) is never one its globs plan.
        .filter(|g| {
            rels.iter()
                .any(|r| r.starts_with("..") || !g.matches_file(r, head))
        })
        .filter(|g| !Layout::at(root).readers(&g.name).join(HEARD).exists())
        .collect()
}

/// Pure but for `head`: the files that plan `readings` (of `phase`'s gates) again: a run's
/// own files (those still in `universe`), or for a whole folder's run one file of the
/// folder the gate matches, preferring one no other gate of the phase checks on its own (so
/// a dependent's project run does not bring its files' own checks along).
fn asked(
    config: &ralph_config::Config,
    (readings, phase): (&[(&ralph_config::Gate, Reading)], ralph_config::Phase),
    universe: &[PathBuf],
    head: &dyn Fn(&Path) -> Option<Vec<u8>>,
) -> Vec<PathBuf> {
    let mut asked = Vec::new();
    let present: std::collections::HashSet<&PathBuf> = universe.iter().collect();
    for (gate, run) in readings {
        if run.files.is_empty() {
            asked.extend(one_file_of(config, (gate, phase), &run.dir, universe, head));
        } else {
            asked.extend(run.files.iter().filter(|f| present.contains(f)).cloned());
        }
    }
    asked.sort();
    asked.dedup();
    asked
}

fn one_file_of(
    config: &ralph_config::Config,
    (gate, phase): (&ralph_config::Gate, ralph_config::Phase),
    dir: &Path,
    universe: &[PathBuf],
    head: &dyn Fn(&Path) -> Option<Vec<u8>>,
) -> Option<PathBuf> {
    let candidates: Vec<&PathBuf> = universe
        .iter()
        .filter(|f| f.starts_with(dir) && gate.matches_file(f, head))
        .collect();
    let alone = |f: &&&PathBuf| {
        !config.gates.iter().any(|g| {
            g.name != gate.name
                && g.runs_in(phase)
                && g.scope != ralph_config::Scope::Project
                && g.matches_file(f, head)
        })
    };
    candidates
        .iter()
        .find(alone)
        .or(candidates.first())
        .map(|f| PathBuf::clone(f))
}

fn file(root: &Path, gate: &str, dir: &Path, files: &[PathBuf]) -> PathBuf {
    let mut h = blake3::Hasher::new();
    h.update(dir.as_os_str().as_encoded_bytes());
    for f in files {
        h.update(b"\0");
        h.update(f.as_os_str().as_encoded_bytes());
    }
    let id = h.finalize().to_hex();
    Layout::at(root).readers(gate).join(&id[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(p: &str) -> Input {
        Input {
            path: p.into(),
            seen: "f:x".into(),
            probed: false,
            own: Vec::new(),
        }
    }

    #[test]
    fn a_run_that_read_another_folder_is_found_by_that_folder_s_files() {
        let root = tempfile::tempdir().unwrap();
        let read = [
            input("./lib/lib.go"),
            input("./app/main.go"),
            input("/usr/lib/go/x.go"),
        ];
        let app = (Path::new("app"), &[][..]);
        let go = |p: &Path| p.starts_with("app") && p.extension().is_some_and(|e| e == "go");
        record(root.path(), "go-vet", app, &go, &read);
        let found = |rel: &str| {
            runs_reading(root.path(), "go-vet", &[PathBuf::from(rel)])
                .into_iter()
                .map(|r| r.dir)
                .collect::<Vec<_>>()
        };
        assert_eq!(found("lib/lib.go"), [PathBuf::from("app")]);
        assert!(
            found("app/main.go").is_empty(),
            "its own files plan it already"
        );
        assert!(runs_reading(root.path(), "other", &[PathBuf::from("lib/lib.go")]).is_empty());
        record(root.path(), "go-vet", app, &go, &[input("./app/main.go")]);
        assert!(
            found("lib/lib.go").is_empty(),
            "the next run's record replaces it"
        );
    }

    #[test]
    fn a_run_for_some_files_is_found_with_them_by_what_else_it_read() {
        let root = tempfile::tempdir().unwrap();
        let mut absent = input("./.python-version");
        absent.seen = "absent".into();
        let mut folder = input("./lib");
        folder.seen = "ls:x".into();
        let read = [input("./main.sh"), input("./lib/lib.sh"), absent, folder];
        let mine = [PathBuf::from("main.sh")];
        let is = |names: &'static [&'static str]| {
            move |p: &Path| names.iter().any(|n| p == Path::new(n))
        };
        record(
            root.path(),
            "sh",
            (Path::new(""), &mine),
            &is(&["main.sh"]),
            &read,
        );
        let other = [PathBuf::from("other.sh")];
        let other_sh = is(&["other.sh"]);
        record(
            root.path(),
            "sh",
            (Path::new(""), &other),
            &other_sh,
            &[input("./other.sh")],
        );
        let found = |rel: &str| runs_reading(root.path(), "sh", &[PathBuf::from(rel)]);
        let main = Reading {
            dir: PathBuf::new(),
            files: mine.to_vec(),
        };
        assert_eq!(found("lib/lib.sh"), std::slice::from_ref(&main));
        assert_eq!(
            found(".python-version"),
            [main],
            "a file it looked for and missed"
        );
        assert!(
            found("main.sh").is_empty(),
            "its own file plans it by the gate's globs"
        );
        assert!(
            found("lib").is_empty(),
            "a folder's listing is not a file's content"
        );
    }
}
