//! The 81 LEDs at the corners of the squares, and the `L` command's pattern.
//!
//! The LEDs sit on a 9 × 9 grid; each square has four, shared with its neighbours. LED
//! numbers follow the status report's [`WireOrder`]: in the maker's order (A8 first) LED 1 is
//! at the a8 corner, 9 at a1, 73 at h8, 81 at h1; in the order the drivers use (H1 first)
//! LED N is the maker's 82 − N. A board turned round turns both together.
//!
//! Each LED gets an 8-bit code played bit 7 first, one bit per slot of the pattern's slot
//! time (units of 4.096 ms), repeating every 8 slots: `FF` is steady, `00` off, `F0`/`0F` two
//! blinks in opposite phase.

use shakmaty::Square;

use super::squares::WireOrder;

/// LEDs on the board.
pub const LED_COUNT: usize = 81;

/// Milliseconds per unit of the slot time, ×1000 (4.096 ms).
pub const SLOT_UNIT_US: u32 = 4_096;

/// The slot time the drivers in use send (`0x20`: 131 ms a slot, about a second a cycle).
pub const DEFAULT_SLOT_TIME: u8 = 0x20;

/// A steady LED.
pub const STEADY: u8 = 0xFF;
/// The codes a move is shown with: its origin and its destination blink in opposite phase,
/// so two squares that share corners are told apart.
pub const MOVE_FROM: u8 = 0xF0;
pub const MOVE_TO: u8 = 0x0F;

/// What the `L` command sets: a code for every LED and the slot time.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct LedPattern {
    /// Units of 4.096 ms per bit of each code.
    pub slot_time: u8,
    /// Index 0 is LED 1.
    pub codes: [u8; LED_COUNT],
}

impl Default for LedPattern {
    fn default() -> Self {
        LedPattern::dark(DEFAULT_SLOT_TIME)
    }
}

impl LedPattern {
    /// Every LED off.
    pub const fn dark(slot_time: u8) -> LedPattern {
        LedPattern {
            slot_time,
            codes: [0; LED_COUNT],
        }
    }

    /// Whether every LED is off.
    pub fn is_dark(&self) -> bool {
        self.codes.iter().all(|&c| c == 0)
    }

    /// The slot time in microseconds.
    pub fn slot_us(&self) -> u32 {
        u32::from(self.slot_time) * SLOT_UNIT_US
    }

    /// The four LEDs (0-based, index 0 = LED 1) at the corners of `square`.
    pub fn corners(square: Square, order: WireOrder) -> [usize; 4] {
        let file = usize::from(square.file());
        let rank = usize::from(square.rank());
        // The maker's numbering: LED 9·i + j + 1, grid line i from the a-file edge, j from
        // the 8th-rank edge.
        let maker = [
            9 * file + (7 - rank),
            9 * file + (8 - rank),
            9 * (file + 1) + (7 - rank),
            9 * (file + 1) + (8 - rank),
        ];
        match order {
            WireOrder::A8First => maker,
            WireOrder::H1First => maker.map(|led| LED_COUNT - 1 - led),
        }
    }

    /// Light `square`'s four corners with `code`, ORed into what shares a corner already.
    pub fn light(&mut self, square: Square, code: u8, order: WireOrder) {
        for led in LedPattern::corners(square, order) {
            self.codes[led] |= code;
        }
    }

    /// A move shown on its two squares ([`MOVE_FROM`], [`MOVE_TO`]), every other LED off.
    pub fn for_move(from: Square, to: Square, order: WireOrder) -> LedPattern {
        let mut pattern = LedPattern::default();
        pattern.light(from, MOVE_FROM, order);
        pattern.light(to, MOVE_TO, order);
        pattern
    }

    /// Squares steadily on, every other LED off: what the board shows for an illegal
    /// placement's squares.
    pub fn steady(squares: impl IntoIterator<Item = Square>, order: WireOrder) -> LedPattern {
        let mut pattern = LedPattern::default();
        for square in squares {
            pattern.light(square, STEADY, order);
        }
        pattern
    }

