//! The pure session end to end: sensor steps and clock readings in, contract events out.

use eboard_core::board::{Orientation, Placement};
use eboard_core::contract::{Claim, IllegalCounts};
use eboard_core::session::{Command, Event, Input, RecordFact, Session, SessionConfig};
use eboard_core::vocab::{ClaimKind, CommandError, GameResult, Player, Rules};
use eboard_sim::handling::{Handling, Noise, SensorStep};
use shakmaty::san::San;
use shakmaty::{Chess, Position, Square};

mod session_support;

/// Drives a session like a board with a clock: White's time on the left display.
use session_support::Clocked as Rig;

impl Rig {
    fn step(&mut self, step: SensorStep) {
        match step {
            SensorStep::Lift(sq) => {
                self.field(sq, None);
            }
            SensorStep::Place(sq, piece) => {
                self.field(sq, Some(piece));
            }
            SensorStep::Pause(ms) => {
                self.wait(ms);
            }
            SensorStep::Press => {
                self.press();
            }
        }
        self.now += 40;
    }
}

fn config() -> SessionConfig {
    SessionConfig {
        name: "board-1".into(),
        ..SessionConfig::default()
    }
}

const GAME: &str = "e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7 Re1 b5 Bb3 d6 c3 O-O h3 Nb8 d4 Nbd7 \
                    c4 c6 cxb5 axb5 Nc3 Bb7 Bg5 b4 Nb1 h6 Bh4 c5 dxe5 Nxe4 Bxe7 Qxe7 exd6 Qf6";

/// Play `sans` from the start position with noisy hands.
fn play(rig: &mut Rig, sans: &str, seed: u64) -> Chess {
    play_with(
        rig,
        Chess::default(),
        sans,
        Handling::new(seed, Noise::Noisy),
    )
}

/// Play `sans` from `pos` with `hands`, step by step into the rig.
fn play_with(rig: &mut Rig, mut pos: Chess, sans: &str, mut hands: Handling) -> Chess {
    for san in sans.split_whitespace() {
        let mv = san.parse::<San>().unwrap().to_move(&pos).unwrap();
        for step in hands.steps(&pos, mv) {
            rig.step(step);
        }
        pos.play_unchecked(mv);
    }
    pos
}

#[test]
fn a_noisy_game_comes_out_exact_in_both_orientations() {
    for (orientation, seed) in [(Orientation::Normal, 1), (Orientation::Reversed, 2)] {
        let mut rig = Rig::new(config(), orientation);
        rig.clock();
        rig.dump(&Placement::start());
        assert!(matches!(
            rig.events.first(),
            Some(Event::GameStarted { .. })
        ));
        let end = play(&mut rig, GAME, seed);
        let expected: Vec<String> = GAME.split_whitespace().map(String::from).collect();
        assert_eq!(rig.played(), expected, "{orientation:?}");
        let view = rig.session.view();
        assert_eq!(view.state, "playing");
        assert_eq!(view.moves, expected);
        assert!(view.in_sync);
        assert_eq!(
            view.fen,
            shakmaty::fen::Fen::from_position(&end, shakmaty::EnPassantMode::Legal).to_string()
        );
        assert!(view.pgn.contains("[Board \"board-1\"]"));
        assert!(view.pgn.contains("[%clk"), "{}", view.pgn);
        assert!(view.clock_connected);
    }
}

