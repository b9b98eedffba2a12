//! The simulated Millennium board on a real pseudo-terminal, read through the core's codec
//! as a host would: the start-up settings, a whole game by hand, the LEDs, an unplug.

use std::time::Duration;

use eboard_core::chesslink::settings::AUTO_REPORT;
use eboard_core::chesslink::{
    AutoReport, Command, Decoder, LedPattern, ParityBy, Reply, StartupSettings, WireOrder,
};
use shakmaty::{Board, Position as _, Square};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, ReadHalf, WriteHalf};
use tokio::sync::mpsc;
use tokio_serial::SerialStream;

use super::*;
use crate::handling::Noise;

/// A host on the slave side: a reader task decoding replies, a writer.
struct Host {
    replies: mpsc::UnboundedReceiver<Reply>,
    writer: WriteHalf<SerialStream>,
}

impl Host {
    fn open(path: &std::path::Path) -> Host {
        let builder = tokio_serial::new(path.to_string_lossy(), 38_400);
        let port = SerialStream::open(&builder).expect("open the simulated board");
        let (reader, writer) = tokio::io::split(port);
        let (tx, replies) = mpsc::unbounded_channel();
        tokio::spawn(read_replies(reader, tx));
        Host { replies, writer }
    }

    async fn send(&mut self, command: &Command) {
        self.writer
            .write_all(&command.encode(ParityBy::Host))
            .await
            .expect("write to the simulated board");
    }

