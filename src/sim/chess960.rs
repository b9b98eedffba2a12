//! Chess960 start positions by number, for the simulator's players setting one up.

/// The back rank of Chess960 start position `n` (0..960, Scharnagl's numbering), White's
/// pieces as upper-case FEN letters from the a-file to the h-file.
pub fn back_rank(mut n: usize) -> [char; 8] {
    let mut rank = [' '; 8];
    rank[(n % 4) * 2 + 1] = 'B';
    n /= 4;
    rank[(n % 4) * 2] = 'B';
    n /= 4;
    let empty = |rank: &[char; 8]| -> Vec<usize> { (0..8).filter(|&i| rank[i] == ' ').collect() };
    let q = n % 6;
    n /= 6;
    rank[empty(&rank)[q]] = 'Q';
    const KNIGHTS: [(usize, usize); 10] = [
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (1, 2),
        (1, 3),
        (1, 4),
        (2, 3),
        (2, 4),
        (3, 4),
    ];
    let (a, b) = KNIGHTS[n];
    let e = empty(&rank);
    rank[e[a]] = 'N';
    rank[e[b]] = 'N';
    let e = empty(&rank);
    rank[e[0]] = 'R';
    rank[e[1]] = 'K';
    rank[e[2]] = 'R';
    rank
}
