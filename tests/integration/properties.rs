//! Property: any file name (quotes, `$()`, backticks, newlines, leading dashes, non-UTF-8
//! bytes) reaches a gate as exactly one argument, and nothing in it runs.

use crate::common::Repo;
use proptest::prelude::*;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// File name bytes: anything but `/` and NUL, with the shell's favourite characters likely.
fn name() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        3 => prop::sample::select(b"$()`'\";&|<>*?[]{}~!#\\ \t\n-".to_vec()),
        3 => prop::sample::select(b"abcxyz019._".to_vec()),
        1 => (1u8..=255).prop_filter("no slash", |b| *b != b'/'),
    ];
    proptest::collection::vec(byte, 1..24).prop_filter("not . or ..", |n| n != b"." && n != b"..")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn any_file_name_is_one_argument_and_never_code(names in proptest::collection::btree_set(name(), 1..6)) {
        let repo = Repo::git();
        let out = tempfile::NamedTempFile::new().unwrap();
        let trap = tempfile::tempdir().unwrap();
        // ralph-gate's own cache of file stamps goes where XDG says, out of the trap.
        let cache = tempfile::tempdir().unwrap();
        repo.config(&format!(
            "[[gate]]\nname = \"record\"\nglobs = [\"files/**\"]\nenv = {{ OUT = \"{}\" }}\nrun = 'printf \"%s\\0\" {{files}} >> \"$OUT\"'\n",
            out.path().display()
        ));
        std::fs::create_dir_all(repo.path().join("files")).unwrap();
        for n in &names {
            std::fs::write(repo.path().join("files").join(OsStr::from_bytes(n)), b"x").unwrap();
        }
        let mut cmd = repo.cmd();
        // A name that managed to run code would most likely touch files in the working
        // folder; give it a place where that would show.
        cmd.current_dir(repo.path())
            .env("HOME", trap.path())
            .env("XDG_CACHE_HOME", cache.path())
            .args(["check", "--format", "json"]);
        let run = crate::common::finish(cmd.output().unwrap());
        prop_assert_eq!(run.code, 0, "{:?}", run);
        let bytes = std::fs::read(out.path()).unwrap();
        let mut got: Vec<Vec<u8>> = bytes.split(|b| *b == 0).filter(|a| !a.is_empty()).map(<[u8]>::to_vec).collect();
        got.sort();
        let mut want: Vec<Vec<u8>> = names.iter().map(|n| [b"files/".as_slice(), n].concat()).collect();
        want.sort();
        prop_assert_eq!(got, want);
        let mut listing: Vec<_> = std::fs::read_dir(repo.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        listing.sort();
        let expected: Vec<std::ffi::OsString> = [".git", ".ralph", "files", "ralph.toml"].iter().map(Into::into).collect();
        prop_assert_eq!(listing, expected, "nothing new appeared in the project");
        prop_assert!(std::fs::read_dir(trap.path()).unwrap().next().is_none(), "nothing appeared in HOME");
    }
}
