//! Version managers' shims. `~/.cargo/bin/cargo` is rustup itself and `~/.pyenv/shims/python3`
//! is a bash script: their content stays the same when the toolchain they run changes, so a
//! shim is known by what its manager says it runs here (`rustup which cargo`), and that answer
//! is remembered by the settings that decide it (environment, the manager's settings file,
//! version files from the working folder up).

use super::Fields;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub struct Shim {
    pub manager: &'static str,
    /// The manager's own executable, asked `which NAME`.
    pub command: PathBuf,
    pub env: Vec<(OsString, OsString)>,
    /// The folder a shim-folder manager keeps its state in (`~/.pyenv`).
    home: Option<PathBuf>,
}

impl Shim {
    pub fn args(&self, name: &str) -> Vec<String> {
        vec!["which".into(), name.into()]
    }

    /// True when `target` lies where this manager keeps what its shims run (its own
    /// folder: `~/.pyenv` for pyenv's shims). A manager without a known folder (rustup,
    /// mise) is not bypassed, so its answer only names the tool in a key.
    pub fn keeps(&self, target: &Path) -> bool {
        self.home
            .as_ref()
            .is_none_or(|home| target.starts_with(home))
    }

    /// pyenv, rbenv and nodenv shims end in `<manager> exec NAME`, which puts the chosen
    /// version's bin folder in front of PATH and runs NAME from it: doing the same directly
    /// runs the same executable. (rustup and mise proxies are binaries that start in
    /// milliseconds and set more than PATH; asdf sets plugin variables: they are kept.)
    pub fn bypassable(&self) -> bool {
        matches!(self.manager, "pyenv" | "rbenv" | "nodenv")
    }
}

/// Managers whose shims are text scripts in a `shims` folder, with the variables and version
/// files that choose what they run.
const SCRIPT_MANAGERS: &[(&str, &[&str])] = &[
    ("pyenv", &[".python-version"]),
    ("rbenv", &[".ruby-version"]),
    ("nodenv", &[".node-version"]),
    ("asdf", &[".tool-versions"]),
];

/// Version files each manager reads from the working folder upward.
fn version_files(manager: &str) -> &'static [&'static str] {
    match manager {
        "rustup" => &["rust-toolchain", "rust-toolchain.toml"],
        "mise" => &[
            ".tool-versions",
            "mise.toml",
            ".mise.toml",
            "mise.local.toml",
            ".mise/config.toml",
            ".config/mise.toml",
            ".python-version",
            ".node-version",
            ".nvmrc",
            ".ruby-version",
        ],
        other => SCRIPT_MANAGERS
            .iter()
            .find(|(m, _)| *m == other)
            .map_or(&[], |(_, files)| files),
    }
}

/// The shim `real` is, when it is one (`name` is what the gate calls it).
pub fn detect(name: &str, real: &Path) -> Option<Shim> {
    let file = real.file_name()?.to_str()?;
    // rustup and mise install their proxies as links to (or copies of) themselves.
    for manager in ["rustup", "mise"] {
        if file == manager && name != manager {
            return Some(Shim {
                manager,
                command: real.to_path_buf(),
                env: Vec::new(),
                home: None,
            });
        }
    }
    let shims_dir = real.parent()?;
    if shims_dir.file_name()? != "shims" {
        return None;
    }
    let head = std::fs::read(real).ok()?;
    if head.len() > 64 * 1024 || !head.starts_with(b"#!") {
        return None;
    }
    let text = String::from_utf8_lossy(&head);
    let (manager, _) = SCRIPT_MANAGERS.iter().find(|(m, _)| text.contains(m))?;
    let home = shims_dir.parent()?.to_path_buf();
    let command = ["bin", "libexec"]
        .iter()
        .map(|d| home.join(d).join(manager))
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(manager));
    let root_var = format!("{}_ROOT", manager.to_uppercase());
    Some(Shim {
        manager,
        command,
        env: vec![(root_var.into(), home.clone().into_os_string())],
        home: Some(home),
    })
}

/// What a script manager's shim most likely runs here, read as the manager reads it (its
/// `*_VERSION` variable, then its version file from `cwd` up, then its global `version`
/// file): `versions/<name>/bin/<tool>` in its folder. Only a guess, made so a first run need
/// not wait for the manager (bash starting a dozen processes): the manager is asked all the
/// same, and a run started on a guess it does not confirm runs again (see `guesses`). `None`
/// where the guess would be unsure: the system version, a name that is not a plain folder
/// name.
pub fn guess(
    shim: &Shim,
    name: &str,
    cwd: &Path,
    vars: &BTreeMap<String, OsString>,
) -> Option<PathBuf> {
    if !shim.bypassable() {
        return None;
    }
    let home = shim.home.as_ref()?;
    let upper = shim.manager.to_uppercase();
    // `pyenv exec` sets `PYENV_DIR`: the folder its version file is looked for from.
    let from = vars
        .get(&format!("{upper}_DIR"))
        .map_or_else(|| cwd.to_path_buf(), |d| cwd.join(d));
    let file = version_files(shim.manager).first()?;
    let chosen = match vars.get(&format!("{upper}_VERSION")) {
        Some(v) => v.to_str()?.to_string(),
        None => from
            .ancestors()
            .find_map(|d| first_version(&d.join(file)))
            .or_else(|| first_version(&home.join("version")))?,
    };
    let version = chosen.split([':', ' ', '\t']).find(|w| !w.is_empty())?;
    let plain = !version.starts_with('.') && !version.contains(['/', '\\']);
    (plain && version != "system")
        .then(|| home.join("versions").join(version).join("bin").join(name))
}

