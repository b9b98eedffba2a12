//! The crate's layering, read from the source tree: which top-level module of `src/` uses
//! which (`crate::…` paths outside comments and test modules), so that
//!
//! * no module is in an import cycle (and, named apart, none through the pure core:
//!   vocabulary, protocol, board, tracker, arbiter, gap, game, patch, session, link),
//! * the core uses no shell module (daemon, cli, client, bridge, mqtt, sim) and no I/O, async
//!   runtime, D-Bus or OS clock,
//! * the vocabulary is a leaf.
//!
//! The modules are whatever `src/` holds (`src/x.rs` or `src/x/`), so the test follows
//! modules that are added, moved or split.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The pure core: no I/O, no async, no OS clock. Names absent from the tree are skipped.
const CORE: [&str; 11] = [
    "vocab", "protocol", "board", "tracker", "arbiter", "gap", "game", "patch", "session", "link",
    "capture",
];

/// Shell modules the core must not use (the simulator drives ptys with tokio; `mqtt` is the
/// broker side of the relay and the hall reader).
const SHELLS: [&str; 6] = ["daemon", "cli", "client", "bridge", "mqtt", "sim"];

/// What the core must not name: the runtime, D-Bus, the file system, the network, the OS clock.
const FORBIDDEN_IN_CORE: [&str; 8] = [
    "tokio::",
    "zbus::",
    "std::fs",
    "std::net",
    "std::time::Instant",
    "std::time::SystemTime",
    "Instant::now",
    "SystemTime::now",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Top-level modules and their files.
fn modules() -> BTreeMap<String, Vec<PathBuf>> {
    let mut out = BTreeMap::new();
    for entry in fs::read_dir(src()).expect("src/ is readable") {
        let path = entry.expect("src/ entry").path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib" || name == "main" || name == "bin" {
            continue;
        }
        let files: &mut Vec<PathBuf> = out.entry(name).or_default();
        if path.is_dir() {
            collect_rs(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    out.retain(|_, files| !files.is_empty());
    out
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("module directory is readable") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            collect_rs(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A file's code as the library builds it: without comments, and without the unit-test
/// module that closes a file (`#[cfg(test)] mod …`, compiled only for `cargo test`).
fn code(path: &Path) -> String {
    let text = fs::read_to_string(path).expect("source is readable");
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]")
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod "))
        {
            break;
        }
        if t.starts_with("//") {
            continue;
        }
        let line = match line.find("// ") {
            Some(i) if !line[..i].contains('"') => &line[..i],
            _ => line,
        };
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The top-level modules `code` names through `crate::`, including `crate::{a, b::c}`.
fn crate_uses(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().last();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level names of a grouped import.
            let mut depth = 0;
            let mut word = String::new();
            let mut expecting = true;
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => expecting = true,
                    c if depth == 0 && expecting && (c.is_alphanumeric() || c == '_') => {
                        word.push(c)
                    }
                    _ => {
                        if !word.is_empty() {
                            out.insert(std::mem::take(&mut word));
                            expecting = false;
                        }
                    }
                }
            }
            if !word.is_empty() {
                out.insert(word);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

/// Module → the other top-level modules it uses.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules();
    let names: BTreeSet<String> = mods.keys().cloned().collect();
    mods.iter()
        .map(|(m, files)| {
            let uses = files
                .iter()
                .flat_map(|f| crate_uses(&code(f)))
                .filter(|u| u != m && names.contains(u))
                .collect();
            (m.clone(), uses)
        })
        .collect()
}

/// The strongly connected components with more than one module (each one a cycle), sorted.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(m) = todo.pop() {
            for n in graph.get(&m).into_iter().flatten() {
                if seen.insert(n.clone()) {
                    todo.push(n.clone());
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|m| (m, reach(m))).collect();
    let mut out: BTreeSet<Vec<String>> = BTreeSet::new();
    for m in graph.keys() {
        let comp: Vec<String> = graph
            .keys()
            .filter(|n| *n == m || (reachable[m].contains(*n) && reachable[*n].contains(m)))
            .cloned()
            .collect();
        if comp.len() > 1 {
            out.insert(comp);
        }
    }
    out.into_iter().collect()
}

#[test]
fn the_scanner_reads_imports_and_finds_cycles() {
    let uses = crate_uses(
        "use crate::session::{Event, View};\nuse crate::{game::Game, vocab};\n\
         let x = crate::arbiter::fen_of(p); my_crate::daemon::x();",
    );
    let expected: BTreeSet<String> = ["session", "game", "vocab", "arbiter"]
        .map(String::from)
        .into();
    assert_eq!(uses, expected);
    let g: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(m, u)| (m.to_string(), u.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(cycles(&g), vec![vec!["a", "b", "c"]]);
    let code = code_of(
        "use crate::game::Game; // crate::daemon\n#[cfg(test)]\nmod tests {\n use crate::sim;\n}\n",
    );
    assert_eq!(crate_uses(&code), ["game".to_string()].into());
}

fn code_of(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.rs");
    fs::write(&path, text).unwrap();
    code(&path)
}

#[test]
fn the_tree_has_the_core_modules() {
    let mods = modules();
    for m in ["vocab", "arbiter", "session", "tracker", "game"] {
        assert!(mods.contains_key(m), "src/{m} is missing: {mods:?}");
    }
}

#[test]
fn the_core_is_in_no_import_cycle() {
    let g = graph();
    let bad: Vec<_> = cycles(&g)
        .into_iter()
        .filter(|c| c.iter().any(|m| CORE.contains(&m.as_str())))
        .collect();
    assert!(
        bad.is_empty(),
        "import cycles through the core: {bad:?}\ngraph: {g:#?}"
    );
}

#[test]
fn the_vocabulary_is_a_leaf() {
    let g = graph();
    assert_eq!(
        g.get("vocab"),
        Some(&BTreeSet::new()),
        "vocab uses: {:?}",
        g.get("vocab")
    );
}

#[test]
fn the_core_uses_no_shell_and_no_io() {
    let mods = modules();
    let mut faults = Vec::new();
    for (m, files) in mods.iter().filter(|(m, _)| CORE.contains(&m.as_str())) {
        for f in files {
            let code = code(f);
            for shell in crate_uses(&code)
                .into_iter()
                .filter(|u| SHELLS.contains(&u.as_str()))
            {
                faults.push(format!(
                    "{}: core module {m} uses crate::{shell}",
                    f.display()
                ));
            }
            for word in FORBIDDEN_IN_CORE {
                if code.contains(word) {
                    faults.push(format!("{}: core module {m} names {word}", f.display()));
                }
            }
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

#[test]
fn no_module_is_in_an_import_cycle() {
    let g = graph();
    let found = cycles(&g);
    assert!(found.is_empty(), "import cycles: {found:?}\ngraph: {g:#?}");
}

/// The bridges are D-Bus clients of the daemon by design: they share the contract, the
/// client model and the core's words, never the daemon's code.
#[test]
fn no_bridge_uses_daemon_code() {
    let faults: Vec<String> = modules()
        .get("bridge")
        .into_iter()
        .flatten()
        .filter(|f| crate_uses(&code(f)).contains("daemon"))
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        faults.is_empty(),
        "bridge files using crate::daemon: {faults:?}"
    );
}

/// Inside the protocol, the framer and the payload parsers do not import each other both
/// ways (their counters are a module of their own).
#[test]
fn the_protocol_files_are_in_no_cycle() {
    let dir = src().join("protocol");
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("src/protocol") {
        let path = entry.expect("entry").path();
        let Some(name) = path.file_stem().and_then(|n| n.to_str()) else {
            continue;
        };
        let text = code(&path);
        let uses: BTreeSet<String> = text
            .match_indices("super::")
            .filter_map(|(i, _)| {
                let rest = &text[i + "super::".len()..];
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                let m = &rest[..end];
                (!m.is_empty() && m != name).then(|| m.to_owned())
            })
            .collect();
        g.insert(name.to_owned(), uses);
    }
    assert!(
        g.contains_key("decoder") && g.contains_key("codec"),
        "{g:?}"
    );
    let found = cycles(&g);
    assert!(found.is_empty(), "cycles inside src/protocol: {found:?}");
}
