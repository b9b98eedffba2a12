//! Decoding throughput of the board → host decoder over the real captures (reported by
//! criterion as bytes per second), fed as recorded (one chunk per read()) and as one block.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use eboard_core::dgt::Decoder;
use std::hint::black_box;

fn capture(name: &str) -> Vec<Vec<u8>> {
    let path = format!(
        "{}/tests/data/captures/{name}.inbytes",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    eboard_core::capture::parse(&text)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .into_iter()
        .map(|c| c.bytes)
        .collect()
}

fn decode(c: &mut Criterion) {
    let reads: Vec<Vec<u8>> = ["1", "2"].iter().flat_map(|n| capture(n)).collect();
    let whole: Vec<u8> = reads.concat();
    let mut group = c.benchmark_group("decode");
    group.throughput(Throughput::Bytes(whole.len() as u64));
    group.bench_function("captures_as_read", |b| {
        b.iter(|| {
            let mut decoder = Decoder::new();
            let mut n = 0usize;
            for read in &reads {
                n += decoder.feed(black_box(read)).count();
            }
            n
        })
    });
    group.bench_function("captures_one_block", |b| {
        b.iter(|| {
            let mut decoder = Decoder::new();
            decoder.feed(black_box(&whole)).count()
        })
    });
    group.bench_function("captures_byte_by_byte", |b| {
        b.iter(|| {
            let mut decoder = Decoder::new();
            let mut n = 0usize;
            for byte in whole.chunks(1) {
                n += decoder.feed(black_box(byte)).count();
            }
            n
        })
    });
    group.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
