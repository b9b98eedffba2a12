//! The workspace's layering. The compiler keeps most of it: the pure core is a crate of its own
//! (`crates/core`) that cannot name the shells. What a dependency list cannot say is read
//! here, from `cargo tree` and from the source trees (`crate::…` paths outside comments and
//! test modules):
//!
//! * the core crate pulls in no async runtime, D-Bus, HTTP, MQTT, terminal, serial or
//!   logging crate, not even through another crate, and names no file system, network or
//!   OS clock;
//! * the daemon's production build (no `sim` feature) does not link the simulator;
//! * no module of either crate is in an import cycle, nor any file with another file (inside a
//!   module too: `super::`, `self::` and `crate::a::b` paths resolved to the files they name;
//!   a module declaring its own children and re-exporting their items, `mod x; pub use x::Y;`,
//!   is its structure, not an import), the vocabulary is a leaf, and no bridge uses daemon code.
//!
//! The modules are whatever each `src/` holds (`x.rs` or `x/`), so the test follows
//! modules that are added, moved or split.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The pure core's modules, all in `crates/core/src`.
const CORE: [&str; 15] = [
    "vocab",
    "board_input",
    "dgt",
    "chesslink",
    "board",
    "tracker",
    "arbiter",
    "recovery",
    "game",
    "patch",
    "pgn",
    "session",
    "link",
    "capture",
    "contract",
];

/// The shells, in the daemon's crate (`src/`).
const SHELLS: [&str; 5] = ["daemon", "cli", "client", "bridge", "mqtt"];

/// Crates the core must not pull in, directly or through another crate: runtimes, D-Bus,
/// HTTP, MQTT, terminals, serial ports, logging, and the simulator.
const FORBIDDEN_CRATES: [&str; 16] = [
    "tokio",
    "async-std",
    "futures-util",
    "mio",
    "zbus",
    "axum",
    "hyper",
    "reqwest",
    "rumqttc",
    "crossterm",
    "tokio-serial",
    "serialport",
    "nix",
    "tracing",
    "log",
    "eboard-sim",
];