#[test]
fn restore_from_the_journal_gives_the_same_game() {
    let mut rig = Rig::new(config(), Orientation::Normal);
    rig.clock();
    rig.dump(&Placement::start());
    play(&mut rig, "e4 e5 Nf3 Nc6 Bb5", 3);
    // A restored session cannot correct the last move any more: let it become final (the
    // board still for 2 s) so that both show it in the PGN.
    rig.step(SensorStep::Pause(eboard_core::tracker::FINAL_STILL_MS));
    assert!(
        rig.events
            .iter()
            .any(|e| matches!(e, Event::Record(RecordFact::Snapshot { .. })))
    );
    // The journal is the JSON of every event.
    let journal: Vec<Event> = rig
        .events
        .iter()
        .map(|e| serde_json::from_str(&serde_json::to_string(e).unwrap()).unwrap())
        .collect();
    let restored = Session::restore(config(), &journal);
    let (a, b) = (rig.session.view(), restored.view());
    assert_eq!(a.fen, b.fen);
    assert_eq!(a.moves, b.moves);
    // Clock stamps of a press are journalled with the next change of the record, so the
    // last press's `%clk` may be older in the restored game; everything else is identical.
    let without_clk = |pgn: &str| {
        pgn.split("{[%clk ")
            .map(|part| part.split_once("]}").map_or(part, |(_, rest)| rest))
            .collect::<String>()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(without_clk(&a.pgn), without_clk(&b.pgn));
    assert_eq!(
        a.pgn.matches("[%clk").count(),
        b.pgn.matches("[%clk").count()
    );
    assert_eq!(b.state, "playing");
}

/// A clocked game after 1. e4 e5 (hands seeded with `seed`) in which White's bishop f1 has
/// just jumped to h3 over g2 — an illegal placement — and stood there for a second, the clock
/// not yet pressed.
fn bishop_jumps_over_g2(seed: u64) -> Rig {
    let mut rig = Rig::new(config(), Orientation::Normal);
    rig.clock();
    rig.dump(&Placement::start());
    play(&mut rig, "e4 e5", seed);
    rig.step(SensorStep::Lift(Square::F1));
    rig.step(SensorStep::Place(
        Square::H3,
        shakmaty::Piece::from_char('B').unwrap(),
    ));
    rig.step(SensorStep::Pause(1_000));
    rig
}

#[test]
fn an_illegal_placement_is_alerted_before_the_press_and_completed_by_it() {
    let mut rig = bishop_jumps_over_g2(4);
    let alert = rig.events.iter().find_map(|e| match e {
        Event::IllegalPlacement {
            player,
            description,
            ..
        } => Some((*player, description.clone())),
        _ => None,
    });
    let (player, description) = alert.expect("an IllegalPlacement before the press");
    assert_eq!(player, "white");
    assert!(!description.is_empty());
    assert!(!rig.session.view().pending_illegal.is_empty());
    assert!(
        !rig.events
            .iter()
            .any(|e| matches!(e, Event::IllegalMoveCompleted { .. }))
    );
    rig.press();
    assert!(rig.events.iter().any(|e| matches!(
        e,
        Event::IllegalMoveCompleted { player, count: 1, .. } if player == "white"
    )));
    let view = rig.session.view();
    assert_eq!(view.illegal_moves, IllegalCounts { white: 1, black: 0 });
    assert!(
        view.claims
            .iter()
            .any(|c| c.player == "black" && c.kind == "illegal-move"),
        "{:?}",
        view.claims
    );
}

#[test]
fn commands_are_refused_with_the_contract_errors() {
    let mut s = Session::new(config());
    let now = 0;
    assert!(matches!(
        s.handle(
            Input::Command(Command::SetPosition("not a fen".into())),
            now
        ),
        Err(CommandError::InvalidFen(_))
    ));
    assert!(matches!(
        s.handle(
            Input::Command(Command::SetTags(vec![("Bad Tag".into(), "x".into())])),
            now
        ),
        Err(CommandError::InvalidArgument(_))
    ));
    assert!(matches!(
        s.handle(
            Input::Command(Command::SetTags(vec![("Event".into(), "a\"b".into())])),
            now
        ),
        Err(CommandError::InvalidArgument(_))
    ));
    assert!(matches!(
        edge(&mut s, Command::set_rules("bullet"), now),
        Err(CommandError::InvalidArgument(_))
    ));
    assert!(matches!(
        s.handle(Input::Command(Command::TakeBack), now),
        Err(CommandError::NothingToTakeBack(_))
    ));
    assert!(matches!(
        s.handle(
            Input::Command(Command::AcceptClaim {
                player: Player::White,
                kind: ClaimKind::ThreefoldRepetition,
                detail: String::new()
            }),
            now
        ),
        Err(CommandError::ClaimNotAvailable(_))
    ));
    assert!(matches!(
        edge(&mut s, Command::adjudicate("2-0", String::new()), now),
        Err(CommandError::InvalidArgument(_))
    ));
    // `*` is a result word but no decision: the arbiter refuses it.
    assert!(matches!(
        edge(&mut s, Command::adjudicate("*", String::new()), now),
        Err(CommandError::InvalidArgument(_))
    ));
    // An unknown player or kind names no available claim; for RejectClaim it is invalid.
    assert!(matches!(
        edge(&mut s, Command::accept_claim("purple", "fifty-moves", String::new()), now),
        Err(CommandError::ClaimNotAvailable(m)) if m.contains("\"white\" or \"black\"")
    ));
    assert!(matches!(
        edge(
            &mut s,
            Command::reject_claim("white", "resign", String::new()),
            now
        ),
        Err(CommandError::InvalidArgument(_))
    ));
    // Nothing refused changed anything.
    assert_eq!(s.view().state, "waiting");
}

#[test]
fn operator_commands_drive_the_game() {
    let mut s = Session::new(config());
    let fen = "7k/8/8/8/8/8/8/R6K w - - 0 1";
    let ev = s
        .handle(Input::Command(Command::SetPosition(fen.into())), 0)
        .unwrap();
    assert!(
        ev.iter()
            .any(|e| matches!(e, Event::GameStarted { fen: f } if f == fen))
    );
    assert_eq!(s.view().state, "playing");
    s.handle(
        Input::Command(Command::SetTags(vec![("White".into(), "Carlsen".into())])),
        0,
    )
    .unwrap();
    assert!(s.view().pgn.contains("[White \"Carlsen\"]"));
    s.handle(Input::Command(Command::SetRules(Rules::Blitz)), 0)
        .unwrap();
    assert_eq!(s.view().rules, "blitz");
    let ev = s
        .handle(
            Input::Command(Command::Adjudicate {
                result: GameResult::WhiteWins,
                reason: "Black resigned".into(),
            }),
            0,
        )
        .unwrap();
    assert!(
        ev.iter()
            .any(|e| matches!(e, Event::GameEnded { result, .. } if result == "1-0"))
    );
    assert_eq!(s.view().state, "finished");
    assert_eq!(s.view().termination, "adjudication");
}

#[test]
fn an_illegal_move_that_stands_lets_the_game_go_on_from_the_board() {
    let mut rig = bishop_jumps_over_g2(5);
    // White presses the clock with the bishop on h3: a completed illegal move.
    rig.press();
    assert_eq!(
        rig.session.view().illegal_moves,
        IllegalCounts { white: 1, black: 0 }
    );
    // Black does not claim: he replies Ng8-f6 and presses. The illegal move stands.
    rig.step(SensorStep::Lift(Square::G8));
    rig.step(SensorStep::Place(
        Square::F6,
        shakmaty::Piece::from_char('n').unwrap(),
    ));
    rig.step(SensorStep::Pause(1_000));
    rig.press();
    let view = rig.session.view().clone();
    assert!(
        view.in_sync,
        "the board's position is the game's now: {view:?}"
    );
    assert_eq!(view.turn, "white");
    assert_eq!(view.state, "playing");
    assert!(view.claims.iter().all(|c| c.kind != "illegal-move"));
    assert!(view.pgn.contains("Illegal move stood"), "{}", view.pgn);
    // Play goes on from there: White's bishop takes d7 (check).
    let before = rig.played().len();
    rig.step(SensorStep::Lift(Square::H3));
    rig.step(SensorStep::Lift(Square::D7));
    rig.step(SensorStep::Place(
        Square::D7,
        shakmaty::Piece::from_char('B').unwrap(),
    ));
    assert_eq!(rig.played().len(), before + 1, "{:?}", rig.events);
    assert_eq!(rig.played().last().map(String::as_str), Some("Bxd7+"));
    assert!(
        !rig.events
            .iter()
            .skip(1)
            .any(|e| matches!(e, Event::GameStarted { .. })),
        "the game was not restarted"
    );
}

#[test]
fn a_threefold_claim_by_an_intended_move_is_offered_and_accepted() {
    let mut rig = Rig::new(config(), Orientation::Normal);
    rig.clock();
    rig.dump(&Placement::start());
    play(&mut rig, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1", 6);
    assert_eq!(
        rig.played().len(),
        7,
        "repeating the start position is play"
    );
    let claim = Claim {
        player: "black".into(),
        kind: "threefold-repetition".into(),
        detail: "f6g8".into(),
    };
    assert!(
        rig.session.view().claims.contains(&claim),
        "{:?}",
        rig.session.view().claims
    );
    let events = rig
        .session
        .handle(
            Input::Command(
                Command::accept_claim(&claim.player, &claim.kind, claim.detail).unwrap(),
            ),
            rig.now,
        )
        .unwrap();
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::GameEnded { result, termination } if result == "1/2-1/2" && termination == "claim"
        )),
        "{events:?}"
    );
    assert_eq!(rig.session.view().state, "finished");
}

