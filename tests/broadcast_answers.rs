//! `eboardctl broadcast` believes only a well-formed answer: the real eboardd on a private
//! bus with a simulated board, the broadcaster pushing to a stand-in of lichess's endpoint.
//! The stand-in first answers every push with HTTP 200 and a captive portal's page, then
//! with a 302 to a place on the stand-in that would answer like lichess, then like lichess.
//! The status (`eboardctl status`) and the terminal say each failure, the redirect is never
//! followed, and only lichess's answer shows the game as taken.

mod broadcast_support;
mod common;
mod ctl_support;

use std::time::Duration;

use broadcast_support::{Broadcaster, Lichess, Reply, ctl_in, token_file};
use common::events::Events;
use common::proxies::board;
use common::rig::{SimRig, ready_to_play};

const ROUND_ID: &str = "aBcD1234";
/// Generous: a failed push is retried after a backoff of seconds, on a busy machine.
const LONG: Duration = Duration::from_secs(90);

/// What a hotel's Wi-Fi answers to everything before its terms are accepted.
const PORTAL: &str = "<html><head><title>Welcome to Hotel Wi-Fi</title></head></html>";

/// Polls `eboardctl status BOARD` until its output holds `want`; returns it.
async fn within_status(rig: &SimRig, id: &str, want: &str) -> String {
    common::within(LONG, &format!("status {id} to say {want:?}"), async {
        loop {
            let out = ctl_in(rig.dir.path(), rig.address(), &["status", id]).await;
            assert_eq!(out.code, 0, "{out:?}");
            if out.stdout.contains(want) {
                return out.stdout;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await
}

/// Many replies of one kind: the answer stays the same however often the push is retried.
fn always(reply: Reply) -> Vec<Reply> {
    vec![reply; 1_000]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_garbage_200_and_a_redirect_are_failures_the_status_says() {
    let rig = SimRig::start(&["b1"], &[]).await;
    let conn = rig.bus.client().await;
    let mut ev = Events::start(&conn, "b1").await;
    ready_to_play(&rig.sims[0], &mut ev).await;
    let tags: std::collections::HashMap<&str, &str> = [
        ("Event", "City Open"),
        ("Round", "5.1"),
        ("White", "Alpha, Ann"),
        ("Black", "Beta, Bob"),
    ]
    .into_iter()
    .collect();
    board(&conn, "b1").await.set_tags(tags).await.unwrap();

    let lichess = Lichess::start().await;
    lichess.script(&always(Reply::Body(200, PORTAL)));
    let token = token_file(rig.dir.path(), 0o600);
    let caster = Broadcaster::spawn(
        rig.address(),
        rig.dir.path(),
        &[
            "--round",
            ROUND_ID,
            "--token-file",
            token.to_str().unwrap(),
            "--url",
            &lichess.url,
        ],
        &[],
    );

    // A 200 whose body is a portal's page: not taken.
    let status = within_status(&rig, "b1", "not taken: HTTP 200").await;
    assert!(status.contains("Welcome to Hotel Wi-Fi"), "{status}");
    assert!(!status.contains("on lichess"), "{status}");
    lichess
        .wait_for("a push retried after the portal's page", LONG, |r| {
            r.answered == 200 && r.path.ends_with("/push")
        })
        .await;

    // A redirect: not followed, not taken, and where it pointed is said.
    lichess.clear_script();
    lichess.script(&always(Reply::Redirect(302)));
    let status = within_status(&rig, "b1", "HTTP 302").await;
    assert!(
        status.contains("not taken") && status.contains("not followed"),
        "{status}"
    );
    assert!(status.contains(Lichess::ELSEWHERE), "{status}");
    assert!(!status.contains("on lichess"), "{status}");

    // Then lichess itself answers: the game is taken.
    lichess.clear_script();
    let status = within_status(&rig, "b1", "✓ board 1").await;
    assert!(!status.contains("not taken"), "{status}");
    let requests = lichess.requests();
    assert!(
        requests.iter().all(|r| r.path != Lichess::ELSEWHERE),
        "a redirect was followed: {:?}",
        requests.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    assert!(requests.iter().any(|r| r.answered == 302));

    let output = common::within(LONG, "the terminal to say the push was taken", async {
        loop {
            let output = caster.output();
            if output.contains("lichess took the push") {
                return output;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(
        output.contains("not taken: HTTP 200") && output.contains("HTTP 302"),
        "the terminal says both failures: {output}"
    );
}
