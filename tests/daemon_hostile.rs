//! End-to-end: hostile `AddBoard` calls on a private bus. A port that can never be a board —
//! a path of 5,000 characters, a regular file such as `/etc/passwd`, a directory, a relative
//! path — is refused with the contract's named `InvalidArgument` and a sentence saying why,
//! and nothing is added: no board object appears and nothing is remembered in `boards.json`.
//! Ptys (what the simulator and the tests use) and ttys are still accepted.
//!
//! And a hostile device on a serial port: text with a NUL or an escape byte in it (which the
//! bus would answer by dropping the daemon, and every board with it) reaches the bus as
//! printable text; the daemon and its other boards go on.

mod common;

use std::collections::BTreeSet;
use std::os::fd::AsRawFd;

use common::board::FakeBoard;
use common::proxies::{self, ManagerProxy};
use common::{Setup, wait_property};
use zbus::fdo::ObjectManagerProxy;

const INVALID_ARGUMENT: &str = "org.eboardd.Bridge1.Error.InvalidArgument";

/// The board objects the ObjectManager lists.
async fn served(conn: &zbus::Connection) -> BTreeSet<String> {
    let om = ObjectManagerProxy::builder(conn)
        .destination("org.eboardd.Bridge1")
        .path("/org/eboardd/Bridge1")
        .build()
        .await
        .unwrap();
    om.get_managed_objects()
        .await
        .unwrap()
        .keys()
        .map(|p| p.to_string())
        .filter(|p| p.starts_with("/org/eboardd/Bridge1/Board/"))
        .collect()
}