    /// The squares whose four corners are all lit. Lit squares two apart on a line complete
    /// the corners of the square between them too: compare codes to tell them apart.
    pub fn lit_squares(&self, order: WireOrder) -> Vec<Square> {
        Square::ALL
            .into_iter()
            .filter(|&sq| {
                LedPattern::corners(sq, order)
                    .iter()
                    .all(|&led| self.codes[led] != 0)
            })
            .collect()
    }

    /// The code of each of `square`'s corners.
    pub fn corner_codes(&self, square: Square, order: WireOrder) -> [u8; 4] {
        LedPattern::corners(square, order).map(|led| self.codes[led])
    }
}

impl std::fmt::Debug for LedPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lit: Vec<String> = self
            .codes
            .iter()
            .enumerate()
            .filter(|(_, c)| **c != 0)
            .map(|(i, c)| format!("{}:{c:02X}", i + 1))
            .collect();
        write!(
            f,
            "LedPattern(slot {:#04x}; {})",
            self.slot_time,
            lit.join(" ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Square::*;

    fn numbers(square: Square, order: WireOrder) -> [usize; 4] {
        let mut n = LedPattern::corners(square, order).map(|i| i + 1);
        n.sort_unstable();
        n
    }

    #[test]
    fn corners_match_the_fact_sheet() {
        let maker = WireOrder::A8First;
        let drivers = WireOrder::H1First;
        assert_eq!(numbers(A8, maker), [1, 2, 10, 11]);
        assert_eq!(numbers(H1, maker), [71, 72, 80, 81]);
        assert_eq!(numbers(E2, maker), [43, 44, 52, 53]);
        assert_eq!(numbers(E4, maker), [41, 42, 50, 51]);
        assert_eq!(numbers(A8, drivers), [71, 72, 80, 81]);
        assert_eq!(numbers(H1, drivers), [1, 2, 10, 11]);
        assert_eq!(numbers(E2, drivers), [29, 30, 38, 39]);
        assert_eq!(numbers(E4, drivers), [31, 32, 40, 41]);
        // LED 9 at the a1 corner, 73 at h8 in the maker's numbering.
        assert!(numbers(A1, maker).contains(&9));
        assert!(numbers(H8, maker).contains(&73));
    }

    #[test]
    fn every_led_is_a_corner_and_every_square_has_four() {
        for order in [WireOrder::H1First, WireOrder::A8First] {
            let mut seen = [0u8; LED_COUNT];
            for sq in Square::ALL {
                for led in LedPattern::corners(sq, order) {
                    seen[led] += 1;
                }
                assert_eq!(LedPattern::steady([sq], order).lit_squares(order), vec![sq]);
                // The board turned round: the same LEDs light the square turned round.
                assert_eq!(
                    numbers(sq, order),
                    numbers(sq.flip_vertical().flip_horizontal(), order.turned())
                );
            }
            assert!(seen.iter().all(|&n| (1..=4).contains(&n)));
            assert_eq!(seen.iter().map(|&n| usize::from(n)).sum::<usize>(), 256);
        }
    }

    #[test]
    fn a_move_blinks_in_opposite_phase() {
        let order = WireOrder::H1First;
        let pattern = LedPattern::for_move(E2, E4, order);
        assert_eq!(pattern.corner_codes(E2, order), [MOVE_FROM; 4]);
        assert_eq!(pattern.corner_codes(E4, order), [MOVE_TO; 4]);
        // e3 shares its corners with both: lit, but with neither square's code alone.
        assert_eq!(pattern.lit_squares(order), vec![E2, E3, E4]);
        assert_eq!(pattern.codes.iter().filter(|&&c| c != 0).count(), 8);
        // Adjacent squares share two corners, which show both codes.
        let near = LedPattern::for_move(E2, E3, order);
        assert_eq!(near.codes.iter().filter(|&&c| c == STEADY).count(), 2);
        assert!(LedPattern::default().is_dark());
        assert_eq!(LedPattern::default().slot_us(), 131_072);
    }
}
