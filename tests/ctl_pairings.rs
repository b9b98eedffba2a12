//! `eboardctl pairings` against the real eboardd on a private bus: a TRF-16 file and a CSV
//! set the tags of three numbered boards, UTF-8 names arrive unchanged on the bus, and a bad
//! file (a bad line, an unknown table number) sets nothing.

mod common;
mod ctl_support;

use common::proxies::fresh;
use common::{Bus, Daemon};
use ctl_support::ctl;

/// The shared TRF-16 fixture (also read by the unit tests of `cli::pairings`), with the CRLF
/// line ends Swiss-Manager writes.
fn trf() -> String {
    include_str!("fixtures/pairings/hall-open.trf").replace('\n', "\r\n")
}

struct Hall {
    _dir: tempfile::TempDir,
    bus: Bus,
    _daemon: Daemon,
    conn: zbus::Connection,
    files: std::path::PathBuf,
}

async fn hall() -> Hall {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("eboardd.toml");
    // Three numbered boards (not in number order) and one without a number; none plugged in.
    std::fs::write(
        &config,
        "[[board]]\nname = \"t3\"\nport = \"/nonexistent/c\"\nnumber = 3\n\
         [[board]]\nname = \"t1\"\nport = \"/nonexistent/a\"\nnumber = 1\n\
         [[board]]\nname = \"t2\"\nport = \"/nonexistent/b\"\nnumber = 2\n\
         [[board]]\nname = \"spare\"\nport = \"/nonexistent/d\"\n",
    )
    .unwrap();
    let bus = Bus::start(dir.path()).await;
    let mut daemon = Daemon::spawn(&bus, dir.path(), &["--config", config.to_str().unwrap()]);
    let conn = bus.client().await;
    daemon.wait_for_name(&conn).await;
    let files = dir.path().join("files");
    std::fs::create_dir_all(&files).unwrap();
    Hall {
        _dir: dir,
        bus,
        _daemon: daemon,
        conn,
        files,
    }
}

impl Hall {
    fn write(&self, name: &str, text: &str) -> String {
        let path = self.files.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    }

    async fn pgn(&self, id: &str) -> String {
        fresh(&self.conn, id).await.pgn().await.unwrap()
    }
}