#[test]
fn an_unplugged_board_never_lets_a_flag_fall_by_silence() {
    let mut rig = Rig::new(config(), Orientation::Normal);
    rig.left_ms = 10_000;
    rig.clock();
    rig.dump(&Placement::start());
    play(&mut rig, "e4 e5", 7);
    rig.feed(Input::Link(false));
    // A minute passes with nothing heard: far beyond White's time, but the link is down.
    for _ in 0..60 {
        rig.now += 1_000;
        rig.feed(Input::Tick);
    }
    rig.feed(Input::Link(true));
    rig.now += 1_000;
    rig.feed(Input::Tick);
    assert!(
        !rig.events
            .iter()
            .any(|e| matches!(e, Event::FlagFell { .. } | Event::GameEnded { .. })),
        "{:?}",
        rig.events
    );
    assert_eq!(rig.session.view().state, "playing");
    // With the link up and the clock heard, its silence counts again.
    rig.clock();
    for _ in 0..30 {
        rig.now += 1_000;
        rig.feed(Input::Tick);
    }
    assert!(
        rig.events
            .iter()
            .any(|e| matches!(e, Event::FlagFell { player } if player == "white")),
        "{:?}",
        rig.events
    );
}

// ----- the result gesture ----------------------------------------------------------------------

/// White Ke3 + Ra1 against Black Ke6.
const ENDGAME: &str = "8/8/4k3/8/8/4K3/8/R7 w - - 0 1";