/// What the core must not name: the runtime, D-Bus, the file system, the network, the OS clock.
const FORBIDDEN_IN_CORE: [&str; 13] = [
    "tokio::",
    "zbus::",
    "std::fs",
    "std::net",
    "std::env",
    "std::process",
    "std::thread",
    "println!",
    "eprintln!",
    "std::time::Instant",
    "std::time::SystemTime",
    "Instant::now",
    "SystemTime::now",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The daemon's crate: the shells.
fn src() -> PathBuf {
    root().join("src")
}

/// The core crate.
fn core_src() -> PathBuf {
    root().join("crates/core/src")
}

/// Top-level modules of the crate rooted at `src` and their files.
fn modules(src: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let mut out = BTreeMap::new();
    for entry in fs::read_dir(src).expect("src/ is readable") {
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

/// Module → the other top-level modules of its crate it uses.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules(src);
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

/// `cargo tree`'s package names for `args` (normal dependencies only), offline.
fn tree(args: &[&str]) -> BTreeSet<String> {
    let out = std::process::Command::new(env!("CARGO"))
        .current_dir(root())
        .args([
            "tree",
            "--locked",
            "--offline",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args(args)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo tree {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_trees_have_their_modules() {
    let core = modules(&core_src());
    for m in CORE {
        assert!(
            core.contains_key(m),
            "crates/core/src/{m} is missing: {core:?}"
        );
    }
    let shells = modules(&src());
    for m in SHELLS {
        assert!(shells.contains_key(m), "src/{m} is missing: {shells:?}");
    }
    let moved: Vec<_> = shells
        .keys()
        .filter(|m| CORE.contains(&m.as_str()))
        .collect();
    assert!(moved.is_empty(), "core modules back in src/: {moved:?}");
}

#[test]
fn the_core_crate_pulls_in_no_runtime_bus_network_terminal_or_log() {
    let deps = tree(&["-p", "eboard-core"]);
    assert!(deps.contains("shakmaty"), "the tree is read: {deps:?}");
    let bad: Vec<_> = FORBIDDEN_CRATES
        .iter()
        .filter(|c| deps.contains(**c))
        .collect();
    assert!(bad.is_empty(), "the core crate depends on {bad:?}");
}

/// `make` and the Debian package build the daemon without the `sim` feature: that build links
/// no simulator, while the default one (the demo's) does.
#[test]
fn the_production_daemon_does_not_link_the_simulator() {
    let production = tree(&["-p", "eboardd", "--no-default-features"]);
    assert!(production.contains("eboard-core"), "{production:?}");
    assert!(!production.contains("eboard-sim"), "{production:?}");
    assert!(tree(&["-p", "eboardd"]).contains("eboard-sim"));
    let makefile = fs::read_to_string(root().join("Makefile")).expect("Makefile");
    assert!(
        makefile.contains("--no-default-features --bin eboardd"),
        "the Makefile's build of eboardd must leave the simulator out"
    );
    // Every use of the simulator in the daemon's crate sits in a module the feature gates.
    let gated = [
        "daemon/demo.rs",
        "cli/simulate.rs",
        "cli/simulate_chesslink.rs",
        "cli/simulate_args.rs",
        "cli/simulate_end.rs",
        "cli/replay.rs",
    ];
    let mut faults = Vec::new();
    for f in modules(&src()).values().flatten() {
        let rel = f
            .strip_prefix(src())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let code = code(f);
        if (crate_uses(&code).contains("sim") || code.contains("eboard_sim"))
            && !gated.contains(&rel.as_str())
        {
            faults.push(rel);
        }
    }
    assert!(
        faults.is_empty(),
        "simulator used outside the gated modules: {faults:?}"
    );
    for (file, module) in [
        ("daemon/mod.rs", "pub mod demo;"),
        ("cli/mod.rs", "pub mod simulate;"),
        ("cli/mod.rs", "pub mod simulate_chesslink;"),
        ("cli/mod.rs", "pub mod simulate_end;"),
        ("cli/mod.rs", "pub mod replay;"),
    ] {
        let text = fs::read_to_string(src().join(file)).unwrap();
        assert!(
            text.contains(&format!("#[cfg(feature = \"sim\")]\n{module}")),
            "{file}: {module} is not gated by the sim feature"
        );
    }
}

#[test]
fn the_core_is_in_no_import_cycle() {
    let g = graph(&core_src());
    let found = cycles(&g);
    assert!(
        found.is_empty(),
        "import cycles in the core: {found:?}\ngraph: {g:#?}"
    );
}

/// The game side of the core, which must follow a game from any board protocol.
const PROTOCOL_NEUTRAL: [&str; 5] = ["session", "tracker", "recovery", "arbiter", "board_input"];

/// The session, the tracker, the recovery and the arbiter take the protocol-neutral board
/// input (`board_input`): they name no board protocol's wire types, not even through a
/// module they use, so a second board protocol is a driver beside `dgt` and nothing here.
#[test]
fn the_game_side_names_no_board_protocol() {
    let g = graph(&core_src());
    assert!(g.contains_key("dgt"), "the DGT driver is read: {g:?}");
    assert!(
        g.contains_key("chesslink"),
        "the ChessLink driver is read: {g:?}"
    );
    for start in PROTOCOL_NEUTRAL {
        assert!(g.contains_key(start), "crates/core/src/{start} is read");
        // Every module `start` reaches through its imports.
        let mut seen = BTreeSet::from([start.to_owned()]);
        let mut todo = vec![start.to_owned()];
        let mut path = BTreeMap::new();
        while let Some(m) = todo.pop() {
            for next in g.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    path.insert(next.clone(), m.clone());
                    todo.push(next.clone());
                }
            }
        }
        for driver in ["dgt", "chesslink", "link"] {
            assert!(
                !seen.contains(driver),
                "{start} reaches {driver} (through {:?})",
                path.get(driver)
            );
        }
    }
}

#[test]
fn the_vocabulary_is_a_leaf() {
    let g = graph(&core_src());
    assert_eq!(
        g.get("vocab"),
        Some(&BTreeSet::new()),
        "vocab uses: {:?}",
        g.get("vocab")
    );
}

#[test]
fn the_core_names_no_io() {
    let mut faults = Vec::new();
    for (m, files) in modules(&core_src()) {
        for f in files {
            let code = code(&f);
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
fn no_shell_module_is_in_an_import_cycle() {
    let g = graph(&src());
    let found = cycles(&g);
    assert!(found.is_empty(), "import cycles: {found:?}\ngraph: {g:#?}");
}

/// The bridges are D-Bus clients of the daemon by design: they share the contract, the
/// client model and the core's words, never the daemon's code.
#[test]
fn no_bridge_uses_daemon_code() {
    let faults: Vec<String> = modules(&src())
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

/// Inside the DGT driver, the framer and the payload parsers do not import each other both
/// ways (their counters are a module of their own).
#[test]
fn the_protocol_files_are_in_no_cycle() {
    let dir = core_src().join("dgt");
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("crates/core/src/dgt") {
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
    assert!(
        found.is_empty(),
        "cycles inside crates/core/src/dgt: {found:?}"
    );
}

/// Lines of a file before its unit-test module: the production code and its documentation.
fn production_lines(path: &Path) -> usize {
    let text = fs::read_to_string(path).expect("source is readable");
    let lines: Vec<&str> = text.lines().collect();
    lines
        .iter()
        .enumerate()
        .position(|(i, l)| {
            l.trim_start().starts_with("#[cfg(test)]")
                && lines
                    .get(i + 1)
                    .is_some_and(|next| next.trim_start().starts_with("mod "))
        })
        .unwrap_or(lines.len())
}

/// Small files with one job: none of the workspace's sources is over 700 lines of production
/// code (a file that grows past it is split by what its parts do).
#[test]
fn no_source_file_is_over_700_lines_of_production_code() {
    let mut long = Vec::new();
    for src in [src(), core_src(), root().join("crates/sim/src")] {
        for f in modules(&src).values().flatten() {
            let n = production_lines(f);
            if n > 700 {
                long.push(format!("{}: {n}", f.display()));
            }
        }
    }
    assert!(long.is_empty(), "files over 700 lines: {long:?}");
}

#[test]
fn production_lines_stop_at_the_unit_tests() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.rs");
    fs::write(
        &path,
        "//! doc\nfn a() {}\n#[cfg(test)]\nmod tests {\n    fn b() {}\n}\n",
    )
    .unwrap();
    assert_eq!(production_lines(&path), 2);
    fs::write(&path, "fn a() {}\n#[cfg(test)]\nfn helper() {}\n").unwrap();
    assert_eq!(production_lines(&path), 3);
}

/// Every source file of the crate rooted at `src` by its module path: `lib.rs` is the root
/// (`[]`), `a.rs` and `a/mod.rs` are `[a]`, `a/b.rs` is `[a, b]`. The binaries (`main.rs`,
/// `bin/`) are crates of their own.
fn module_files(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut files = Vec::new();
    collect_rs(src, &mut files);
    let mut out = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap();
        let mut path: Vec<String> = rel
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if path.first().is_some_and(|p| p == "bin") || path == ["main"] {
            continue;
        }
        if path.last().is_some_and(|l| l == "mod" || l == "lib") {
            path.pop();
        }
        out.insert(path, f);
    }
    out
}

/// The paths `code` names from `crate::`, `super::` or `self::`, each as its segments with
/// the keyword first, grouped imports expanded (`use super::{a::B, c}` names `super::a::B`
/// and `super::c`; a glob names the module itself).
fn rooted_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < code.len() {
        let Some(k) = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|k| code[i..].starts_with(k))
        else {
            i += code[i..].chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let before = i.checked_sub(1).map(|j| bytes[j]);
        let start = i;
        i += k.len();
        // Inside another path (`a::self::`, `$crate::`, `my_crate::`), or its own tail.
        if before.is_some_and(|b| word(b) || b == b'$' || b == b':') {
            continue;
        }
        let keyword = k.trim_end_matches("::").to_string();
        let mut rest = &code[start + k.len()..];
        use_tree(&mut rest, vec![keyword], &mut out);
        i = code.len() - rest.len();
    }
    out
}

/// One use tree after `prefix::`: a name (and its own tail), a group, or a glob.
fn use_tree(rest: &mut &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    *rest = rest.trim_start();
    if let Some(r) = rest.strip_prefix('{') {
        *rest = r;
        loop {
            use_tree(rest, prefix.clone(), out);
            *rest = rest.trim_start();
            if let Some(r) = rest.strip_prefix(',') {
                *rest = r;
                if rest.trim_start().starts_with('}') {
                    *rest = rest.trim_start();
                }
            }
            *rest = rest.trim_start();
            if let Some(r) = rest.strip_prefix('}') {
                *rest = r;
                return;
            }
            if rest.is_empty()
                || !rest
                    .starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '{' || c == '*')
            {
                return;
            }
        }
    }
    if let Some(r) = rest.strip_prefix('*') {
        *rest = r;
        out.push(prefix);
        return;
    }
    let len = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    if len == 0 {
        out.push(prefix);
        return;
    }
    let name = &rest[..len];
    *rest = &rest[len..];
    let mut path = prefix;
    if name != "self" {
        path.push(name.to_string());
    }
    if let Some(r) = rest.strip_prefix("::") {
        *rest = r;
        use_tree(rest, path, out);
        return;
    }
    // `a as b`: the alias names nothing more.
    let after = rest.trim_start();
    if let Some(r) = after.strip_prefix("as ") {
        let r = r.trim_start();
        let alias = r
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(r.len());
        *rest = &r[alias..];
    }
    out.push(path);
}

/// The module a rooted path (`crate::a::b::C`, `super::x`, `self::y`) names from module
/// `at`: the deepest module with a file of its own along it.
fn resolve(path: &[String], at: &[String], files: &BTreeMap<Vec<String>, PathBuf>) -> Vec<String> {
    let mut module: Vec<String> = match path[0].as_str() {
        "crate" => Vec::new(),
        "self" => at.to_vec(),
        _ => at[..at.len().saturating_sub(1)].to_vec(),
    };
    let mut segments = path[1..].iter().peekable();
    while segments.peek().is_some_and(|s| *s == "super") {
        segments.next();
        module.pop();
    }
    for s in segments {
        module.push(s.clone());
        if !files.contains_key(&module) {
            module.pop();
            break;
        }
    }
    while !files.contains_key(&module) && module.pop().is_some() {}
    module
}

/// File → the other files of its crate it imports from (paths relative to `src`).
fn file_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files = module_files(src);
    let name = |m: &Vec<String>| {
        files[m]
            .strip_prefix(src)
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };
    files
        .iter()
        .map(|(at, f)| {
            let uses = rooted_paths(&code(f))
                .iter()
                .map(|p| resolve(p, at, &files))
                .filter(|m| m != at && files.contains_key(m))
                .map(|m| name(&m))
                .collect();
            (name(at), uses)
        })
        .collect()
}

#[test]
fn the_file_scanner_finds_cycles_inside_a_module() {
    let paths = rooted_paths(
        "use super::{gap::{A, B as C}, Event};\nuse self::x::*;\nlet v = crate::a::b::f();\n\
         pub(super) fn g() {}\nmy_crate::y::z(); $crate::q::r!();\nuse crate::{m, n::{self, o}};",
    );
    let p = |s: &str| s.split("::").map(String::from).collect::<Vec<_>>();
    assert_eq!(
        paths,
        vec![
            p("super::gap::A"),
            p("super::gap::B"),
            p("super::Event"),
            p("self::x"),
            p("crate::a::b::f"),
            p("crate::m"),
            p("crate::n"),
            p("crate::n::o"),
        ]
    );
    // Two files of one module import each other: `a/b.rs` through `super::`, `a/c.rs`
    // through `crate::`; `a.rs` re-exporting its children is its structure, not an import.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir(root.join("a")).unwrap();
    fs::create_dir(root.join("d")).unwrap();
    for (file, text) in [
        ("lib.rs", "pub mod a;\npub mod d;\n"),
        ("a.rs", "mod b;\nmod c;\npub use b::B;\npub struct A;\n"),
        ("a/b.rs", "use super::c::C;\nuse super::A;\npub struct B;\n"),
        ("a/c.rs", "use crate::a::b::B;\npub struct C;\n"),
        ("d/mod.rs", "mod e;\nuse crate::a::A;\n"),
        ("d/e.rs", "use super::super::a::B;\n"),
    ] {
        fs::write(root.join(file), text).unwrap();
    }
    let g = file_graph(root);
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(g["a/b.rs"], set(&["a.rs", "a/c.rs"]));
    assert_eq!(g["d/e.rs"], set(&["a.rs"]));
    assert_eq!(g["d/mod.rs"], set(&["a.rs"]));
    assert_eq!(cycles(&g), vec![vec!["a/b.rs", "a/c.rs"]]);
    // The top-level view sees no cycle there at all.
    assert!(cycles(&graph(root)).is_empty());
}

#[test]
fn no_file_is_in_an_import_cycle() {
    for src in [core_src(), src(), root().join("crates/sim/src")] {
        let g = file_graph(&src);
        assert!(g.len() > 5, "{}: {g:?}", src.display());
        let found = cycles(&g);
        assert!(
            found.is_empty(),
            "import cycles between files of {}: {found:?}",
            src.display()
        );
    }
}

/// The recovery's transitions are all made in its machine (`machine.rs` and the gap's steps
/// beside it in `machine/`), and ARCHITECTURE.md's table of them ("Recovery") is that file's
/// own.
#[test]
fn the_recovery_table_in_the_architecture_is_its_machine_file() {
    let machine = fs::read_to_string(core_src().join("recovery/machine.rs")).unwrap();
    let doc: Vec<&str> = machine
        .lines()
        .take_while(|l| l.starts_with("//!"))
        .map(|l| {
            l.strip_prefix("//! ")
                .unwrap_or(l.trim_start_matches("//!"))
        })
        .collect();
    let table = |lines: &[&str]| -> String {
        let start = lines
            .iter()
            .position(|l| *l == "```text")
            .expect("a text table");
        let len = lines[start + 1..]
            .iter()
            .position(|l| *l == "```")
            .expect("the table ends");
        lines[start + 1..start + 1 + len].join("\n")
    };
    let in_code = table(&doc);
    assert!(in_code.contains("Gap(Search) ──"), "{in_code}");
    let architecture = fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let section: Vec<&str> = architecture
        .lines()
        .skip_while(|l| !l.starts_with("### Recovery"))
        .collect();
    assert_eq!(table(&section), in_code);
    // No other file of the recovery assigns its state or a gap's stage.
    let mut others = Vec::new();
    for (m, f) in module_files(&core_src()) {
        let code = code(&f);
        if m.first().is_some_and(|s| s == "recovery")
            && m.get(1).is_some_and(|s| s != "machine")
            && (code.contains(".state =") || code.contains(".stage ="))
        {
            others.push(f.display().to_string());
        }
    }
    assert!(
        others.is_empty(),
        "recovery transitions outside its machine: {others:?}"
    );
}
