//! `RejectClaim` and `eboardctl reject-claim` against the real eboardd: an incorrect claim is
//! recorded with the edition's penalty and play goes on; a correct claim (one in `Claims`)
//! and bad arguments are refused with `InvalidArgument`.

mod common;
mod ctl_support;

use common::Setup;
use common::proxies::{error_message, error_name, fresh};
use ctl_support::ctl;

/// White to move, 99 plies without capture or pawn move: every quiet move claims fifty moves.
const FIFTY: &str = "8/8/8/4k3/8/8/2R5/4K3 w - - 99 80";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn incorrect_claims_are_recorded_and_correct_ones_refused() {
    let s = Setup::start(&["--port", "/nonexistent/m", "--rules", "rapid"]).await;
    let b = fresh(&s.conn, "m").await;
    b.set_position(FIFTY).await.unwrap();
    let claims = b.claims().await.unwrap();
    assert!(
        claims.contains(&("white".into(), "fifty-moves".into(), "c2c3".into())),
        "{claims:?}"
    );

    // The claim is in Claims: it is correct, and the arbiter accepts it instead.
    let e = b
        .reject_claim("white", "fifty-moves", "c2c3")
        .await
        .expect_err("a correct claim cannot be rejected");
    assert_eq!(error_name(&e), "org.eboardd.Bridge1.Error.InvalidArgument");
    assert!(error_message(&e).contains("AcceptClaim"), "{e}");

    // White claims a repetition that is not there: rejected, +1 min for Black (rapid, 2023).
    let out = ctl(
        &s.bus.address,
        &["reject-claim", "m", "white", "threefold-repetition"],
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("rejected"), "{out:?}");
    let pgn = b.pgn().await.unwrap().replace('\n', " ");
    assert!(
        pgn.contains("White claims threefold repetition: incorrect (9.5)"),
        "{pgn}"
    );
    assert!(pgn.contains("60 s added to black"), "{pgn}");
    assert_eq!(b.result().await.unwrap(), "*", "play goes on");

    // Bad arguments: named error, exit 1, nothing recorded.
    for args in [
        ["reject-claim", "m", "black", "fifty-moves"], // not to move
        ["reject-claim", "m", "white", "win-on-time"], // not a 9.5 claim
        ["reject-claim", "m", "white", "draw-by-agreement"], // unknown kind
    ] {
        let out = ctl(&s.bus.address, &args).await;
        assert_eq!(out.code, 1, "{args:?}: {out:?}");
        assert!(
            out.stderr
                .contains("org.eboardd.Bridge1.Error.InvalidArgument"),
            "{out:?}"
        );
    }
    let out = ctl(
        &s.bus.address,
        &["reject-claim", "m", "white", "fifty-moves", "e1e5"],
    )
    .await;
    assert_eq!(out.code, 1, "an impossible intended move: {out:?}");
    let after = b.pgn().await.unwrap().replace('\n', " ");
    assert_eq!(
        after.matches("incorrect").count(),
        pgn.matches("incorrect").count()
    );
}
