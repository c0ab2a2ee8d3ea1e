use super::*;
use ralph_base::platform::symlink;

fn exe(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    ralph_base::platform::set_mode(path, 0o755).unwrap();
}

/// A toolbox that remembers nothing.
fn toolbox(digests: &Digests) -> Toolbox<'_> {
    Toolbox::new(digests, BTreeMap::new(), Remembered::Nothing)
}

#[test]
fn shebangs_name_the_interpreter() {
    assert_eq!(
        parse_shebang(b"#!/bin/bash -e\necho"),
        Some("/bin/bash".into())
    );
    assert_eq!(
        parse_shebang(b"#!/usr/bin/env -S node --x\n"),
        Some("node".into())
    );
    assert_eq!(
        parse_shebang(b"#! /usr/bin/env python3\n"),
        Some("python3".into())
    );
    assert_eq!(parse_shebang(b"echo\n"), None);
    // env's options as env reads them (issue 21: `-u NAME` left the script unchecked).
    for line in [
        "#!/usr/bin/env -S -u BASH_ENV bash\n",
        "#!/usr/bin/env -S -i PATH=/bin bash -e\n",
        "#!/usr/bin/env --unset=X -C /tmp bash\n",
        "#!/usr/bin/env -S nice -n 5 bash\n",
        "#!/usr/bin/env -- bash\n",
    ] {
        assert_eq!(
            parse_shebang(line.as_bytes()),
            Some("bash".into()),
            "{line}"
        );
    }
}

#[test]
fn node_packages_are_found_from_a_tool_inside_them() {
    assert_eq!(
        node_package(Path::new("/p/node_modules/typescript/bin/tsc")),
        Some(PathBuf::from("/p/node_modules/typescript"))
    );
    assert_eq!(
        node_package(Path::new("/p/node_modules/@scope/tool/dist/cli.js")),
        Some(PathBuf::from("/p/node_modules/@scope/tool"))
    );
    assert_eq!(node_package(Path::new("/usr/bin/tsc")), None);
}

#[test]
fn identity_follows_content_links_interpreters_and_packages() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("proj");
    std::fs::create_dir_all(&root).unwrap();
    let digests = Digests::load(&root, None);
    let bin = dir.path().join("bin");
    exe(&bin.join("lint"), "#!/bin/sh\necho v1\n");
    let id = |tb: &Toolbox<'_>| {
        tb.resolve("lint", std::slice::from_ref(&bin), &root)
            .unwrap()
            .identity
            .clone()
            .unwrap()
    };
    let first = id(&toolbox(&digests));
    assert_eq!(first, id(&toolbox(&digests)), "stable");
    exe(&bin.join("lint"), "#!/bin/sh\necho v2\n");
    let second = id(&toolbox(&digests));
    assert_ne!(first, second, "replaced in place");

    // A symlink retargeted to another version.
    exe(&dir.path().join("v1/tool"), "one");
    exe(&dir.path().join("v2/tool"), "two");
    symlink(dir.path().join("v1/tool"), bin.join("tool")).unwrap();
    let tool_id = || {
        toolbox(&digests)
            .resolve("tool", std::slice::from_ref(&bin), &root)
            .unwrap()
            .identity
            .clone()
            .unwrap()
    };
    let before = tool_id();
    std::fs::remove_file(bin.join("tool")).unwrap();
    symlink(dir.path().join("v2/tool"), bin.join("tool")).unwrap();
    assert_ne!(before, tool_id(), "retargeted link");

    // A script is only as fixed as its interpreter.
    exe(&dir.path().join("interp/node"), "node v1");
    exe(&bin.join("cli"), "#!/usr/bin/env node\n");
    let dirs = vec![bin.clone(), dir.path().join("interp")];
    let cli = || {
        toolbox(&digests)
            .resolve("cli", &dirs, &root)
            .unwrap()
            .identity
            .clone()
            .unwrap()
    };
    let before = cli();
    exe(&dir.path().join("interp/node"), "node v2");
    assert_ne!(before, cli(), "a new interpreter");

    // A tool in a node package knows its version, and a new version changes the identity.
    let pkg = root.join("node_modules/typescript");
    exe(&pkg.join("bin/tsc"), "#!/bin/sh\n");
    std::fs::write(
        pkg.join("package.json"),
        r#"{"name":"typescript","version":"5.9.3"}"#,
    )
    .unwrap();
    std::fs::create_dir_all(root.join("node_modules/.bin")).unwrap();
    symlink("../typescript/bin/tsc", root.join("node_modules/.bin/tsc")).unwrap();
    let dirs = vec![root.join("node_modules/.bin")];
    let tb = toolbox(&digests);
    let tsc = tb.resolve("tsc", &dirs, &root).unwrap();
    assert_eq!(tsc.package.as_deref(), Some("typescript 5.9.3"));
    assert_eq!(tb.version(&tsc).as_deref(), Some("typescript 5.9.3"));
    std::fs::write(
        pkg.join("package.json"),
        r#"{"name":"typescript","version":"5.9.4"}"#,
    )
    .unwrap();
    let again = toolbox(&digests).resolve("tsc", &dirs, &root).unwrap();
    assert_ne!(tsc.identity, again.identity);
}

#[test]
fn search_paths_walk_up_to_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("node_modules/.bin")).unwrap();
    std::fs::create_dir_all(root.join("packages/a/node_modules/.bin")).unwrap();
    std::fs::create_dir_all(root.join("packages/b")).unwrap();
    let dirs = search_path(
        root,
        Path::new("packages/a"),
        &["node_modules/.bin".into()],
        None,
    );
    assert_eq!(
        dirs,
        [
            root.join("packages/a/node_modules/.bin"),
            root.join("node_modules/.bin")
        ]
    );
    let dirs = search_path(
        root,
        Path::new("packages/b"),
        &["node_modules/.bin".into()],
        None,
    );
    assert_eq!(
        dirs,
        [root.join("node_modules/.bin")],
        "a package without its own"
    );
}

#[test]
fn a_shebang_whose_interpreter_cannot_be_told_is_said_so() {
    for bad in [
        "#!\n",
        "#!/usr/bin/env\n",
        "#!/usr/bin/env -S\n",
        "#!/usr/bin/env FOO=1\n",
    ] {
        assert!(undeterminable_shebang(bad.as_bytes()), "{bad:?}");
    }
    assert!(undeterminable_shebang(b"#!\xff\xfe\n"), "not text");
    for good in [
        "#!/bin/sh\n",
        "#!/usr/bin/env bash\n",
        "#!/usr/bin/env -S -u BASH_ENV bash\n",
        "#!/usr/bin/python3\n",
        "echo hi\n",
    ] {
        assert!(!undeterminable_shebang(good.as_bytes()), "{good:?}");
    }
}

#[test]
fn only_script_sections_of_entry_points_name_programs() {
    let text = "[console_scripts]\nmypy = mypy.__main__:console_entry\n\n[pytest11]\nplug = x.plugin\n[gui_scripts]\nview = a:b\n";
    let names: Vec<&str> = entry_point_scripts(text).collect();
    assert_eq!(names, ["mypy", "view"]);
    assert_eq!(entry_point_scripts("[pytest11]\nmypy = x\n").count(), 0);
}
