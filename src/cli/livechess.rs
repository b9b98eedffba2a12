//! `eboardctl livechess`: the LiveChess-compatible local API (contract section 8) fed from
//! the local bus.

use std::net::SocketAddr;

use tokio::sync::mpsc;

use crate::bridge::livechess::{self, DEFAULT_LISTEN, Options};
use crate::cli::Globals;
use crate::client::error::CtlError;
use crate::client::{HallUpdate, watch_bus};

/// The arguments of `livechess`.
#[derive(Debug, Clone, clap::Args)]
pub struct LiveChessArgs {
    /// Address and port to serve on (LiveChess's is 127.0.0.1:1982).
    #[arg(long, default_value = DEFAULT_LISTEN, value_name = "ADDR:PORT")]
    pub listen: SocketAddr,
    /// Let browser pages from ORIGIN (`scheme://host[:port]`) in, besides https://lichess.org
    /// and https://www.chess.com; repeatable.
    #[arg(long = "allow-origin", value_name = "ORIGIN", value_parser = parse_origin)]
    pub allow_origin: Vec<String>,
    /// Let clients change boards: `setup` restarts a game from a position and `flip` turns a
    /// board round. Only on a player's own board (playing on lichess or chess.com); off, they
    /// are refused and the game untouched.
    #[arg(long = "allow-setup")]
    pub allow_setup: bool,
}

/// An origin as browsers send it: a scheme, `://`, a host and an optional port, no path.
fn parse_origin(text: &str) -> Result<String, String> {
    let origin = text.trim_end_matches('/');
    let ok = origin.split_once("://").is_some_and(|(scheme, rest)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            && !rest.is_empty()
            && !rest.contains(['/', '?', '#', ' '])
    });
    if ok {
        Ok(origin.to_owned())
    } else {
        Err(format!(
            "{text:?} is not an origin: write it as the browser sends it, e.g. https://example.org \
             or http://127.0.0.1:8080"
        ))
    }
}

/// How many updates may wait between the source and the bridge.
const UPDATES: usize = 1024;

/// Runs the bridge until SIGINT/SIGTERM, following the daemon as it comes and goes.
pub fn run(globals: &Globals, args: &LiveChessArgs) -> Result<(), CtlError> {
    let runtime = crate::cli::bridge_runtime()?;
    let opts = Options {
        listen: args.listen,
        allow_origins: args.allow_origin.clone(),
        bus: globals.bus.clone(),
        allow_setup: args.allow_setup,
    };
    runtime.block_on(async {
        let (tx, rx) = mpsc::channel::<HallUpdate>(UPDATES);
        tokio::spawn(watch_bus(globals.bus.clone(), tx));
        crate::bridge::run_until_signal(opts.listen, |listener, stop| {
            livechess::serve(listener, opts, rx, stop)
        })
        .await
        .map_err(|e| CtlError::Other(e.to_string()))
    })
}

#[cfg(test)]
mod tests {
    use super::parse_origin;

    #[test]
    fn origins_are_checked() {
        assert_eq!(
            parse_origin("https://example.org/"),
            Ok("https://example.org".into())
        );
        assert_eq!(
            parse_origin("http://127.0.0.1:8080"),
            Ok("http://127.0.0.1:8080".into())
        );
        for bad in ["example.org", "https://", "https://a.org/page", "://x"] {
            assert!(parse_origin(bad).is_err(), "{bad}");
        }
    }
}