fn endgame_rig() -> (Rig, Chess) {
    let mut rig = Rig::new(config(), Orientation::Normal);
    rig.clock();
    let events = rig
        .session
        .handle(
            Input::Command(Command::SetPosition(ENDGAME.into())),
            rig.now,
        )
        .unwrap();
    rig.events.extend(events);
    let pos: Chess = ENDGAME
        .parse::<shakmaty::fen::Fen>()
        .unwrap()
        .into_position(shakmaty::CastlingMode::Standard)
        .unwrap();
    rig.dump(&Placement::from_board(pos.board()));
    (rig, pos)
}

/// Play `sans` from `pos` with clean hands.
fn play_from(rig: &mut Rig, pos: Chess, sans: &str, seed: u64) -> Chess {
    play_with(rig, pos, sans, Handling::new(seed, Noise::Clean))
}

/// Lift the king on `from` and put it on `to`.
fn king(rig: &mut Rig, from: Square, to: Square, white: bool) {
    let k = shakmaty::Piece::from_char(if white { 'K' } else { 'k' }).unwrap();
    rig.step(SensorStep::Lift(from));
    rig.step(SensorStep::Place(to, k));
}

fn ended(rig: &Rig) -> Option<(String, String)> {
    rig.events.iter().find_map(|e| match e {
        Event::GameEnded {
            result,
            termination,
        } => Some((result.to_string(), termination.to_string())),
        _ => None,
    })
}

