//! The pages in a real headless Chromium (Debian's `chromium`), fed by `eboardctl serve` from
//! the real eboardd with simulated boards: the overlay marks the last move's squares and
//! shows the clocks counting down and the players; the hall shows an alert card for an
//! illegal placement and clears it when the pieces are put back; the board page shows the
//! question a still board two move orders explain leaves, and its answer. Screenshots are left in
//! `target/web-screenshots/` for people to look at.

mod common;
mod web_support;

use std::collections::HashMap;

use common::rig::moves;
use eboard_sim::Step;
use shakmaty::Square;
use web_support::Rig;
use web_support::browser::{Browser, screenshot_dir};

/// How the pages name a board's default rules (`standard`, `fide-2023`, variant `standard`):
/// in words, the standard variant left out.
const RULES_TEXT: &str = "Standard play \u{b7} FIDE Laws 2023";

/// Sets PGN tags on a board through the contract's `SetTags`.
async fn set_tags(conn: &zbus::Connection, id: &str, tags: &[(&str, &str)]) {
    let tags: HashMap<&str, &str> = tags.iter().copied().collect();
    conn.call_method(
        Some("org.eboardd.Bridge1"),
        format!("/org/eboardd/Bridge1/Board/{id}").as_str(),
        Some("org.eboardd.Bridge1.Board"),
        "SetTags",
        &(tags,),
    )
    .await
    .expect("SetTags");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlay_hall_and_board_pages_render_live_data() {
    let mut rig = Rig::start(&["web.o1", "web.o2"], &[]).await;
    rig.wait_ready(&["web_o1", "web_o2"]).await;
    set_tags(
        &rig.conn,
        "web_o1",
        &[
            ("White", "Carlsen, Magnus"),
            ("Black", "Nepomniachtchi, Ian"),
            ("WhiteElo", "2830"),
            ("BlackElo", "2795"),
            ("Event", "City Open"),
        ],
    )
    .await;
    set_tags(
        &rig.conn,
        "web_o2",
        &[("White", "Ding, Liren"), ("Black", "Gukesh, D")],
    )
    .await;
    let sims = std::mem::take(&mut rig.sims);
    let mut sc = web_support::scenario(&sims[0], 0);
    sc.run(&[moves(&["e4", "e5", "Nf3"])]).await.expect("moves");

    let mut browser = Browser::launch().await;

    // --- the overlay ---
    browser.background(Some((0, 0, 0, 0.0))).await;
    browser.goto(&rig.serve.url("/overlay/web_o1")).await;
    browser
        .wait_for(
            "the last move marked",
            "document.querySelector('rect.lm-from[data-square=\"g1\"]') && \
             document.querySelector('rect.lm-to[data-square=\"f3\"]') && \
             document.querySelectorAll('rect.lastmove').length === 2 && \
             document.querySelector('text.piece[data-square=\"f3\"]')?.dataset.piece === 'N'",
        )
        .await;
    browser
        .wait_for(
            "the players",
            "document.querySelector('.plate.white .name')?.textContent === 'Carlsen, Magnus' && \
             document.querySelector('.plate.black .name')?.textContent === 'Nepomniachtchi, Ian'",
        )
        .await;
    // Black's clock runs after White's Nf3 and its press: it counts down in the page between
    // the bridge's updates.
    let clock =
        |side: &str| format!("Number(document.querySelector('.plate .clock.{side}').dataset.ms)");
    browser
        .wait_for(
            "black's clock running",
            "document.querySelector('.plate .clock.black').classList.contains('running')",
        )
        .await;
    let first = browser.eval(&clock("black")).await.as_f64().unwrap();
    assert!(first > 0.0);
    browser
        .wait_for(
            "black's clock to count down",
            &format!("{} < {first} - 250", clock("black")),
        )
        .await;
    let text = browser
        .eval("document.querySelector('.plate .clock.white').textContent")
        .await;
    assert!(
        text.as_str().is_some_and(|t| t.contains(':')),
        "white's clock shows a time: {text}"
    );
    let bg = browser
        .eval("getComputedStyle(document.body).backgroundColor")
        .await;
    assert_eq!(bg, "rgba(0, 0, 0, 0)", "the overlay is transparent");
    let top_left = browser
        .eval("document.querySelector('rect.sq').dataset.square")
        .await;
    assert_eq!(top_left, "a8", "White at the bottom");
    browser.screenshot("overlay-transparent.png").await;
    // The same over a dark, video-like background, as OBS would composite it.
    browser.background(Some((40, 60, 80, 1.0))).await;
    browser.screenshot("overlay.png").await;

    browser.goto(&rig.serve.url("/overlay/web_o1?flip=1")).await;
    browser
        .wait_for(
            "the flipped diagram",
            "document.querySelector('rect.lastmove')",
        )
        .await;
    let top_left = browser
        .eval("document.querySelector('rect.sq').dataset.square")
        .await;
    assert_eq!(top_left, "h1", "?flip=1 puts Black at the bottom");
    let top_plate = browser
        .eval("document.querySelector('.plate').classList.contains('white')")
        .await;
    assert_eq!(top_plate, true, "White's plate at the top when flipped");
    browser.screenshot("overlay-flipped.png").await;

    // The bridge restarts (its clients keep the page open): the page reconnects by itself and
    // shows the next move, with no reload.
    browser.eval("window.__same_page = true").await;
    let listen = rig.serve.base.trim_start_matches("http://").to_owned();
    rig.serve.kill().await;
    rig.serve = web_support::Serve::start_on(&rig.bus.address, &listen, &[]).await;
    sc.run(&[moves(&["Nc6"])]).await.expect("move");
    browser
        .wait_for(
            "the move made while the bridge restarted",
            "window.__same_page === true && \
             document.querySelector('rect.lm-from[data-square=\"b8\"]') && \
             document.querySelector('rect.lm-to[data-square=\"c6\"]')",
        )
        .await;
    browser.background(None).await;

    // --- the hall, with an illegal placement standing on web_o2 ---
    browser.goto(&rig.serve.url("/")).await;
    browser
        .wait_for(
            "two cards",
            "document.querySelectorAll('.card').length === 2",
        )
        .await;
    let mut sc2 = web_support::scenario(&sims[1], 1);
    sc2.run(&[Step::IllegalPlacement {
        from: Square::E2,
        to: Square::E5,
    }])
    .await
    .expect("illegal placement");
    let alarm = "[...document.querySelectorAll('.card.alarm')].some(c => \
                 c.dataset.board === 'web_o2' && \
                 c.querySelector('.alert.alarm')?.textContent.includes('Illegal placement'))";
    browser.wait_for("the alert card", alarm).await;
    let order = browser
        .eval("[...document.querySelectorAll('.card')].map(c => c.dataset.board).join(',')")
        .await;
    assert_eq!(order, "web_o1,web_o2", "table order");
    let quiet = browser
        .eval("document.querySelector('.card[data-board=\"web_o1\"]').classList.contains('alarm')")
        .await;
    assert_eq!(quiet, false, "only the board with the problem is alerted");
    let rules = browser
        .eval("document.querySelector('.card[data-board=\"web_o1\"]').title")
        .await;
    assert_eq!(
        rules, RULES_TEXT,
        "a card names the rules as the board page does"
    );
    browser.screenshot("hall-alert.png").await;
    browser.size(1280, 800).await;
    browser.screenshot("hall-tablet.png").await;
    browser.size(1920, 1080).await;

    // A board whose cable is pulled is flagged too, and cleared when it is back.
    sims[0].unplug().await.expect("unplug");
    let unplugged = "document.querySelector('.card[data-board=\"web_o1\"] .alert.warn')\
                     ?.textContent.includes('Board disconnected')";
    browser.wait_for("the disconnected card", unplugged).await;
    browser.screenshot("hall-disconnected.png").await;
    sims[0].replug().await.expect("replug");
    browser
        .wait_for(
            "the disconnected alert to clear",
            "!document.querySelector('.card[data-board=\"web_o1\"] .alert')",
        )
        .await;

    // --- the arbiter's page for that board ---
    browser.size(1920, 1080).await;
    browser.goto(&rig.serve.url("/board/web_o2")).await;
    browser
        .wait_for(
            "the pending illegal placement",
            "document.querySelector('.alert.big.alarm')?.textContent.includes('Illegal placement') && \
             document.querySelector('.sensed svg')",
        )
        .await;
    browser.screenshot("board-illegal.png").await;

    // Pieces put back: the alert clears by itself.
    sc2.run(&[Step::CorrectIllegal]).await.expect("correct");
    browser
        .wait_for(
            "the alert to clear",
            "!document.querySelector('.alert.alarm')",
        )
        .await;
    browser.goto(&rig.serve.url("/board/web_o1")).await;
    browser
        .wait_for("the board page", "document.querySelector('ol.moves li')")
        .await;
    let summary = browser
        .eval("document.querySelector('.hall-head .summary').textContent")
        .await;
    assert_eq!(summary, RULES_TEXT, "the subtitle names the rules in words");
    browser.screenshot("board.png").await;

    // --- a phone: no page is wider than the screen, every diagram, card and plate is on it ---
    browser.size(390, 844).await;
    let pages = [
        (
            "/",
            "document.querySelector('.card svg.diagram')",
            "hall-phone.png",
        ),
        (
            "/board/web_o1",
            "document.querySelector('ol.moves li')",
            "board-phone.png",
        ),
        (
            "/overlay/web_o1",
            "document.querySelector('.plate.black .name')?.textContent === 'Nepomniachtchi, Ian'",
            "overlay-phone.png",
        ),
    ];
    for (path, ready, shot) in pages {
        browser.goto(&rig.serve.url(path)).await;
        browser.wait_for(path, ready).await;
        let fits = browser
            .eval(
                "document.documentElement.scrollWidth <= window.innerWidth && \
                 [...document.querySelectorAll('svg.diagram, .card, .plate, .player')].every(e => { \
                   const r = e.getBoundingClientRect(); \
                   return r.left >= 0 && r.right <= window.innerWidth; }) && \
                 [...document.querySelectorAll('.plate')].every(e => \
                   e.getBoundingClientRect().bottom <= window.innerHeight)",
            )
            .await;
        browser.screenshot(shot).await;
        assert_eq!(fits, true, "{path} does not fit a 390x844 screen");
    }
    eprintln!("screenshots in {}", screenshot_dir().display());
}

/// Calls a board method of the contract with `args`.
async fn board_call<B>(conn: &zbus::Connection, id: &str, method: &str, args: &B)
where
    B: serde::Serialize + zbus::zvariant::DynamicType,
{
    conn.call_method(
        Some("org.eboardd.Bridge1"),
        format!("/org/eboardd/Bridge1/Board/{id}").as_str(),
        Some("org.eboardd.Bridge1.Board"),
        method,
        args,
    )
    .await
    .unwrap_or_else(|e| panic!("{method}: {e}"));
}

/// A still board two move orders explain (b2-b3 ...c4-c3 b3-b4, read with no press between:
/// b2-b4 with the reply made during it reads the same): after 2 s the arbiter's page says so
/// with both orders, and `ResolveGap` with one of them clears it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_board_page_shows_the_question_a_still_board_leaves_and_its_answer() {
    use eboard_sim::Action;
    use shakmaty::{CastlingMode, Chess, Position, fen::Fen};
    let rig = Rig::start(&["web.q1"], &[]).await;
    rig.wait_ready(&["web_q1"]).await;
    let fen = "4k3/8/8/8/2p5/8/1P6/4K3 w - - 0 1";
    let pos: Chess = fen
        .parse::<Fen>()
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap();
    board_call(&rig.conn, "web_q1", "SetPosition", &(fen,)).await;
    let sim = &rig.sims[0];
    sim.act(Action::SetPosition(pos.board().clone()))
        .await
        .expect("set up");
    sim.sleep(1_500).await;
    let white = shakmaty::Piece::from_char('P').unwrap();
    let black = shakmaty::Piece::from_char('p').unwrap();
    for (from, to, piece) in [
        (Square::B2, Square::B3, white),
        (Square::C4, Square::C3, black),
        (Square::B3, Square::B4, white),
    ] {
        sim.lift(from).await.unwrap();
        sim.sleep(60).await;
        sim.place(to, piece).await.unwrap();
        sim.sleep(80).await;
    }

    let mut browser = Browser::launch().await;
    browser.size(1920, 1080).await;
    browser.goto(&rig.serve.url("/board/web_q1")).await;
    browser
        .wait_for(
            "the question for the arbiter",
            "[...document.querySelectorAll('.alert')].some(a => \
               a.textContent.includes('2 move orders explain it') && \
               a.textContent.includes('[b2b3 c4c3 b3b4]') && \
               a.textContent.includes('[b2b4 c4c3]'))",
        )
        .await;
    browser.screenshot("board-question.png").await;
    browser.size(390, 844).await;
    let fits = browser
        .eval("document.documentElement.scrollWidth <= window.innerWidth")
        .await;
    browser.screenshot("board-question-phone.png").await;
    assert_eq!(fits, true, "the question fits a phone");

    board_call(
        &rig.conn,
        "web_q1",
        "ResolveGap",
        &(vec!["b2b3", "c4c3", "b3b4"],),
    )
    .await;
    browser
        .wait_for(
            "the answer",
            "![...document.querySelectorAll('.alert')].some(a => a.textContent.includes('move orders')) && \
             document.querySelectorAll('ol.moves li').length >= 2",
        )
        .await;
    browser.screenshot("board-answered.png").await;
}

