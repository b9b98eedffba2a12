//! Copying the board's properties into the snapshot the bus serves, reusing the snapshot's
//! memory: a board announces a change several times a second (each clock reading), and a
//! fresh copy of the whole view each time allocated the PGN text, every move of the `Moves`
//! list and every other string again, only to free the copy before it a moment later.

use eboard_core::contract::BoardProps;

/// Makes `into` equal to `from`, field by field, each string and list copied into the
/// memory `into` already holds (`clone_from`). The destructuring names every field: a
/// property added to the contract's table does not compile here until it is copied too.
pub fn copy_props(into: &mut BoardProps, from: &BoardProps) {
    let BoardProps {
        name,
        number,
        variant,
        port,
        connected,
        serial_number,
        firmware_version,
        board_model,
        clock_model,
        battery,
        rules,
        edition,
        state,
        fen,
        placement,
        in_sync,
        turn,
        moves,
        pgn,
        clock_connected,
        white_time_ms,
        black_time_ms,
        clock_running,
        claims,
        pending_illegal,
        gap,
        illegal_moves,
        result,
        termination,
    } = from;
    into.name.clone_from(name);
    into.number = *number;
    into.variant.clone_from(variant);
    into.port.clone_from(port);
    into.connected = *connected;
    into.serial_number.clone_from(serial_number);
    into.firmware_version.clone_from(firmware_version);
    into.board_model.clone_from(board_model);
    into.clock_model.clone_from(clock_model);
    into.battery.clone_from(battery);
    into.rules.clone_from(rules);
    into.edition.clone_from(edition);
    into.state.clone_from(state);
    into.fen.clone_from(fen);
    into.placement.clone_from(placement);
    into.in_sync = *in_sync;
    into.turn.clone_from(turn);
    into.moves.clone_from(moves);
    into.pgn.clone_from(pgn);
    into.clock_connected = *clock_connected;
    into.white_time_ms = *white_time_ms;
    into.black_time_ms = *black_time_ms;
    into.clock_running.clone_from(clock_running);
    into.claims.clone_from(claims);
    into.pending_illegal.clone_from(pending_illegal);
    into.gap.clone_from(gap);
    into.illegal_moves.clone_from(illegal_moves);
    into.result.clone_from(result);
    into.termination.clone_from(termination);
}

#[cfg(test)]
mod tests {
    use super::*;
    use eboard_core::contract::{BOARD_PROPERTIES, Claim};

    #[test]
    fn a_copy_equals_its_source_whatever_it_overwrites() {
        let mut from = BoardProps::default();
        from.texts_mut()
            .enumerate()
            .for_each(|(i, s)| *s = format!("text {i}"));
        from.number = 7;
        from.connected = true;
        from.in_sync = true;
        from.clock_connected = true;
        from.white_time_ms = 1;
        from.black_time_ms = 2;
        from.battery = (55, true).into();
        from.illegal_moves = (1, 2).into();
        from.moves = vec!["e4".into(), "e5".into()];
        from.claims = vec![Claim {
            player: "white".into(),
            kind: "draw".into(),
            detail: String::new(),
        }];
        let mut into = BoardProps::default();
        into.moves = vec!["d4".into(); 5];
        into.pgn = "an older and longer text".repeat(10);
        copy_props(&mut into, &from);
        assert_eq!(into, from);
        // Every property differs from the default: none was left out of the copy.
        let changed = BoardProps::default().changes(&into);
        assert_eq!(changed.len(), BOARD_PROPERTIES.len());
        copy_props(&mut into, &BoardProps::default());
        assert_eq!(into, BoardProps::default());
    }
}
