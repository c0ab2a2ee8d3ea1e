use super::*;
use ralph_config::{parse, resolve, Config};
use std::path::{Path, PathBuf};

fn config(text: &str) -> Config {
    let file = parse(Path::new("ralph.toml"), text.to_string()).unwrap();
    resolve(PathBuf::from("/p"), Some(file), &mut Vec::new).unwrap()
}

const PY: &str =
    "[[gate]]\nname = \"py\"\nglobs = [\"**/*.py\"]\nrun = \"python3 -m py_compile {files}\"\n";

fn pin_of(text: &str) -> Pin {
    of(&config(text))
}

fn record(pin: &Pin) -> Record {
    Record {
        pin: pin.clone(),
        started_at: Some("t".into()),
        session: String::new(),
        surface: None,
        tree: None,
        ignored: None,
        since_ns: None,
    }
}

#[test]
fn the_same_gates_pin_the_same() {
    assert_eq!(pin_of(PY), pin_of(PY));
    let p = pin_of(PY);
    assert_eq!(judge(Some(&p.digest), Some(&record(&p)), &p), Verdict::Same);
}

#[test]
fn each_way_to_weaken_a_gate_is_named() {
    let before = pin_of(PY);
    let cases = [
        (
            PY.replace("python3 -m py_compile {files}", "true"),
            "command changed",
        ),
        (
            format!("{PY}exclude = [\"bad.py\"]\n"),
            "coverage changed: exclude",
        ),
        (PY.replace("**/*.py", "src/*.py"), "coverage changed: globs"),
        (format!("{PY}optional = true\n"), "optional"),
        (
            format!("{PY}scope = \"project\"\nroot_markers = [\"setup.py\"]\nroots_only = true\n"),
            "coverage changed: roots_only",
        ),
        (format!("{PY}requires = [\"nope\"]\n"), "requires"),
        (format!("{PY}timeout = \"1ms\"\n"), "timeout"),
        (
            format!("{PY}phases = [\"edit\"]\n"),
            "stop gate `py` removed",
        ),
        (
            PY.replace("name = \"py\"", "name = \"renamed\""),
            "stop gate `py` removed",
        ),
    ];
    for (text, named) in cases {
        let now = pin_of(&text);
        let v = judge(Some(&before.digest), Some(&record(&before)), &now);
        let Verdict::Weaker(changes) = &v else {
            panic!("{text}: {v:?}")
        };
        let said: Vec<String> = changes.iter().map(ToString::to_string).collect();
        assert!(
            said.iter().any(|s| s.contains(named)),
            "{text}: {said:?} names {named}"
        );
        assert!(v.holds());
    }
}

#[test]
fn an_added_gate_is_accepted_and_a_comment_needs_no_approval() {
    let before = pin_of(PY);
    let more = format!(
        "{PY}\n[[gate]]\nname = \"sh\"\nglobs = [\"*.sh\"]\nrun = \"shellcheck {{files}}\"\n"
    );
    let v = judge(Some(&before.digest), Some(&record(&before)), &pin_of(&more));
    assert_eq!(v, Verdict::Stronger(vec![Change::Added("sh".into())]));
    assert!(!v.holds() && v.repins());

    let mut commented = pin_of(PY);
    commented.source = "ralph.toml (blake3 0123)".into();
    let commented = seal(
        commented.version,
        commented.source,
        commented.root,
        commented.gates,
    );
    let v = judge(Some(&before.digest), Some(&record(&before)), &commented);
    assert_eq!(v, Verdict::Reworded);
}

#[test]
fn a_pin_edited_or_removed_on_one_side_is_tampering() {
    let p = pin_of(PY);
    let weaker = pin_of(&PY.replace("python3 -m py_compile {files}", "true"));
    // The agent writes the weakened digest into the state file.
    assert!(matches!(
        judge(Some(&weaker.digest), Some(&record(&p)), &weaker),
        Verdict::Tampered(_)
    ));
    assert!(matches!(
        judge(None, Some(&record(&p)), &p),
        Verdict::Tampered(_)
    ));
    assert!(matches!(
        judge(Some(&p.digest), None, &p),
        Verdict::Tampered(_)
    ));
    assert_eq!(judge(None, None, &p), Verdict::First);
}