/// Let time pass in ticks of 100 ms (each step adds 40 ms of its own).
fn wait(rig: &mut Rig, ms: u64) {
    for _ in 0..ms / 100 {
        rig.step(SensorStep::Pause(60));
    }
}

#[test]
fn the_result_gesture_gives_the_three_results() {
    for (white_to, black_to, result) in [
        (Square::E4, Square::D5, "1-0"),     // both light
        (Square::D4, Square::E5, "0-1"),     // both dark
        (Square::E4, Square::D4, "1/2-1/2"), // one of each
    ] {
        let (mut rig, _) = endgame_rig();
        // White's king steps to the centre: a legal move, published at once.
        king(&mut rig, Square::E3, white_to, true);
        assert_eq!(
            rig.played().len(),
            1,
            "{result}: the first king move is a move"
        );
        king(&mut rig, Square::E6, black_to, false);
        wait(&mut rig, 1_500);
        assert_eq!(ended(&rig), None, "{result}: not before two seconds");
        wait(&mut rig, 700);
        assert_eq!(
            ended(&rig),
            Some((result.to_string(), "result-gesture".to_string()))
        );
        // The king move is not part of the game; no illegal placement was alerted.
        assert!(rig.played().is_empty(), "{result}: {:?}", rig.played());
        assert!(
            !rig.events
                .iter()
                .any(|e| matches!(e, Event::IllegalPlacement { .. })),
            "{result}"
        );
        let view = rig.session.view();
        assert_eq!(view.termination, "result-gesture");
        assert_eq!(view.result, result);
        assert_eq!(view.state, "finished");
        assert!(
            view.fen.starts_with("8/8/4k3/8/8/4K3/8/R7 w"),
            "{}",
            view.fen
        );
        assert!(
            view.pgn.contains(&format!("[Result \"{result}\"]")),
            "{}",
            view.pgn
        );
    }
}

#[test]
fn a_gesture_whose_first_king_move_is_illegal() {
    let (mut rig, pos) = endgame_rig();
    play_from(&mut rig, pos, "Ra8 Kd7", 5);
    // Ke3-d5 is no king move: the gesture starts with an illegal placement.
    king(&mut rig, Square::E3, Square::D5, true);
    king(&mut rig, Square::D7, Square::E4, false);
    wait(&mut rig, 2_200);
    assert_eq!(
        ended(&rig),
        Some(("1-0".to_string(), "result-gesture".to_string()))
    );
    assert_eq!(rig.played(), ["Ra8", "Kd7"]);
    assert_eq!(rig.session.view().moves, ["Ra8", "Kd7"]);
}

#[test]
fn a_king_walk_to_the_centre_is_no_gesture() {
    let (mut rig, pos) = endgame_rig();
    // Both kings march to the centre squares in turn, as in a real endgame; never both.
    play_from(&mut rig, pos, "Ke4 Kd6 Kd4 Ke6 Kc5 Ke5", 6);
    wait(&mut rig, 3_000);
    assert_eq!(ended(&rig), None);
    assert_eq!(rig.played(), ["Ke4", "Kd6", "Kd4", "Ke6", "Kc5", "Ke5"]);
    // Kings on the centre squares for less than two seconds, then back: nothing either.
    king(&mut rig, Square::C5, Square::D4, true);
    wait(&mut rig, 1_000);
    king(&mut rig, Square::D4, Square::C5, true);
    wait(&mut rig, 3_000);
    assert_eq!(ended(&rig), None);
    assert_eq!(rig.session.view().state, "playing");
}

// ----- Chess960 ---------------------------------------------------------------------------------

fn chess960_fen(n: usize) -> String {
    let white: String = eboard_core::tracker::chess960::back_rank_of(n)
        .iter()
        .collect();
    format!(
        "{}/pppppppp/8/8/8/8/PPPPPPPP/{white} w - - 0 1",
        white.to_lowercase()
    )
}