fn tag(pgn: &str, name: &str) -> Option<String> {
    let prefix = format!("[{name} \"");
    pgn.lines()
        .find_map(|l| l.strip_prefix(&prefix)?.strip_suffix("\"]"))
        .map(str::to_string)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn numbers_and_variants_are_on_the_bus() {
    let h = hall().await;
    for (id, n) in [("t1", 1), ("t2", 2), ("t3", 3), ("spare", 0)] {
        let b = fresh(&h.conn, id).await;
        assert_eq!(b.number().await.unwrap(), n, "{id}");
        assert_eq!(b.variant().await.unwrap(), "standard", "{id}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trf_file_sets_three_boards() {
    let h = hall().await;
    let file = h.write("round.trf", &trf());
    let out = ctl(&h.bus.address, &["pairings", &file]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("t1 (table 1): White=François Dupont"),
        "{}",
        out.stdout
    );
    let t1 = h.pgn("t1").await;
    assert_eq!(
        tag(&t1, "White").as_deref(),
        Some("François Dupont"),
        "{t1}"
    );
    assert_eq!(tag(&t1, "Black").as_deref(), Some("Øystein Hansen"), "{t1}");
    assert_eq!(tag(&t1, "Round").as_deref(), Some("2.1"));
    assert_eq!(tag(&t1, "WhiteElo").as_deref(), Some("2300"));
    assert_eq!(tag(&t1, "BlackFideId").as_deref(), Some("1503014"));
    assert_eq!(tag(&t1, "Event").as_deref(), Some("Hall Open 2026"));
    assert_eq!(tag(&t1, "Date").as_deref(), Some("2026.12.02"));
    let t2 = h.pgn("t2").await;
    assert_eq!(tag(&t2, "White").as_deref(), Some("Poe, Edgar"));
    assert_eq!(tag(&t2, "Round").as_deref(), Some("2.2"));
    let t3 = h.pgn("t3").await;
    assert_eq!(tag(&t3, "White").as_deref(), Some("Šarūnas Šulskis"));
    assert_eq!(tag(&t3, "Black").as_deref(), Some("Roe, Richard"));
    assert_eq!(tag(&t3, "Round").as_deref(), Some("2.3"));
    assert_eq!(
        tag(&h.pgn("spare").await, "White").as_deref(),
        Some("?"),
        "an unnumbered board is left alone"
    );

    // An earlier round on request.
    let out = ctl(&h.bus.address, &["pairings", &file, "--round", "1"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let t1 = h.pgn("t1").await;
    assert_eq!(tag(&t1, "Round").as_deref(), Some("1.1"));
    assert_eq!(tag(&t1, "White").as_deref(), Some("Øystein Hansen"), "{t1}");
    assert_eq!(tag(&t1, "Black").as_deref(), Some("Doe, Jane"), "{t1}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_csv_sets_three_boards_and_a_bad_file_sets_nothing() {
    let h = hall().await;
    let csv = "board,white,black,round,white_elo,black_elo,event\n\
               1,Øystein Hansen,\"Dupont, François\",5,2410,2300,Hall Open\n\
               2,Šarūnas Šulskis,Doe,5,2500,,Hall Open\n\
               3,Roe,Poe,5,,,Hall Open\n";
    let file = h.write("round.csv", csv);
    let out = ctl(&h.bus.address, &["pairings", &file]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let before: Vec<String> = vec![h.pgn("t1").await, h.pgn("t2").await, h.pgn("t3").await];
    assert_eq!(
        tag(&before[0], "Black").as_deref(),
        Some("Dupont, François")
    );
    assert_eq!(tag(&before[1], "White").as_deref(), Some("Šarūnas Šulskis"));
    assert_eq!(tag(&before[2], "Round").as_deref(), Some("5.3"));

    // A TSV whose last line is bad: refused with the line named, nothing changes.
    let tsv = "board\twhite\tblack\tround\n1\tA\tB\t6\n2\tC\tD\t6\n3\tE\t\t6\n";
    let bad = h.write("bad.tsv", tsv);
    let out = ctl(&h.bus.address, &["pairings", &bad]).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("line 4") && out.stderr.contains("nothing was set"),
        "{}",
        out.stderr
    );
    // A table number no board has: refused, nothing changes.
    let unknown = h.write("unknown.csv", "board,white,black,round\n1,A,B,6\n4,C,D,6\n");
    let out = ctl(&h.bus.address, &["pairings", &unknown]).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("line 3") && out.stderr.contains("table number 4"),
        "{}",
        out.stderr
    );
    // A TRF file with a broken player line.
    let broken = trf().replacen("2500", "25x0", 1);
    let out = ctl(&h.bus.address, &["pairings", &h.write("bad.trf", &broken)]).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("line 5"), "{}", out.stderr);
    let after: Vec<String> = vec![h.pgn("t1").await, h.pgn("t2").await, h.pgn("t3").await];
    assert_eq!(before, after, "a refused file must not change any board");
}

/// A field of a pairings file is a tag value, bounded like every tag: a 2 MB name (or an
/// escape sequence) is refused with its line named; a 20 MB file is not even read; no board
/// changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pairings_file_with_a_huge_or_hostile_name_sets_nothing() {
    let h = hall().await;
    let good = h.write("good.csv", "board,white,black,round\n1,A,B,7\n2,C,D,7\n");
    let out = ctl(&h.bus.address, &["pairings", &good]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let before: Vec<String> = vec![h.pgn("t1").await, h.pgn("t2").await];

    let huge = format!(
        "board,white,black,round\n1,E,F,8\n2,{},H,8\n",
        "x".repeat(2 << 20)
    );
    let out = ctl(&h.bus.address, &["pairings", &h.write("huge.csv", &huge)]).await;
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("line 3")
            && out.stderr.contains("longer than 1024 bytes")
            && out.stderr.contains("nothing was set"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.len() < 1000, "the refused name is not echoed");
    let whole = format!(
        "board,white,black,round\n1,E,F,8\n2,{},H,8\n",
        "x".repeat(20 << 20)
    );
    let out = ctl(&h.bus.address, &["pairings", &h.write("whole.csv", &whole)]).await;
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("larger than 8 MiB") && out.stderr.contains("nothing was set"),
        "{}",
        out.stderr
    );

    let escape = "board,white,black,round\n1,\u{1b}[2J,F,8\n";
    let out = ctl(
        &h.bus.address,
        &["pairings", &h.write("escape.csv", escape)],
    )
    .await;
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("line 2") && out.stderr.contains("control character"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains('\u{1b}'), "{:?}", out.stderr);

    let after: Vec<String> = vec![h.pgn("t1").await, h.pgn("t2").await];
    assert_eq!(before, after, "a refused file must not change any board");
}