#[test]
fn a_new_version_of_ralph_gate_is_named() {
    let p = pin_of(PY);
    let newer = seal(
        "99.0.0".into(),
        p.source.clone(),
        p.root.clone(),
        p.gates.clone(),
    );
    let changes = compare(&p, &newer);
    assert_eq!(
        changes,
        vec![Change::Version {
            from: p.version.clone(),
            to: "99.0.0".into()
        }]
    );
}

#[test]
fn edit_only_gates_are_not_pinned() {
    let edit_only = format!("{PY}phases = [\"edit\"]\n");
    assert!(pin_of(&edit_only).gates.is_empty());
}

#[test]
fn the_seal_binds_the_surface_so_an_edited_copy_is_tampering() {
    let pin = pin_of("[[gate]]\nname = \"a\"\nglobs = [\"*.py\"]\nrun = \"true\"\n");
    let mut held = record(&pin);
    assert_eq!(
        held.seal(),
        pin.digest,
        "no surface: the pin's own digest, as before"
    );
    held.surface = Some(crate::surface::Surface::default());
    let seal = held.seal();
    assert_ne!(seal, pin.digest);
    assert_eq!(judge(Some(&seal), Some(&held), &pin), Verdict::Same);
    let mut edited = held.clone();
    edited.surface.as_mut().unwrap().absent.insert("x".into());
    assert!(matches!(
        judge(Some(&seal), Some(&edited), &pin),
        Verdict::Tampered(_)
    ));
}

#[test]
fn the_same_gates_in_another_root_are_held() {
    let file = parse(Path::new("ralph.toml"), PY.to_string()).unwrap();
    let there = of(&resolve(PathBuf::from("/p/sub"), Some(file), &mut Vec::new).unwrap());
    let here = pin_of(PY);
    let changes = compare(&here, &there);
    assert_eq!(
        changes,
        vec![Change::Root {
            from: "/p".into(),
            to: "/p/sub".into()
        }]
    );
    assert!(matches!(
        judge(Some(&here.digest), Some(&record(&here)), &there),
        Verdict::Weaker(_)
    ));
    let legacy = Pin {
        root: String::new(),
        ..here.clone()
    };
    assert!(
        compare(&legacy, &there).is_empty()
            || !compare(&legacy, &there)
                .iter()
                .any(|c| matches!(c, Change::Root { .. })),
        "a pin made before roots were recorded names no root"
    );
}

#[test]
fn presets_written_out_weaken_nothing_and_a_language_left_out_is_named() {
    let presets = |files: &[&str]| {
        let files: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
        of(&resolve(PathBuf::from("/p"), None, &mut || files.clone()).unwrap())
    };
    let was = presets(&["a.py"]);
    let file = pin_of("presets = [\"python\"]\n");
    let changes = compare(&was, &file);
    assert!(
        matches!(changes[..], [Change::Source { .. }]),
        "{changes:?}"
    );
    // `init`'s ralph.toml: the same presets, named in a file.
    assert_eq!(
        judge_written_out(changes.clone(), &file, &presets(&["a.py"])),
        []
    );
    // A shell script came too: the presets would check it now, the file does not.
    let left_out = judge_written_out(changes, &file, &presets(&["a.py", "run.sh"]));
    assert!(
        left_out.contains(&Change::Removed("shellcheck".into())),
        "{left_out:?}"
    );
    // A config file's other changes are kept as they are.
    let other = vec![Change::Removed("py".into())];
    assert_eq!(
        judge_written_out(other.clone(), &file, &presets(&["a.py"])),
        other
    );
}