/// The hall shows each Bluetooth board's battery on its card and warns the operator below
/// 20 %; a USB board shows none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hall_shows_the_battery_and_warns_below_20_percent() {
    let dir = tempfile::tempdir().expect("temp dir");
    let names = ["web.bt1", "web.bt2", "web.usb"];
    let (sims, ports) = common::rig::spawn_sims_with(dir.path(), &names, |i| match i {
        0 => eboard_sim::bluetooth_board(15),
        1 => eboard_sim::bluetooth_board(80),
        _ => eboard_sim::BoardOptions::default(),
    })
    .await;
    let bus = common::Bus::start(dir.path()).await;
    let _daemon = web_support::spawn_daemon(&bus, dir.path(), &ports).await;
    let serve = web_support::Serve::start(&bus.address, &[]).await;
    let mut browser = Browser::launch().await;
    browser.size(1920, 1080).await;
    browser.goto(&serve.url("/")).await;
    let card = |id: &str| format!("document.querySelector('.card[data-board=\"{id}\"]')");
    browser
        .wait_for(
            "the low battery warned on its card",
            &format!(
                "{c}?.querySelector('.battery.low')?.textContent.includes('15%') && \
                 {c}.querySelector('.alert.warn')?.textContent.includes('Battery low')",
                c = card("web_bt1")
            ),
        )
        .await;
    browser
        .wait_for(
            "the other battery shown quietly",
            &format!(
                "{c}?.querySelector('.battery')?.textContent.includes('80%')",
                c = card("web_bt2")
            ),
        )
        .await;
    let quiet = browser
        .eval(&format!(
            "{c}.querySelector('.battery.low') === null && \
             ![...{c}.querySelectorAll('.alert')].some(a => a.textContent.includes('Battery'))",
            c = card("web_bt2")
        ))
        .await;
    assert_eq!(quiet, true, "80 % is no warning");
    browser
        .wait_for(
            "the USB board's card",
            &format!("{c} !== null", c = card("web_usb")),
        )
        .await;
    let none = browser
        .eval(&format!(
            "{c}.querySelector('.battery') === null",
            c = card("web_usb")
        ))
        .await;
    assert_eq!(none, true, "a USB board has no battery to show");
    browser.screenshot("hall-battery.png").await;
    // The board page says which board it is and its battery.
    browser.goto(&serve.url("/board/web_bt1")).await;
    browser
        .wait_for(
            "the model and the battery among the board's facts",
            "document.body.textContent.includes('DGT Bluetooth') && \
             document.body.textContent.includes('Battery low')",
        )
        .await;
    browser.screenshot("board-battery.png").await;
    drop(sims);
}