/// The first version a version file names (lines, `#` comments and blanks skipped).
fn first_version(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
}

/// What decides a shim's answer: the manager, the tool, the folder, the manager's variables,
/// its settings file and every version file from `cwd` up to `/`.
pub fn memo_key(shim: &Shim, name: &str, cwd: &Path, vars: &BTreeMap<String, OsString>) -> String {
    let mut h = Fields::new();
    h.add(shim.manager.as_bytes());
    h.add(shim.command.as_os_str().as_encoded_bytes());
    h.add(name.as_bytes());
    h.add(cwd.as_os_str().as_encoded_bytes());
    let prefix = format!("{}_", shim.manager.to_uppercase());
    for (k, v) in vars {
        if k.starts_with(&prefix) || k == "HOME" {
            h.add(k.as_bytes());
            h.add(v.as_encoded_bytes());
        }
    }
    let home = vars.get("HOME").map(PathBuf::from).unwrap_or_default();
    let settings: Vec<PathBuf> = match shim.manager {
        "rustup" => vec![vars
            .get("RUSTUP_HOME")
            .map_or_else(|| home.join(".rustup"), PathBuf::from)
            .join("settings.toml")],
        "mise" => vec![home.join(".config/mise/config.toml")],
        "asdf" => vec![home.join(".tool-versions")],
        _ => shim.home.iter().map(|h| h.join("version")).collect(),
    };
    for file in settings {
        add_file(&mut h, &file);
    }
    for dir in cwd.ancestors() {
        for name in version_files(shim.manager) {
            add_file(&mut h, &dir.join(name));
        }
    }
    h.finish()
}

fn add_file(h: &mut Fields, path: &Path) {
    if let Ok(bytes) = std::fs::read(path) {
        h.add(path.as_os_str().as_encoded_bytes());
        h.add(&bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pyenv folder with a shim for `python3` and the given versions installed.
    fn pyenv(versions: &[&str]) -> (tempfile::TempDir, Shim) {
        let home = tempfile::tempdir().unwrap();
        let shim = home.path().join("shims/python3");
        std::fs::create_dir_all(shim.parent().unwrap()).unwrap();
        std::fs::write(
            &shim,
            "#!/usr/bin/env bash\nexec \"/x/libexec/pyenv\" exec \"$0\"\n",
        )
        .unwrap();
        for v in versions {
            let bin = home.path().join(format!("versions/{v}/bin"));
            std::fs::create_dir_all(&bin).unwrap();
            std::fs::write(bin.join("python3"), "").unwrap();
        }
        let detected = detect("python3", &shim).expect("a pyenv shim");
        (home, detected)
    }

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, OsString> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect()
    }

    #[test]
    fn the_guess_reads_the_variable_then_the_nearest_version_file_then_the_global_one() {
        let (home, shim) = pyenv(&["3.11.7", "3.12.1", "3.13.0"]);
        let project = tempfile::tempdir().unwrap();
        let sub = project.path().join("pkg/sub");
        std::fs::create_dir_all(&sub).unwrap();
        let bin = |v: &str| Some(home.path().join(format!("versions/{v}/bin/python3")));
        assert_eq!(
            guess(&shim, "python3", &sub, &vars(&[])),
            None,
            "no version chosen"
        );
        std::fs::write(home.path().join("version"), "3.11.7\n").unwrap();
        assert_eq!(guess(&shim, "python3", &sub, &vars(&[])), bin("3.11.7"));
        std::fs::write(
            project.path().join(".python-version"),
            "# pinned\n3.12.1 3.11.7\n",
        )
        .unwrap();
        assert_eq!(guess(&shim, "python3", &sub, &vars(&[])), bin("3.12.1"));
        let chosen = vars(&[("PYENV_VERSION", "3.13.0:3.12.1")]);
        assert_eq!(guess(&shim, "python3", &sub, &chosen), bin("3.13.0"));
        // `PYENV_DIR` (set by `pyenv exec`) is where the version file is looked for from.
        let elsewhere = tempfile::tempdir().unwrap();
        let dir = vars(&[("PYENV_DIR", elsewhere.path().to_str().unwrap())]);
        assert_eq!(guess(&shim, "python3", &sub, &dir), bin("3.11.7"));
    }

    #[test]
    fn no_guess_where_it_would_be_unsure() {
        let (_home, shim) = pyenv(&["3.11.7"]);
        let cwd = tempfile::tempdir().unwrap();
        for version in ["system", "../../elsewhere", "..", ".hidden", "a/b"] {
            let v = vars(&[("PYENV_VERSION", version)]);
            assert_eq!(guess(&shim, "python3", cwd.path(), &v), None, "{version}");
        }
        let rustup = Shim {
            manager: "rustup",
            command: PathBuf::from("/x/rustup"),
            env: Vec::new(),
            home: None,
        };
        assert_eq!(guess(&rustup, "cargo", cwd.path(), &vars(&[])), None);
    }
}