#[test]
fn chess960_games_from_fifty_start_positions_come_out_exact() {
    use rand::{Rng, SeedableRng};
    let mut castles = [0usize; 2]; // king side, queen side
    let mut rng = rand::rngs::SmallRng::seed_from_u64(960);
    for game in 0..50 {
        let n = rng.random_range(0..960);
        let fen = chess960_fen(n);
        let board = fen
            .parse::<shakmaty::fen::Fen>()
            .unwrap()
            .into_setup()
            .board;
        let start = eboard_core::tracker::chess960::start_position(&board).expect("a 960 start");
        let orientation = if game % 2 == 0 {
            Orientation::Normal
        } else {
            Orientation::Reversed
        };
        let config = SessionConfig {
            variant: eboard_core::vocab::Variant::Chess960,
            ..config()
        };
        let mut rig = Rig::new(config, orientation);
        rig.clock();
        rig.dump(&Placement::from_board(&board));
        let started = rig.events.iter().find_map(|e| match e {
            Event::GameStarted { fen } => Some(fen.clone()),
            _ => None,
        });
        let started = started.unwrap_or_else(|| panic!("#{n} {fen}: no GameStarted"));
        assert_eq!(
            started,
            shakmaty::fen::Fen::from_position(&start, shakmaty::EnPassantMode::Legal).to_string()
        );
        // Random play that castles whenever it can.
        let mut pos = start.clone();
        let mut hands = Handling::new(game, Noise::Noisy);
        let mut sans = Vec::new();
        let mut ucis = Vec::new();
        for _ in 0..30 {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            let castling: Vec<_> = legal.iter().filter(|m| m.is_castle()).copied().collect();
            let mv = if !castling.is_empty() {
                castling[rng.random_range(0..castling.len())]
            } else {
                legal[rng.random_range(0..legal.len())]
            };
            if let Some(side) = mv.castling_side() {
                castles[side as usize] += 1;
            }
            sans.push(shakmaty::san::SanPlus::from_move(pos.clone(), mv).to_string());
            ucis.push(mv.to_uci(shakmaty::CastlingMode::Chess960).to_string());
            for step in hands.steps(&pos, mv) {
                rig.step(step);
            }
            pos.play_unchecked(mv);
            if pos.is_game_over() {
                break;
            }
        }
        if rig.played() != sans && std::env::var_os("DEBUG960").is_some() {
            for e in &rig.events {
                if !matches!(e, Event::Record(_)) {
                    eprintln!("{e:?}");
                }
            }
        }
        assert_eq!(rig.played(), sans, "#{n} {fen} {orientation:?}");
        // UCI as the record holds it (and MovePlayed carried): castling is king-takes-rook.
        let record: Vec<String> = rig
            .session
            .game()
            .current_moves()
            .iter()
            .map(|m| m.uci.clone())
            .collect();
        assert_eq!(record, ucis, "#{n}");
        let view = rig.session.view();
        assert!(view.pgn.contains("[Variant \"Chess960\"]"), "{}", view.pgn);
        assert!(view.pgn.contains("[SetUp \"1\"]"), "{}", view.pgn);
        assert!(
            view.pgn.contains(&format!("[FEN \"{started}\"]")),
            "{}",
            view.pgn
        );
        // The journal restores the game exactly.
        let journal: Vec<Event> = rig
            .events
            .iter()
            .map(|e| serde_json::from_str(&serde_json::to_string(e).unwrap()).unwrap())
            .collect();
        let restored = Session::restore(rig.session.config().clone(), &journal);
        assert_eq!(restored.view().moves, view.moves, "#{n}");
        assert_eq!(restored.view().fen, view.fen, "#{n}");
    }
    assert!(
        castles[0] > 5 && castles[1] > 5,
        "both castlings played: {castles:?}"
    );
}

/// A command as a caller's words: parsed as the D-Bus edge parses them, then handled.
fn edge(
    s: &mut Session,
    command: Result<Command, CommandError>,
    now: u64,
) -> Result<Vec<Event>, CommandError> {
    s.handle(Input::Command(command?), now)
}

