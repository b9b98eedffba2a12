//! `eboardctl simulate` end to end: the command plays a PGN file on a virtual port behind a
//! link, a host reads it through tokio-serial and the decoder, and the field updates lead to
//! the game's final position.

mod sim_support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use eboard_core::dgt::Message;
use eboardd::cli::simulate::{SimulateArgs, run};
use shakmaty::{Chess, Position};
use sim_support::{Collector, decode_clean, open_port, reconstruct};
use tokio::io::AsyncWriteExt;

/// The game most of these tests play: it ends with castling.
const RUY_EXCHANGE: &str = "[Event \"t\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Bxc6 dxc6 5. O-O *\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulate_plays_a_pgn_file_on_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let (bytes, link) = simulate_on_link(
        dir.path(),
        RUY_EXCHANGE,
        &[
            "--speed",
            "1000",
            "--reversed",
            "--seed",
            "3",
            "--exit-when-done",
            // The clock in its FIDE mode with a US delay: 90 minutes, not the default 3+2.
            "--time-control",
            "40/5400d30:1800d30",
        ],
        &[&[0x40, 0x42, 0x4B]],
    )
    .await;
    let messages = decode_clean(&bytes);
    assert!(matches!(messages[0], Message::BoardDump(_)));
    let clock_hours: Vec<u8> = messages
        .iter()
        .filter_map(|m| match m {
            Message::ClockTimes(t) => Some(t.left.hours.max(t.right.hours)),
            _ => None,
        })
        .collect();
    assert!(
        !clock_hours.is_empty() && clock_hours.iter().all(|&h| h == 1),
        "{clock_hours:?}"
    );
    assert_eq!(
        reconstruct(&messages),
        eboard_core::board::Placement::from_board(final_position(RUY_EXCHANGE).board())
    );
    assert!(!link.exists(), "the link is removed on exit");
}

/// `--clock dgt-xl-quirky --clock-periods moves`: the clock answers a version request as an
/// XL 1.14, its display command with its (0x20, 0, 0, 0), and a game is played through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulate_offers_the_dgt_xl() {
    let dir = tempfile::tempdir().unwrap();
    // Update nice (acks are delivered only in an update mode), the clock's version, then
    // "CABLE" on its six digits.
    let display = eboard_core::dgt::Command::Clock(eboard_core::dgt::ClockCommand::Display(
        eboard_core::dgt::XlDisplay::from_text("CABLE"),
    ))
    .to_bytes();
    let version =
        eboard_core::dgt::Command::Clock(eboard_core::dgt::ClockCommand::Version).to_bytes();
    let (bytes, _) = simulate_on_link(
        dir.path(),
        "[Event \"t\"]\n\n1. e4 e5 2. Nf3 Nc6 *\n",
        &[
            "--speed",
            "1000",
            "--seed",
            "3",
            "--clean",
            "--exit-when-done",
            "--time-control",
            "40/6000+30:20/3000+30:600+30",
            "--clock",
            "dgt-xl-quirky",
            "--clock-periods",
            "moves",
        ],
        &[&[0x42, 0x4B], &version, &display],
    )
    .await;
    let messages = decode_clean(&bytes);
    let acks: Vec<[u8; 4]> = messages
        .iter()
        .filter_map(|m| match m {
            Message::ClockAck(a) => Some(a.bytes),
            _ => None,
        })
        .collect();
    assert!(
        acks.contains(&[0x10, 0x09, 0x1E, 0x00]),
        "XL 1.14: {acks:?}"
    );
    assert!(acks.contains(&[0x20, 0, 0, 0]), "the XL's quirk: {acks:?}");
    // Option 13: 100 minutes for the first period.
    assert!(
        messages
            .iter()
            .any(|m| matches!(m, Message::ClockTimes(t) if t.left.hours == 1
            && t.left.minutes == 40)),
        "1:40 on the clock"
    );
}

/// `--board chesslink`: a Millennium board on the link; a host switches its reports to "on
/// change" (what the daemon does) and the last status shows the game's final position.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulate_offers_a_chesslink_board() {
    use eboard_core::chesslink::{Command, Decoder, ParityBy, Reply, WireOrder};
    let dir = tempfile::tempdir().unwrap();
    let on_change = Command::Write {
        address: 2,
        value: 3,
    };
    let (bytes, link) = simulate_on_link(
        dir.path(),
        RUY_EXCHANGE,
        &[
            "--board",
            "chesslink",
            "--speed",
            "1000",
            "--exit-when-done",
        ],
        &[&on_change.encode(ParityBy::Host)],
    )
    .await;
    let mut decoder = Decoder::new();
    let replies: Vec<Reply> = decoder.feed(&bytes).collect();
    assert_eq!(decoder.stats().dropped_frames, 0);
    assert!(replies.contains(&Reply::Written {
        address: 2,
        value: 3
    }));
    let last = replies
        .iter()
        .rev()
        .find_map(|r| match r {
            Reply::Status(scan) => Some(scan.board(WireOrder::H1First)),
            _ => None,
        })
        .expect("statuses");
    assert_eq!(&last, final_position(RUY_EXCHANGE).board());
    // The DGT board's clock options mean nothing here: refused by name.
    let mut clocked = simulate_args(&["--board", "chesslink", "--time-control", "5400b5"]);
    clocked.exit_when_done = true;
    let e = run(clocked).unwrap_err().to_string();
    assert!(
        e.contains("--time-control") && e.contains("chesslink"),
        "{e}"
    );
    assert!(!link.exists(), "the link is removed on exit");
}

/// `eboardctl simulate`'s arguments as the command line gives them.
fn simulate_args(line: &[&str]) -> SimulateArgs {
    use clap::Parser as _;
    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: SimulateArgs,
    }
    Cli::try_parse_from(std::iter::once("simulate").chain(line.iter().copied()))
        .unwrap()
        .args
}

/// `eboardctl simulate` with the arguments `line` playing `pgn` (the file's text) on a link
/// in `dir`: a host opens the port as soon as the link exists, writes `host` to it and reads
/// until the command has ended. What the host read, and the link.
async fn simulate_on_link(
    dir: &Path,
    pgn: &str,
    line: &[&str],
    host: &[&[u8]],
) -> (Vec<u8>, PathBuf) {
    let pgn_path = dir.join("game.pgn");
    std::fs::write(&pgn_path, pgn).unwrap();
    let link = dir.join("link");
    let mut args = simulate_args(line);
    args.pgn = Some(pgn_path);
    args.link = Some(link.clone());
    let command = std::thread::spawn(move || run(args));
    for _ in 0..500 {
        if link.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let mut port = open_port(&link);
    for bytes in host {
        port.write_all(bytes).await.unwrap();
    }
    let collector = Collector::start(port);
    while !command.is_finished() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    command.join().unwrap().unwrap();
    let (chunks, _port) = collector.finish(Duration::from_millis(30)).await;
    (chunks.concat(), link)
}

/// The position the first game of `pgn` ends in.
fn final_position(pgn: &str) -> Chess {
    let game = &eboard_sim::parse_games(pgn)[0];
    let mut end: Chess = game.start_position().unwrap();
    for mv in game.moves().unwrap() {
        end.play_unchecked(mv);
    }
    end
}
