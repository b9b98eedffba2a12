//! End-to-end: the serial side — handshake, junk on the line, unplug/replug, a silent board,
//! and boards failing independently. Fake boards on ptys, the real binary, a private bus.
//! The link's timing (probe and loss deadlines, backoff steps, handshake pacing) is proved
//! exactly, with time as an argument, by `crates/core/tests/link_machine.rs`; here every wait
//! is on an event (a property, a byte written to the board), never on the clock.

mod common;

use common::board::FakeBoard;
use common::proxies::{self, BoardProxy};
use common::{Setup, wait_property};

async fn wait_connected(b: &BoardProxy<'_>, want: bool) {
    let mut s = b.receive_connected_changed().await;
    wait_property(&mut s, &format!("Connected = {want}"), |c| *c == want).await;
}

/// Wait until the daemon has written `bytes` to the board (at any time since it started).
async fn wait_sent(board: &FakeBoard, bytes: &[u8]) {
    board
        .wait_received(&format!("the daemon to send {bytes:02x?}"), |sent| {
            sent.windows(bytes.len()).any(|w| w == bytes)
        })
        .await;
}

fn count(haystack: &[u8], byte: u8) -> usize {
    haystack.iter().filter(|b| **b == byte).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handshake_identifies_the_board() {
    let dir = tempfile::tempdir().unwrap();
    let board = FakeBoard::new(dir.path(), "dgt.1");
    let port = board.path_str();
    let s = Setup::start_in(dir, &["--port", &port]).await;
    let b = proxies::board(&s.conn, "dgt_1").await;
    wait_connected(&b, true).await;
    let mut fw = b.receive_firmware_version_changed().await;
    wait_property(&mut fw, "FirmwareVersion", |v| v == "3.10").await;
    let mut sn = b.receive_serial_number_changed().await;
    wait_property(&mut sn, "SerialNumber", |v| v == "13116").await;
    // The handshake goes out one command at a time; wait for its last one (clock version).
    wait_sent(&board, &[0x2B, 0x03, 0x03, 0x09, 0x00]).await;
    let sent = board.received.lock().unwrap().clone();
    assert_eq!(
        sent.first(),
        Some(&0x4B),
        "update-nice mode comes first: {sent:02x?}"
    );
    for cmd in [0x4D, 0x45, 0x42] {
        assert!(
            sent.contains(&cmd),
            "handshake sends {cmd:#04x}: {sent:02x?}"
        );
    }
    assert!(!sent.contains(&0x49), "never asks for the EEPROM dump");
    assert!(!sent.contains(&0x4E), "never starts the boot loader");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn junk_on_the_line_does_not_hurt() {
    let dir = tempfile::tempdir().unwrap();
    let board = FakeBoard::new(dir.path(), "junk");
    let port = board.path_str();
    let mut s = Setup::start_in(dir, &["--port", &port]).await;
    let b = proxies::board(&s.conn, "junk").await;
    wait_connected(&b, true).await;

    // Garbage of every kind: stray data bytes, ids with absurd lengths, a frame cut short,
    // an EEPROM-dump header announcing 8 KB that never comes, bytes with every value.
    let mut junk: Vec<u8> = vec![0x00, 0x7F, 0x13, 0x8D, 0x7F, 0x7F, 0x86, 0x00, 0x43, 0x01];
    junk.extend_from_slice(&[0x8F, 0x3E, 0x03]);
    junk.extend((0u8..=255).rev());
    junk.extend_from_slice(&[0x93, 0x00]);
    for _ in 0..20 {
        board.send(&junk).await;
    }
    // Then a real message, which must still be understood.
    board.identity.lock().unwrap().version = (3, 11);
    board.send(&[0x93, 0x00, 0x05, 3, 11]).await;
    let mut fw = b.receive_firmware_version_changed().await;
    wait_property(&mut fw, "FirmwareVersion after junk", |v| v == "3.11").await;
    assert!(s.daemon.exited().is_none(), "{}", s.daemon.stderr());
    assert!(b.connected().await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unplugged_board_reconnects_and_others_are_undisturbed() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = FakeBoard::new(dir.path(), "a");
    let other = FakeBoard::new(dir.path(), "b");
    let (pa, pb) = (a.path_str(), other.path_str());
    // A third board whose device never appears must not hold the others back.
    let s = Setup::start_in(
        dir,
        &["--port", &pa, "--port", &pb, "--port", "/nonexistent/c"],
    )
    .await;
    let ba = proxies::board(&s.conn, "a").await;
    let bb = proxies::board(&s.conn, "b").await;
    wait_connected(&ba, true).await;
    wait_connected(&bb, true).await;
    let handshakes = count(&a.received.lock().unwrap(), 0x4B);

    a.unplug();
    wait_connected(&ba, false).await;

    assert!(bb.connected().await.unwrap(), "board b is not affected");

    a.plug();
    wait_connected(&ba, true).await;

    // The handshake is paced: its board dump request follows the first answer.
    a.wait_received("a dump request after the new handshake", |sent| {
        let last = sent.iter().rposition(|b| *b == 0x4B).unwrap_or(0);
        sent[last..].contains(&0x42)
    })
    .await;
    let after = count(&a.received.lock().unwrap(), 0x4B);
    assert!(
        after > handshakes,
        "the handshake is sent again after replugging"
    );
    assert!(bb.connected().await.unwrap());
    let c = proxies::board(&s.conn, "c").await;
    assert!(!c.connected().await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_board_counts_as_lost_until_it_answers() {
    let dir = tempfile::tempdir().unwrap();
    let board = FakeBoard::new(dir.path(), "quiet");
    let port = board.path_str();
    let s = Setup::start_in(dir, &["--port", &port]).await;
    let b = proxies::board(&s.conn, "quiet").await;
    wait_connected(&b, true).await;

    // The board stops answering (a hung USB adapter keeps the device node).
    let before = board.received.lock().unwrap().len();
    *board.answering.lock().unwrap() = false;
    wait_connected(&b, false).await;
    // Probes first, gives up later: the daemon asked the silent board for its version
    // before declaring it lost (when, exactly: crates/core/tests/link_machine.rs).
    let probes = board.received.lock().unwrap().len();
    let asked = board.received.lock().unwrap()[before..].to_vec();
    assert!(
        asked.contains(&0x4D),
        "probed before giving up: {asked:02x?}"
    );

    *board.answering.lock().unwrap() = true;
    wait_connected(&b, true).await;
    assert!(board.received.lock().unwrap().len() > probes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_only_never_writes() {
    let dir = tempfile::tempdir().unwrap();
    let board = FakeBoard::new(dir.path(), "shared");
    // A board that is written to, beside it: its probe is the witness that a silent line
    // was watched long enough to be probed.
    let witness = FakeBoard::new(dir.path(), "witness");
    let config = dir.path().join("eboardd.toml");
    std::fs::write(
        &config,
        format!(
            "[[board]]\nname = \"shared\"\nport = \"{}\"\nlisten_only = true\n\n\
             [[board]]\nname = \"witness\"\nport = \"{}\"\n",
            board.path_str(),
            witness.path_str()
        ),
    )
    .unwrap();
    let config = config.display().to_string();
    let s = Setup::start_in(dir, &["--config", &config]).await;
    let b = proxies::board(&s.conn, "shared").await;
    // Nobody asks, so the board is heard only when it speaks by itself.
    board.send(&[0x93, 0x00, 0x05, 3, 10]).await;
    wait_connected(&b, true).await;
    let mut fw = b.receive_firmware_version_changed().await;
    wait_property(&mut fw, "FirmwareVersion", |v| v == "3.10").await;
    // A frame cut on the line makes the session want the whole board: a listen-only link
    // does not ask for it, and the next message is still read.
    board
        .send(&[0x91, 0x00, 0x08, b'1', 0x93, 0x00, 0x05, 3, 11])
        .await;
    wait_property(&mut fw, "FirmwareVersion after a cut frame", |v| {
        v == "3.11"
    })
    .await;
    // The witness answered its handshake, then went quiet and was probed (a second version
    // request): both boards have been silent long enough for a probe.
    witness
        .wait_received("the witness board to be probed", |sent| {
            count(sent, 0x4D) >= 2
        })
        .await;
    assert!(
        board.received.lock().unwrap().is_empty(),
        "listen-only wrote {:02x?}",
        board.received.lock().unwrap()
    );
    assert!(
        b.connected().await.unwrap(),
        "silence is not a lost board when listen-only"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_writes_the_raw_input() {
    let dir = tempfile::tempdir().unwrap();
    let board = FakeBoard::new(dir.path(), "rec");
    let record = dir.path().join("record");
    let (port, rec) = (board.path_str(), record.display().to_string());
    let s = Setup::start_in(dir, &["--port", &port, "--record", &rec]).await;
    let b = proxies::board(&s.conn, "rec").await;
    wait_connected(&b, true).await;
    let mut sn = b.receive_serial_number_changed().await;
    wait_property(&mut sn, "SerialNumber", |v| v == "13116").await;
    let text = std::fs::read_to_string(common::record_file(&record)).unwrap();
    let chunks = eboard_core::capture::parse(&text).unwrap();
    let bytes: Vec<u8> = chunks.iter().flat_map(|c| c.bytes.clone()).collect();
    let serial = [0x91, 0x00, 0x08, b'1', b'3', b'1', b'1', b'6'];
    assert!(
        bytes.windows(serial.len()).any(|w| w == serial),
        "{bytes:02x?}"
    );
    assert!(chunks.iter().all(|c| c.at_ms.is_some()), "timestamped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn properties_changed_names_exactly_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let board = FakeBoard::new(dir.path(), "pc");
    let port = board.path_str();
    let s = Setup::start_in(dir, &["--port", &port]).await;
    let b = proxies::board(&s.conn, "pc").await;
    wait_connected(&b, true).await;
    let mut fw = b.receive_firmware_version_changed().await;
    wait_property(&mut fw, "FirmwareVersion", |v| v == "3.10").await;

    let mut events = common::events::Events::start(&s.conn, "pc").await;
    board.send(&[0x93, 0x00, 0x05, 4, 2]).await;
    let changed = events
        .next_matching("PropertiesChanged", |e| {
            matches!(e, common::events::Ev::Changed(..))
        })
        .await;
    let common::events::Ev::Changed(names, values) = changed else {
        unreachable!()
    };
    assert_eq!(names, ["FirmwareVersion"]);
    assert_eq!(
        String::try_from(values["FirmwareVersion"].clone()).unwrap(),
        "4.02"
    );
    // The same message again changes nothing, so nothing is announced.
    board.send(&[0x93, 0x00, 0x05, 4, 2]).await;
    board
        .send(&[0x91, 0x00, 0x08, b'5', b'4', b'3', b'2', b'1'])
        .await;
    let changed = events
        .next_matching("PropertiesChanged", |e| {
            matches!(e, common::events::Ev::Changed(..))
        })
        .await;
    assert!(
        matches!(&changed, common::events::Ev::Changed(n, _) if n == &["SerialNumber"]),
        "{changed:?}"
    );
}