/// The session renders every board property, the link's included: `Name` and `Port` from its
/// configuration, `Connected` from the last link input.
#[test]
fn the_view_shows_the_name_the_port_and_the_link() {
    let mut session = Session::new(SessionConfig {
        port: "/dev/ttyACM3".into(),
        ..config()
    });
    assert_eq!(session.view().name, "board-1");
    assert_eq!(session.view().port, "/dev/ttyACM3");
    assert!(!session.view().connected, "no link yet");
    session.handle(Input::Link(true), 0).unwrap();
    assert!(session.view().connected);
    session.handle(Input::Link(false), 10).unwrap();
    assert!(!session.view().connected);
    let restored = Session::restore(session.config().clone(), &[]);
    assert!(
        !restored.view().connected,
        "a restored session waits for its link"
    );
    assert_eq!(restored.view().port, "/dev/ttyACM3");
}

/// A move made the moment the opponent presses, read in the same scan: the reply's field
/// updates reach the session before the press. Plays `first` (from, to), then `reply`, then
/// the first mover's press, then the replier's.
fn reply_read_before_the_press(rig: &mut Rig, first: (Square, Square), reply: (Square, Square)) {
    let mut board = Placement::start().to_board();
    let fen: shakmaty::fen::Fen = rig.session.view().fen.parse().unwrap();
    board.clone_from(&fen.as_setup().board);
    for (from, to) in [first, reply] {
        let piece = board.remove_piece_at(from).expect("a piece to move");
        board.set_piece_at(to, piece);
        rig.field(from, None);
        rig.now += 30;
        rig.field(to, Some(piece));
        rig.now += 5;
    }
    rig.press();
    rig.now += 300;
    rig.press();
}

/// A session with the start position read and the clock heard.
fn ready_with_clock() -> Rig {
    let mut rig = Rig::new(config(), Orientation::Normal);
    rig.dump(&Placement::start());
    rig.clock();
    rig.wait(1_000);
    rig
}

fn assert_no_completed_illegal_move(rig: &Rig) {
    assert!(
        !rig.events
            .iter()
            .any(|e| matches!(e, Event::IllegalMoveCompleted { .. })),
        "{:?}",
        rig.events
    );
}

#[test]
fn a_reply_read_before_the_first_press_teaches_the_clock_sides_right() {
    let mut rig = ready_with_clock();
    // 1. e4 e5, both read before White's press: the first press of the game is White's.
    reply_read_before_the_press(&mut rig, (Square::E2, Square::E4), (Square::E7, Square::E5));
    rig.wait(3_000);
    reply_read_before_the_press(&mut rig, (Square::G1, Square::F3), (Square::B8, Square::C6));
    rig.wait(3_000);
    let view = rig.session.view();
    assert_eq!(view.moves, ["e4", "e5", "Nf3", "Nc6"]);
    assert_eq!(
        view.illegal_moves,
        IllegalCounts::default(),
        "{:?}",
        rig.events
    );
    assert_no_completed_illegal_move(&rig);
    // The clock's sides were learnt right: White's time is the left display's (7 s later,
    // as a running display can only lose the time that passed).
    rig.now += 4_000;
    rig.left_ms -= 7_000;
    rig.clock();
    let view = rig.session.view();
    assert_eq!(view.white_time_ms, rig.left_ms);
    assert_eq!(view.black_time_ms, rig.right_ms);
}

#[test]
fn a_reply_read_before_the_press_mid_game_is_no_press_without_a_move() {
    let mut rig = ready_with_clock();
    play(&mut rig, "e4 e5", 3);
    rig.wait(3_000);
    reply_read_before_the_press(&mut rig, (Square::G1, Square::F3), (Square::B8, Square::C6));
    rig.wait(3_000);
    reply_read_before_the_press(&mut rig, (Square::F1, Square::C4), (Square::G8, Square::F6));
    rig.wait(3_000);
    let view = rig.session.view();
    assert_eq!(view.moves, ["e4", "e5", "Nf3", "Nc6", "Bc4", "Nf6"]);
    assert_no_completed_illegal_move(&rig);
}
