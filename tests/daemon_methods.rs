//! End-to-end: every method of `org.eboardd.Bridge1.Board`, its success and every error row
//! of the contract's method table, as named D-Bus errors with a message.
//!
//! They run against a board with no device: commands do not depend on the serial line.

mod common;

use std::collections::HashMap;

use common::Setup;
use common::events::{Event, Events};
use common::proxies::{self, BoardProxy, error_message, error_name};
use eboard_core::vocab::{GameResult, Termination};

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

async fn expect_error(result: zbus::Result<()>, name: &str) {
    let e = result.expect_err("the call must fail");
    assert_eq!(
        error_name(&e),
        format!("org.eboardd.Bridge1.Error.{name}"),
        "{e}"
    );
    assert!(
        error_message(&e).len() > 10,
        "the error says what to do: {e}"
    );
}

async fn board(s: &Setup) -> BoardProxy<'static> {
    proxies::fresh(&s.conn, "m").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_rows_of_the_method_table() {
    let s = Setup::start(&["--port", "/nonexistent/m"]).await;
    let b = board(&s).await;
    b.new_game().await.unwrap();

    expect_error(b.set_position("not a fen").await, "InvalidFen").await;
    expect_error(
        b.set_position("8/8/8/8/8/8/8/8 w - - 0 1").await,
        "InvalidFen",
    )
    .await;

    let mut bad = HashMap::new();
    bad.insert("Not a tag", "x");
    expect_error(b.set_tags(bad).await, "InvalidArgument").await;
    let mut bad = HashMap::new();
    bad.insert("Event", "a \"quoted\" name");
    expect_error(b.set_tags(bad).await, "InvalidArgument").await;
    let mut bad = HashMap::new();
    bad.insert("Event", "two\nlines");
    expect_error(b.set_tags(bad).await, "InvalidArgument").await;

    expect_error(b.set_rules("bullet").await, "InvalidArgument").await;
    expect_error(b.take_back().await, "NothingToTakeBack").await;
    expect_error(
        b.accept_claim("white", "threefold-repetition", "").await,
        "ClaimNotAvailable",
    )
    .await;
    expect_error(b.accept_claim("nobody", "x", "").await, "ClaimNotAvailable").await;
    expect_error(b.adjudicate("2-0", "typo").await, "InvalidArgument").await;
    expect_error(b.adjudicate("*", "not a result").await, "InvalidArgument").await;

    // Nothing of that touched the game.
    assert_eq!(b.fen().await.unwrap(), START);
    assert_eq!(b.result().await.unwrap(), "*");
    assert!(b.moves().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn methods_change_the_game_and_announce_it() {
    let s = Setup::start(&["--port", "/nonexistent/m"]).await;
    let b = board(&s).await;
    let mut events = Events::start(&s.conn, "m").await;

    b.new_game().await.unwrap();
    let ev = events.next_signal("GameStarted").await;
    assert_eq!(ev, Event::GameStarted { fen: START.into() });
    assert_eq!(b.state().await.unwrap(), "playing");

    let fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1";
    b.set_position(fen).await.unwrap();
    let ev = events.next_signal("GameStarted").await;
    assert_eq!(ev, Event::GameStarted { fen: fen.into() });
    assert_eq!(b.fen().await.unwrap(), fen);

    let mut tags = HashMap::new();
    tags.insert("White", "Anand, Viswanathan");
    tags.insert("Round", "3.1");
    b.set_tags(tags).await.unwrap();
    let pgn = b.pgn().await.unwrap();
    assert!(pgn.contains("[White \"Anand, Viswanathan\"]"), "{pgn}");
    assert!(pgn.contains("[Round \"3.1\"]"), "{pgn}");

    b.set_rules("blitz").await.unwrap();
    assert_eq!(b.rules().await.unwrap(), "blitz");

    b.adjudicate("1/2-1/2", "agreed by the arbiter")
        .await
        .unwrap();
    let ev = events.next_signal("GameEnded").await;
    assert_eq!(
        ev,
        Event::GameEnded {
            result: GameResult::Draw,
            termination: Termination::Adjudication
        }
    );
    assert_eq!(b.state().await.unwrap(), "finished");
    assert_eq!(b.termination().await.unwrap(), "adjudication");
}