/// A board without a clock — a Millennium ChessLink board, a DGT board with none on its
/// cable — shows no clocks on the hall, the board page or the overlay (not two grey 0:00.0
/// that read as flags fallen), beside a DGT board whose clocks show; and the clocks of a
/// board appear, with no reload, once a clock reports through it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_board_without_a_clock_shows_none_until_a_clock_reports() {
    use eboard_core::chesslink::{AutoReport, settings::AUTO_REPORT};
    use eboard_sim::chesslink::{ChessLinkSim, ChessLinkSimOptions};
    use eboard_sim::{BoardOptions, ClockPresence};
    let dir = tempfile::tempdir().expect("temp dir");
    let with_clock = common::sim::sim_board(dir.path(), "clk", 1.0, BoardOptions::default()).await;
    let no_clock = BoardOptions {
        clock: ClockPresence::Absent,
        ..BoardOptions::default()
    };
    let bare = common::sim::sim_board(dir.path(), "bare", 1.0, no_clock).await;
    let cl = ChessLinkSim::spawn(ChessLinkSimOptions {
        link: Some(dir.path().join("cl")),
        ..ChessLinkSimOptions::default()
    })
    .await
    .expect("the simulated ChessLink board");
    let config = dir.path().join("eboardd.toml");
    let port = |name: &str| dir.path().join(name).display().to_string();
    std::fs::write(
        &config,
        format!(
            "[[board]]\nname = \"clk\"\nport = \"{}\"\nnumber = 1\n\n\
             [[board]]\nname = \"bare\"\nport = \"{}\"\nnumber = 2\n\n\
             [[board]]\nname = \"cl\"\nport = \"{}\"\nnumber = 3\nprotocol = \"chesslink\"\n",
            port("clk"),
            port("bare"),
            port("cl")
        ),
    )
    .unwrap();
    let bus = common::Bus::start(dir.path()).await;
    let mut daemon =
        common::Daemon::spawn(&bus, dir.path(), &["--config", config.to_str().unwrap()]);
    daemon.wait_for_name(&bus.client().await).await;
    cl.wait_for_option(AUTO_REPORT, AutoReport::OnChange.code(), common::WAIT)
        .await
        .expect("the daemon sets the ChessLink board's reports");
    let serve = web_support::Serve::start(&bus.address, &[]).await;
    // What the feed says of each board before any page looks: the pages must follow it.
    let boards = |want: &'static str| {
        let serve = &serve;
        async move {
            common::within(common::WAIT * 2, want, async {
                loop {
                    let all = serve.json("/api/boards").await;
                    let by = |id: &str| {
                        all.as_array()
                            .unwrap()
                            .iter()
                            .find(|b| b["Id"] == id)
                            .cloned()
                            .unwrap_or_default()
                    };
                    let (clk, bare, cl) = (by("clk"), by("bare"), by("cl"));
                    let up = [&clk, &bare, &cl].iter().all(|b| b["Connected"] == true);
                    let done = match want {
                        "one clock" => {
                            clk["ClockConnected"] == true
                                && bare["BoardModel"] == "dgt"
                                && cl["BoardModel"] == "chesslink"
                        }
                        _ => bare["ClockConnected"] == true,
                    };
                    if up && done {
                        return (clk, bare, cl);
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            })
            .await
        }
    };
    let (_, bare_props, cl_props) = boards("one clock").await;
    for (id, props) in [("bare", &bare_props), ("cl", &cl_props)] {
        assert_eq!(props["ClockConnected"], false, "{id}: {props}");
        assert_eq!(props["ClockModel"], "", "{id}: {props}");
        assert_eq!(props["WhiteTimeMs"], 0, "{id}: {props}");
        assert_eq!(props["BlackTimeMs"], 0, "{id}: {props}");
    }

    let mut browser = Browser::launch().await;
    browser.size(1280, 900).await;
    browser.goto(&serve.url("/")).await;
    let clocks =
        |id: &str| format!("document.querySelectorAll('.card[data-board=\"{id}\"] .clock').length");
    let names = |id: &str| {
        format!("document.querySelectorAll('.card[data-board=\"{id}\"] .player .name').length")
    };
    browser
        .wait_for(
            "three cards, the clocked board's with its two clocks",
            &format!(
                "document.querySelectorAll('.card').length === 3 && {} === 2",
                clocks("clk")
            ),
        )
        .await;
    for id in ["bare", "cl"] {
        let shown = browser.eval(&clocks(id)).await;
        assert_eq!(shown, 0, "{id}'s card shows no clock");
        let players = browser.eval(&names(id)).await;
        assert_eq!(players, 2, "{id}'s card still names both players");
    }
    browser.screenshot("hall-mixed-clocks.png").await;

    // The arbiter's page and the overlay of the ChessLink board: no clock either.
    browser.goto(&serve.url("/board/cl")).await;
    browser
        .wait_for(
            "the ChessLink board's page",
            "document.querySelectorAll('.side .player').length === 2 && \
             document.body.textContent.includes('ChessLink')",
        )
        .await;
    let shown = browser
        .eval("document.querySelectorAll('.clock').length")
        .await;
    assert_eq!(
        shown, 0,
        "the board page shows no clock for a clockless board"
    );
    let fact = browser
        .eval(
            "[...document.querySelectorAll('.fact')].find(f => \
               f.querySelector('.k').textContent === 'Clock')?.querySelector('.v').textContent",
        )
        .await;
    assert_eq!(fact, "none", "the board page says there is no clock");
    browser.screenshot("board-chesslink.png").await;
    for (id, want) in [("cl", 0), ("clk", 2)] {
        browser.goto(&serve.url(&format!("/overlay/{id}"))).await;
        browser
            .wait_for(
                "the overlay's plates",
                "document.querySelectorAll('.plate .name').length === 2",
            )
            .await;
        if want > 0 {
            browser
                .wait_for(
                    "the overlay's clocks",
                    "document.querySelectorAll('.plate .clock').length === 2",
                )
                .await;
        }
        let shown = browser
            .eval("document.querySelectorAll('.plate .clock').length")
            .await;
        assert_eq!(shown, want, "the overlay of {id}");
    }
    browser.screenshot("overlay-clocked.png").await;

    // A clock on the bare board's cable (the board plugged back with one): its card shows
    // both clocks as soon as the clock reports, on the page as it stands.
    browser.goto(&serve.url("/")).await;
    browser
        .wait_for(
            "the hall again",
            &format!(
                "document.querySelectorAll('.card').length === 3 && {} === 2",
                clocks("clk")
            ),
        )
        .await;
    browser.eval("window.__same_page = true").await;
    bare.shutdown().await;
    let _clocked = common::sim::sim_board(dir.path(), "bare", 1.0, BoardOptions::default()).await;
    boards("a clock on the bare board").await;
    browser
        .wait_for(
            "the bare board's clocks",
            &format!("window.__same_page === true && {} === 2", clocks("bare")),
        )
        .await;
    let shown = browser.eval(&clocks("cl")).await;
    assert_eq!(shown, 0, "the ChessLink board still shows none");
    browser.screenshot("hall-clock-appeared.png").await;
    drop((with_clock, cl));
    eprintln!("screenshots in {}", screenshot_dir().display());
}
