//! Opening a project: where it is, which config applies, and its file list (listed once).

use crate::files::{self, FilesError};
use crate::plan::{self, Plan};
use ralph_config::{self as config, Config, ConfigError, Phase};
use std::path::{Path, PathBuf};

pub struct Project {
    pub config: Config,
    pub cwd: PathBuf,
    listed: Option<files::Listing>,
}

#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Files(#[from] FilesError),
    #[error("cannot use --config {}", path.display())]
    ConfigPath {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl Project {
    /// The project for `cwd`: the nearest `ralph.toml` above it (or `explicit`), its folder
    /// being the root. Without one, the git work tree (or `cwd`) on detected presets.
    pub fn open(cwd: &Path, explicit: Option<&Path>) -> Result<Self, OpenError> {
        let found = match explicit {
            Some(p) => {
                let full = cwd.join(p);
                if !full.is_file() {
                    return Err(OpenError::ConfigPath {
                        path: p.to_path_buf(),
                        source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
                    });
                }
                Some(full)
            }
            None => config::find(cwd),
        };
        let file = found.as_deref().map(config::read).transpose()?;
        let root = match &found {
            Some(path) => path
                .parent()
                .map_or_else(|| cwd.to_path_buf(), Path::to_path_buf),
            None => ralph_base::git::toplevel(cwd).unwrap_or_else(|| cwd.to_path_buf()),
        };
        let root = root.canonicalize().unwrap_or(root);
        let mut listed = None;
        if file.as_ref().is_none_or(|f| f.needs_detection()) {
            listed = Some(files::list(&root)?);
        }
        let snapshot = listed.as_ref().map(|l| l.files.clone());
        let config = config::resolve(root, file, &mut || snapshot.clone().unwrap_or_default())?;
        Ok(Self {
            config,
            cwd: cwd.to_path_buf(),
            listed,
        })
    }

    pub fn root(&self) -> &Path {
        &self.config.root
    }

    /// Every project file, listed at most once per run.
    pub fn all_files(&mut self) -> Result<Vec<PathBuf>, FilesError> {
        Ok(self.listing()?.files.clone())
    }

    /// Every project file and every listed path no checker can open, listed at most once per
    /// run.
    pub fn listing(&mut self) -> Result<&files::Listing, FilesError> {
        if self.listed.is_none() {
            self.listed = Some(files::list(&self.config.root)?);
        }
        Ok(self.listed.get_or_insert_with(Default::default))
    }

    /// The plan for `files` in `phase` (`only`: these gates; empty = all). `universe` is
    /// every project file when a gate's result depends on more than its own files.
    pub fn plan(
        &self,
        files: &[PathBuf],
        universe: &[PathBuf],
        phase: Phase,
        only: &[String],
    ) -> Plan {
        self.plan_with_unopenable(files, universe, &[], phase, only)
    }

    /// [`Self::plan`], with the selected paths no checker can open: a gate whose globs match
    /// one reports it unverified.
    pub fn plan_with_unopenable(
        &self,
        files: &[PathBuf],
        universe: &[PathBuf],
        unopenable: &[(PathBuf, files::Unopenable)],
        phase: Phase,
        only: &[String],
    ) -> Plan {
        let fs = plan::DiskFs::new(self.root());
        // Edit feedback checks one or two files: no schedule to work out.
        let costs = (phase != Phase::Edit).then(|| crate::costs::Costs::load(self.root()));
        plan::plan(
            &self.config,
            &plan::Request {
                files,
                universe,
                phase,
                only,
                unopenable,
            },
            &plan::Context {
                fs: &fs,
                arg_budget: plan::ARG_BUDGET,
                spread: self.config.settings.jobs,
                costs: costs.as_ref(),
                reuse_build_state: phase == Phase::Edit,
            },
        )
    }

    /// One line that says which config or presets are in force.
    pub fn describe_config(&self) -> String {
        let presets: Vec<String> = self
            .config
            .presets
            .iter()
            .map(|p| match &p.detected_by {
                Some(file) => format!("{} (found {file})", p.name),
                None => p.name.to_string(),
            })
            .collect();
        let presets = if presets.is_empty() {
            "none".to_string()
        } else {
            presets.join(", ")
        };
        match &self.config.file {
            Some(path) => format!("config {}; presets: {presets}", path.display()),
            None => format!("no ralph.toml; presets picked by project contents: {presets}"),
        }
    }
}