fn remembered(s: &Setup) -> String {
    std::fs::read_to_string(s.dir.path().join("state").join("boards.json")).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_board_refuses_what_cannot_be_a_board() {
    let mut s = Setup::start(&["--port", "/nonexistent/configured"]).await;
    let manager = ManagerProxy::new(&s.conn).await.unwrap();
    let before = served(&s.conn).await;
    assert_eq!(
        before,
        BTreeSet::from(["/org/eboardd/Bridge1/Board/configured".to_string()])
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "not a board").unwrap();
    let long = format!("/dev/{}", "x".repeat(5000));
    for (port, needle) in [
        (long.as_str(), "at most 4095"),
        ("/etc/passwd", "a regular file"),
        (file.to_str().unwrap(), "a regular file"),
        ("/etc", "a directory"),
        (dir.path().to_str().unwrap(), "a directory"),
        ("ttyACM0", "absolute"),
        ("", "must not be empty"),
        ("/", "a directory"),
    ] {
        let e = manager.add_board(port).await.unwrap_err();
        let shown: String = port.chars().take(40).collect();
        assert_eq!(proxies::error_name(&e), INVALID_ARGUMENT, "{shown:?}: {e}");
        let message = proxies::error_message(&e);
        assert!(message.contains(needle), "{shown:?}: {message}");
        assert!(message.len() < 400, "{shown:?}: the message stays short");
    }
    assert_eq!(served(&s.conn).await, before, "nothing was added");
    assert_eq!(remembered(&s), "", "nothing was remembered");

    // A pty is a board: accepted, served and remembered.
    let pty = nix::pty::openpty(None, None).unwrap();
    let tty = std::fs::read_link(format!("/proc/self/fd/{}", pty.slave.as_raw_fd())).unwrap();
    let path = manager.add_board(tty.to_str().unwrap()).await.unwrap();
    let mut after = before.clone();
    after.insert(path.to_string());
    assert_eq!(served(&s.conn).await, after);
    assert!(
        remembered(&s).contains(tty.to_str().unwrap()),
        "{}",
        remembered(&s)
    );
    assert!(s.daemon.exited().is_none(), "{}", s.daemon.stderr());
}

/// Printable text: no control character of any kind (C0, DEL, C1) and no NUL.
fn printable(s: &str) -> bool {
    !s.chars().any(char::is_control)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_board_sending_nul_and_escape_bytes_cannot_end_the_daemon() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = FakeBoard::new(dir.path(), "hostile");
    // Its answer to the serial-number request: 91 00 08 31 32 00 34 35.
    hostile.identity.lock().unwrap().serial = "12\u{0}45".into();
    let witness = FakeBoard::new(dir.path(), "witness");
    let (ph, pw) = (hostile.path_str(), witness.path_str());
    let mut s = Setup::start_in(dir, &["--port", &ph, "--port", &pw]).await;
    let h = proxies::board(&s.conn, "hostile").await;
    let w = proxies::board(&s.conn, "witness").await;

    let mut sn = h.receive_serial_number_changed().await;
    let short = wait_property(&mut sn, "the short serial number", |v| !v.is_empty()).await;
    assert_eq!(short, "12?45");

    // A long serial number with a NUL and a terminal escape (clear screen) in it. The
    // decoder makes it printable; the daemon keeps publishing the short one (the long one
    // only stands in for a board that reports none), checked below once the witness moved.
    let long_frame: &[u8] = b"\xa2\x00\x0d123\x00\x1b[2J78";
    let (decoded, _) = eboard_core::dgt::Decoder::decode_all(long_frame);
    let [eboard_core::dgt::Message::LongSerialNumber(long)] = decoded.as_slice() else {
        panic!("one long serial number: {decoded:?}");
    };
    assert!(printable(long), "{long:?}");
    assert_eq!(long, "123??[2J78");
    hostile.send(long_frame).await;

    // The daemon is still on the bus, says why in its log, and the other board goes on: a
    // pawn lifted from e2 on it is seen.
    assert!(s.daemon.exited().is_none(), "{}", s.daemon.stderr());
    let mut placement = w.receive_placement_changed().await;
    wait_property(&mut placement, "the witness's start position", |p| {
        p == "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
    })
    .await;
    witness.send(&common::board::field_update(52, 0)).await;
    wait_property(&mut placement, "e2 lifted on the witness", |p| {
        p == "rnbqkbnr/pppppppp/8/8/8/8/PPPP1PPP/RNBQKBNR"
    })
    .await;
    assert!(
        h.connected().await.unwrap(),
        "the hostile board stays served"
    );
    let fresh = proxies::fresh(&s.conn, "hostile").await;
    assert_eq!(fresh.serial_number().await.unwrap(), "12?45");
    assert!(
        s.daemon.stderr().contains("not printable ASCII"),
        "the log says why: {}",
        s.daemon.stderr()
    );
    assert!(s.daemon.exited().is_none(), "{}", s.daemon.stderr());
}

/// Sizes are bounded where they enter: a 20 MB `White`, a 65th tag, a tag value with an
/// escape in it, a FEN whose fullmove number does not fit, a 20 MB FEN, a 20 MB adjudication
/// reason — each refused with
/// the contract's named error and a short message, and the daemon keeps its name, the game
/// and the tags it had.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_tags_and_fen_numbers_are_refused_and_nothing_is_lost() {
    use std::collections::HashMap;
    const INVALID_FEN: &str = "org.eboardd.Bridge1.Error.InvalidFen";

    let dir = tempfile::tempdir().unwrap();
    let board = FakeBoard::new(dir.path(), "tb");
    let port = board.path_str();
    let mut s = Setup::start_in(dir, &["--port", &port]).await;
    let b = proxies::board(&s.conn, "tb").await;
    let mut placement = b.receive_placement_changed().await;
    wait_property(&mut placement, "the start position", |p| {
        p == "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
    })
    .await;
    // 1. e4 on the board.
    board.send(&common::board::field_update(52, 0)).await;
    board.send(&common::board::field_update(36, 1)).await;
    let mut moves = b.receive_moves_changed().await;
    wait_property(&mut moves, "1. e4", |m| m == &["e4"]).await;
    b.set_tags(HashMap::from([("White", "Alice")]))
        .await
        .unwrap();

    let check = |e: zbus::Error, name: &str, needle: &str| {
        assert_eq!(proxies::error_name(&e), name, "{e}");
        let message = proxies::error_message(&e);
        assert!(message.contains(needle), "{message}");
        assert!(
            message.len() < 400,
            "a short message: {} bytes",
            message.len()
        );
    };
    let huge = "x".repeat(20 << 20);
    let e = b.set_tags(HashMap::from([("White", huge.as_str())])).await;
    check(e.unwrap_err(), INVALID_ARGUMENT, "longer than 1024 bytes");
    let names: Vec<String> = (0..65).map(|i| format!("Extra{i}")).collect();
    let many: HashMap<&str, &str> = names.iter().map(|n| (n.as_str(), "v")).collect();
    check(
        b.set_tags(many).await.unwrap_err(),
        INVALID_ARGUMENT,
        "at most 64 tags",
    );
    let e = b.set_tags(HashMap::from([("Black", "\u{1b}[2J")])).await;
    check(e.unwrap_err(), INVALID_ARGUMENT, "control character");
    let long_name = format!("A{}", "b".repeat(300));
    let e = b.set_tags(HashMap::from([(long_name.as_str(), "v")])).await;
    check(e.unwrap_err(), INVALID_ARGUMENT, "not a PGN tag name");

    let e = b
        .set_position("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 99999999999")
        .await;
    check(e.unwrap_err(), INVALID_FEN, "fullmove number");
    let e = b
        .set_position(&format!("8/8/8/8/8/8/8/8 w - - 0 1{huge}"))
        .await;
    check(e.unwrap_err(), INVALID_FEN, "at most");
    // An adjudication's reason goes into the PGN as well: the same bound.
    let e = b.adjudicate("1-0", &huge).await;
    check(e.unwrap_err(), INVALID_ARGUMENT, "longer than 1024 bytes");

    // Nothing was lost: the same daemon, game and tags.
    assert!(s.daemon.exited().is_none(), "{}", s.daemon.stderr());
    s.daemon.wait_for_name(&s.conn).await;
    let fresh = proxies::fresh(&s.conn, "tb").await;
    assert_eq!(fresh.moves().await.unwrap(), ["e4"]);
    assert_eq!(fresh.result().await.unwrap(), "*");
    let pgn = fresh.pgn().await.unwrap();
    assert!(pgn.contains("[White \"Alice\"]"), "{pgn}");
    assert!(!pgn.contains("Extra0") && !pgn.contains('\u{1b}'), "{pgn}");
    assert!(pgn.len() < 4096, "{} bytes", pgn.len());
}