    /// Everything up to the first reply `wanted` accepts, stepping the board's time while
    /// waiting (within a generous wall-clock bound).
    async fn until(
        &mut self,
        sim: &ChessLinkHandle,
        wanted: impl Fn(&Reply) -> bool,
    ) -> Vec<Reply> {
        let mut got = Vec::new();
        for _ in 0..2_000 {
            while let Ok(reply) = self.replies.try_recv() {
                let done = wanted(&reply);
                got.push(reply);
                if done {
                    return got;
                }
            }
            sim.sleep(5).await;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("no awaited reply; got {got:?}");
    }

    async fn ask(&mut self, sim: &ChessLinkHandle, command: &Command) -> Vec<Reply> {
        self.send(command).await;
        let letter = command.reply_letter().expect("a command with a reply");
        self.until(sim, |r| Reply::chars(r)[0] == letter).await
    }
}

async fn read_replies(mut reader: ReadHalf<SerialStream>, tx: mpsc::UnboundedSender<Reply>) {
    let mut decoder = Decoder::new();
    let mut buf = [0u8; 1024];
    while let Ok(n) = reader.read(&mut buf).await {
        if n == 0 {
            break;
        }
        for reply in decoder.feed(&buf[..n]) {
            if tx.send(reply).is_err() {
                return;
            }
        }
    }
}

fn stepped(opts: MillenniumOptions) -> ChessLinkSimOptions {
    ChessLinkSimOptions {
        board: opts,
        speed: f64::INFINITY,
        ..ChessLinkSimOptions::default()
    }
}

fn boards(replies: &[Reply]) -> Vec<Board> {
    replies
        .iter()
        .filter_map(|r| match r {
            Reply::Status(scan) => Some(scan.board(WireOrder::H1First)),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_by_hand_reads_through_the_codec_as_its_positions() {
    let sim = ChessLinkSim::spawn(stepped(MillenniumOptions::default()))
        .await
        .unwrap();
    let mut host = Host::open(&sim.path());
    // What a driver does at start: the settings, read back, then a status.
    let settings = StartupSettings::default();
    let mut reads = Vec::new();
    for command in settings.commands() {
        for reply in host.ask(&sim, &command).await {
            if let Reply::Read { address, value } = reply {
                reads.push((address, value));
            }
        }
    }
    assert!(settings.mismatches(&reads).is_empty(), "{reads:?}");
    let start = host.ask(&sim, &Command::Status).await;
    assert_eq!(boards(&start).last(), Some(&Board::default()));

    let positions = sim
        .play_game(&crate::default_game(), 44, Noise::Noisy)
        .await
        .unwrap();
    // The version's answer comes after every report sent before it.
    let reports = boards(&host.ask(&sim, &Command::Version).await);
    let mut it = reports.iter();
    for (ply, pos) in positions.iter().enumerate() {
        assert!(
            it.any(|b| b == pos.board()),
            "ply {} never reported",
            ply + 1
        );
    }
    assert_eq!(reports.last(), positions.last().map(|p| p.board()));
    // Change reports only: no two in a row alike.
    let twice: Vec<usize> = (1..reports.len())
        .filter(|&i| reports[i] == reports[i - 1])
        .collect();
    assert!(
        twice.is_empty(),
        "{} reports, repeated at {twice:?}",
        reports.len()
    );
    let last = host.ask(&sim, &Command::Status).await;
    assert_eq!(
        boards(&last),
        vec![positions.last().unwrap().board().clone()]
    );
    let snap = sim.snapshot().await.unwrap();
    assert_eq!(snap.line.dropped_frames, 0);
    assert_eq!(snap.dropped_bytes, 0);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leds_are_reflected_and_an_unplug_keeps_the_options() {
    let link = std::env::temp_dir().join(format!("chesslink-sim-{}", std::process::id()));
    let sim = ChessLinkSim::spawn(ChessLinkSimOptions {
        link: Some(link.clone()),
        ..stepped(MillenniumOptions::default())
    })
    .await
    .unwrap();
    let mut host = Host::open(&sim.path());
    host.ask(
        &sim,
        &Command::Write {
            address: AUTO_REPORT,
            value: AutoReport::OnChange.code(),
        },
    )
    .await;
    let pattern = LedPattern::for_move(Square::G1, Square::F3, WireOrder::H1First);
    let got = host.ask(&sim, &Command::Leds(pattern)).await;
    assert_eq!(got.last(), Some(&Reply::LedsSet));
    let snap = sim.snapshot().await.unwrap();
    assert_eq!(snap.leds, pattern);
    assert_eq!(
        snap.leds.lit_squares(WireOrder::H1First),
        vec![Square::G1, Square::F3]
    );
    assert_eq!(
        host.ask(&sim, &Command::LedsOff).await.last(),
        Some(&Reply::LedsOff)
    );
    assert!(sim.snapshot().await.unwrap().leds.is_dark());
    let log = sim.led_log().await.unwrap();
    assert_eq!(
        log.iter().map(|(_, p)| *p).collect::<Vec<_>>()[..2],
        [pattern, LedPattern::default()]
    );

    // Unplugged: the host reads the end of the line, the link goes.
    sim.unplug().await.unwrap();
    assert!(!link.exists());
    let mut rest = Vec::new();
    while let Some(reply) = host.replies.recv().await {
        rest.push(reply);
    }
    assert!(!sim.snapshot().await.unwrap().plugged);
    sim.act(ChessLinkAction::Lift(Square::E2)).await.unwrap();
    sim.replug().await.unwrap();
    assert!(link.exists());
    let mut host = Host::open(&link);
    let version = host.ask(&sim, &Command::Version).await;
    assert!(matches!(version.last(), Some(Reply::Version(_))));
    let snap = sim.snapshot().await.unwrap();
    assert_eq!(
        snap.option_bytes[usize::from(AUTO_REPORT)],
        AutoReport::OnChange.code()
    );
    assert!(snap.leds.is_dark());
    let status = host.ask(&sim, &Command::Status).await;
    assert_eq!(boards(&status).last().unwrap().piece_at(Square::E2), None);
    sim.shutdown().await;
    assert!(!link.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_board_on_scaled_time_reports_a_lifted_piece() {
    let sim = ChessLinkSim::spawn(ChessLinkSimOptions {
        speed: 10.0,
        board: MillenniumOptions {
            reply_delay_ms: 30,
            ..MillenniumOptions::default()
        },
        ..ChessLinkSimOptions::default()
    })
    .await
    .unwrap();
    let mut host = Host::open(&sim.path());
    let asked = sim.now();
    host.ask(
        &sim,
        &Command::Write {
            address: AUTO_REPORT,
            value: AutoReport::OnChange.code(),
        },
    )
    .await;
    // The echo took the reply delay of board time at least.
    assert!(sim.now() >= asked + 30);
    sim.act(ChessLinkAction::Lift(Square::E2)).await.unwrap();
    let got = host
        .until(&sim, |r| {
            matches!(r, Reply::Status(s) if s.board(WireOrder::H1First).piece_at(Square::E2).is_none())
        })
        .await;
    assert!(matches!(got.last(), Some(Reply::Status(_))));
    sim.shutdown().await;
}
