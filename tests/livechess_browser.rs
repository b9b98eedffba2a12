//! The lichess connector's handshake in a real headless Chromium (Debian's `chromium`):
//! a page served from a test origin let in by `--allow-origin` opens its own WebSocket to
//! `eboardctl livechess`, asks `eboards` (id 1), subscribes (id 2) to feed 1 with the first
//! board's serial number and sends `setup`, while the simulator plays a game through eboardd
//! on a pty and a private bus. Every SAN list the page received parses from the start
//! position, and the last one is the game. The same page from an origin not let in is
//! refused at the handshake.

mod common;
mod livechess_support;
mod web_support;

use axum::response::Html;
use common::rig::moves;
use livechess_support::Rig;
use shakmaty::san::San;
use shakmaty::{Chess, Position as _};
use tokio::net::TcpListener;
use web_support::browser::Browser;

/// The connector page (see its comment).
const PAGE: &str = include_str!("livechess_support/connector.html");

/// A Najdorf with captures and castling on both sides.
const GAME: &[&str] = &[
    "e4", "c5", "Nf3", "d6", "d4", "cxd4", "Nxd4", "Nf6", "Nc3", "a6", "Be2", "e5", "Nb3", "Be7",
    "O-O", "O-O", "Be3", "Be6", "Qd2", "Nbd7",
];

/// Serves the page on `listener` (its own origin, `http://127.0.0.1:PORT`).
fn serve_page(listener: TcpListener) {
    let app = axum::Router::new().route("/", axum::routing::get(|| async { Html(PAGE) }));
    tokio::spawn(async move { axum::serve(listener, app).await });
}

/// Every list parses as standard SAN from the start position, move by move.
fn replay(list: &[String]) -> Result<(), String> {
    let mut pos = Chess::default();
    for san in list {
        let parsed: San = san.parse().map_err(|e| format!("{san}: {e}"))?;
        let mv = parsed
            .to_move(&pos)
            .map_err(|e| format!("{san} in {list:?}: {e}"))?;
        pos.play_unchecked(mv);
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lichess_handshake_in_chromium_follows_a_game() {
    let allowed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let foreign = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let allowed_origin = format!("http://127.0.0.1:{}", allowed.local_addr().unwrap().port());
    let foreign_origin = format!("http://127.0.0.1:{}", foreign.local_addr().unwrap().port());
    serve_page(allowed);
    serve_page(foreign);
    let rig = Rig::start(1, &["--allow-origin", &allowed_origin, "--allow-setup"]).await;
    rig.livechess.wait_active(1).await;
    let ws = rig.livechess.ws_url();

    let mut browser = Browser::launch().await;

    // From an origin not let in: the handshake is refused, nothing is answered.
    browser
        .goto(&format!("{foreign_origin}/?ws={ws}&setup=1"))
        .await;
    browser
        .wait_for(
            "the refused socket to close",
            "window.__state && window.__state.closed",
        )
        .await;
    let state = browser.eval("JSON.stringify(window.__state)").await;
    let state: serde_json::Value = serde_json::from_str(state.as_str().unwrap()).unwrap();
    assert_eq!(state["opened"], false, "{state}");
    assert_eq!(state["serialnr"], serde_json::Value::Null);

    // From the allowed origin: the connector's handshake, then the game.
    browser
        .goto(&format!("{allowed_origin}/?ws={ws}&setup=1"))
        .await;
    browser
        .wait_for(
            "the handshake and setup",
            "window.__state && window.__state.subscribed && window.__state.setup",
        )
        .await;
    let mut sc = rig.scenario(0);
    sc.run(&[moves(GAME)]).await.expect("the game");
    browser
        .wait_for(
            "the whole game in the page",
            &format!(
                "window.__state.lists.length && \
                 window.__state.lists[window.__state.lists.length - 1].length === {}",
                GAME.len()
            ),
        )
        .await;
    let state = browser.eval("JSON.stringify(window.__state)").await;
    let state: serde_json::Value = serde_json::from_str(state.as_str().unwrap()).unwrap();
    assert_eq!(state["errors"], serde_json::json!([]), "{state}");
    let lists: Vec<Vec<String>> = serde_json::from_value(state["lists"].clone()).unwrap();
    assert!(lists.len() > 2, "the page saw the game grow: {lists:?}");
    for list in &lists {
        replay(list).unwrap_or_else(|e| panic!("a list the page received does not parse: {e}"));
    }
    let last = lists.last().unwrap();
    assert_eq!(
        last,
        &GAME.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    );
    // Every list the page saw starts where the one before it left off or corrects its tail:
    // lichess plays the difference.
    assert!(
        state["starts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s == "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
    );
    // The board the page saw last is the game's placement.
    let mut pos = Chess::default();
    for san in GAME {
        let mv = san.parse::<San>().unwrap().to_move(&pos).unwrap();
        pos.play_unchecked(mv);
    }
    let placement =
        shakmaty::fen::Fen::from_position(&pos, shakmaty::EnPassantMode::Legal).to_string();
    let boards = state["boards"].as_array().unwrap();
    assert_eq!(
        boards.last().unwrap(),
        placement.split(' ').next().unwrap(),
        "board follows the pieces"
    );
}
